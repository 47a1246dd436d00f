// Trials leave the shared model as they found it, on every way out.
#include "queueing/gang_trial.h"

#include <optional>

#include "gtest/gtest.h"
#include "queueing/gang_placer.h"
#include "queueing/placement_stage.h"
#include "tests/queueing/stage_builders.h"

namespace gpusched {
namespace {

class GangTrialTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.UpsertNode(Dgx("dgx-0"));
    model_.UpsertNode(Dgx("dgx-1"));
    auto quota = QuotaTree::Build(TwoTeams());
    ASSERT_TRUE(quota.ok());
    quota_.emplace(*std::move(quota));
    // Something placed already, so "unchanged" is not "empty".
    running_ = SinglePodWorkload("team-b", "running", 3);
    AdmitOn(model_, *quota_, running_, "dgx-0", 0);
  }

  // A placement for `w` found by the gang placer, as admission finds one.
  std::optional<PlacementTrial> Place(Workload& w) {
    GangPlacementRequest request{
        .owner = w.key, .members = w.MembersToAdmit(), .weights = &weights_};
    GangPlacement placement = PlaceGang(model_, request);
    if (!placement.placed()) return std::nullopt;
    return PlacementTrial(&model_, w, std::move(placement.placements), {},
                          "h100");
  }

  ClusterModel model_;
  ScoringWeights weights_ = ScoringWeights::Defaults();
  std::optional<QuotaTree> quota_;
  Workload running_;
};

TEST_F(GangTrialTest, DroppedPlacementTrialLeavesModelUnchanged) {
  const std::string before = Snapshot(model_);
  Workload w = SinglePodWorkload("team-a", "job", 8);
  // Left by an early return: the trial goes out of scope uncommitted.
  auto try_and_give_up = [&]() -> bool {
    std::optional<PlacementTrial> trial = Place(w);
    if (!trial) return false;
    EXPECT_NE(Snapshot(model_), before);  // it did place the member
    return false;
  };
  EXPECT_FALSE(try_and_give_up());
  EXPECT_EQ(Snapshot(model_), before);
}

TEST_F(GangTrialTest, CommittedPlacementTrialStays) {
  Workload w = SinglePodWorkload("team-a", "job", 8);
  PlacementTrial::Committed committed;
  {
    std::optional<PlacementTrial> trial = Place(w);
    ASSERT_TRUE(trial.has_value());
    committed = std::move(*trial).Commit();
  }
  ASSERT_EQ(committed.placements.size(), 1u);
  EXPECT_NE(model_.FindPodByUid(PodUid(w.pods.begin()->second)), nullptr);
  EXPECT_EQ(committed.flavors, "h100");
}

TEST_F(GangTrialTest, MovedPlacementTrialUndoesOnce) {
  const std::string before = Snapshot(model_);
  Workload w = SinglePodWorkload("team-a", "job", 8);
  {
    std::optional<PlacementTrial> trial = Place(w);
    ASSERT_TRUE(trial.has_value());
    PlacementTrial moved = *std::move(trial);
    trial.reset();  // the moved-from trial owns nothing
    EXPECT_NE(model_.FindPodByUid(PodUid(w.pods.begin()->second)), nullptr);
  }
  EXPECT_EQ(Snapshot(model_), before);
}

TEST_F(GangTrialTest, VictimTrialFailingHalfWayPutsEverythingBack) {
  Workload a = SinglePodWorkload("team-a", "a", 4);
  Workload b = SinglePodWorkload("team-a", "b", 4);
  AdmitOn(model_, *quota_, a, "dgx-1", 0);
  AdmitOn(model_, *quota_, b, "dgx-1", 4);
  const std::string before = Snapshot(model_);
  const FrAmounts usage_before = quota_->Borrowed("team-a");
  const FlavorResource gpu{"h100", "nvidia.com/gpu"};
  const int64_t used_before = quota_->Usage("team-a", gpu);
  auto trial_that_fails = [&]() {
    VictimTrial trial(&model_, &*quota_);
    trial.TakeOff(a);
    trial.TakeOff(b);
    trial.PutBack(0);       // a back, b still off
    trial.TakeOffAgain(0);  // a off again
    EXPECT_EQ(model_.FindNode("dgx-1")->pod_count(), 0);
    EXPECT_EQ(quota_->Usage("team-a", {"h100", "nvidia.com/gpu"}), 0);
    // ... and the trial gives up here.
  };
  trial_that_fails();
  EXPECT_EQ(Snapshot(model_), before);
  EXPECT_EQ(quota_->Usage("team-a", {"h100", "nvidia.com/gpu"}), used_before);
  EXPECT_EQ(quota_->Borrowed("team-a"), usage_before);
  EXPECT_EQ(a.placements.size(), 1u);
  EXPECT_EQ(b.charged.at({"h100", "nvidia.com/gpu"}), 4);
}

TEST_F(GangTrialTest, PlacementInsideVictimTrialIsUndoneFirst) {
  Workload a = SinglePodWorkload("team-a", "a", 8);
  AdmitOn(model_, *quota_, a, "dgx-1", 0);
  const std::string before = Snapshot(model_);
  Workload big = SinglePodWorkload("team-a", "big", 8);
  {
    VictimTrial victims(&model_, &*quota_);
    victims.TakeOff(a);
    // Fits only with `a` gone; placed on dgx-1, where `a` must go back.
    std::optional<PlacementTrial> trial = Place(big);
    ASSERT_TRUE(trial.has_value());
    EXPECT_EQ(trial->placements().begin()->second.node, "dgx-1");
  }  // the placement is dropped before the victims go back
  EXPECT_EQ(Snapshot(model_), before);
}

TEST(PlacementStageTest, RemembersFailuresUntilCapacityIsFreed) {
  ClusterModel model;
  model.UpsertNode(Dgx("dgx-0"));
  auto quota = QuotaTree::Build(TwoTeams());
  ASSERT_TRUE(quota.ok());
  Workload running = SinglePodWorkload("team-b", "running", 4);
  AdmitOn(model, *quota, running, "dgx-0", 0);
  ScoringWeights weights = ScoringWeights::Defaults();
  GangPlacementStage stage;
  Workload w = SinglePodWorkload("team-a", "eight", 8);
  GangPlacementRequest request{
      .owner = w.key, .members = w.MembersToAdmit(), .weights = &weights};
  GangPlacement first = stage.PlaceOrRecall(model, w.key, "shape", request);
  ASSERT_FALSE(first.placed());
  GangPlacement again =
      stage.PlaceOrRecall(model, "team-a/other", "shape", request);
  EXPECT_FALSE(again.placed());
  EXPECT_EQ(again.reason, "as for " + w.key + ": " + first.reason);
  EXPECT_EQ(stage.searches(), 2);
  // The running pod leaves: until told that capacity was freed, the stage
  // recalls the failure; then it searches again.
  model.RemovePod(PodUid(running.pods.begin()->second));
  EXPECT_FALSE(stage.PlaceOrRecall(model, w.key, "shape", request).placed());
  stage.ForgetCapacityFacts();
  EXPECT_TRUE(stage.PlaceOrRecall(model, w.key, "shape", request).placed());
}

TEST(PlacementStageTest, PreemptionTrialsAreNeitherRecalledNorRemembered) {
  ClusterModel model;
  model.UpsertNode(Dgx("dgx-0"));
  ScoringWeights weights = ScoringWeights::Defaults();
  GangPlacementStage stage;
  Workload w = SinglePodWorkload("team-a", "huge", 16);
  GangPlacementRequest request{
      .owner = w.key, .members = w.MembersToAdmit(), .weights = &weights};
  {
    GangPlacementStage::PreemptionTrialScope scope(&stage);
    EXPECT_TRUE(stage.in_preemption_trial());
    EXPECT_FALSE(stage.PlaceOrRecall(model, w.key, "shape", request).placed());
  }
  EXPECT_FALSE(stage.in_preemption_trial());
  // Nothing remembered: the reason is the search's own, not "as for".
  GangPlacement after =
      stage.PlaceOrRecall(model, "team-a/other", "shape", request);
  EXPECT_EQ(after.reason.find("as for"), std::string::npos) << after.reason;
}

TEST(PlacementStageTest, CapacityBoundRefusesWhatCannotFitEvenWithVictimsGone) {
  ClusterModel model;
  model.UpsertNode(Dgx("dgx-0"));
  auto quota = QuotaTree::Build(TwoTeams());
  ASSERT_TRUE(quota.ok());
  Workload v = SinglePodWorkload("team-b", "v", 4);
  AdmitOn(model, *quota, v, "dgx-0", 0);
  GangPlacementStage stage;
  Workload eight = SinglePodWorkload("team-a", "eight", 8);
  Workload nine = SinglePodWorkload("team-a", "nine", 9);
  EXPECT_FALSE(stage.CouldHold(model, eight.MembersToAdmit(), {}));
  EXPECT_TRUE(stage.CouldHold(model, eight.MembersToAdmit(), {&v}));
  EXPECT_FALSE(stage.CouldHold(model, nine.MembersToAdmit(), {&v}));
}

}  // namespace
}  // namespace gpusched
