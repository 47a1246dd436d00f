// A gang's members that succeeded count towards it while their pods are in
// the API, through an eviction too, as Kueue counts a pod group's Succeeded
// pods towards kueue.x-k8s.io/pod-group-total-count (found by the arena:
// an evicted group's replacements waited for good).
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

class SucceededMembersTest : public EngineFixture {
 protected:
  const Workload& W(const std::string& key) {
    return engine_->workloads().at(key);
  }
  // train: 3 pods x 2 GPUs, admitted; train-0 succeeds, train-1 and
  // train-2 are deleted (evicted or failed).
  void RunTrainUntilItsRunnersAreGone() {
    Start(TwoTeams());
    SubmitGang("team-a", "train", 3, 2, 0);
    engine_->Schedule(0);
    ASSERT_EQ(W("team-a/train").state, Workload::State::kAdmitted);
    ASSERT_EQ(engine_->Finish("team-a/train-0", 1000),
              FinishOutcome::kMemberFinished);
    engine_->Delete("team-a/train-1", 2000);
    ASSERT_EQ(engine_->Delete("team-a/train-2", 2000),
              DeleteOutcome::kMemberDeleted);
    engine_->Schedule(2000);
  }
};

TEST_F(SucceededMembersTest, AGangWithoutRunnersWaitsForReplacementsOnly) {
  RunTrainUntilItsRunnersAreGone();
  EXPECT_EQ(engine_->ForgetFinished(0), 0u);
  const Workload& w = W("team-a/train");
  EXPECT_EQ(w.state, Workload::State::kPending);
  EXPECT_EQ(w.reason,
            "waiting for pods: 1 of minMember 3 exist (1 of them succeeded)");
  EXPECT_EQ(model_.pod_count(), 0u);

  // The replacements (new names, same group) make the gang whole again.
  engine_->AddPod(GangPod("team-a", "train", 3, 2, 3), 3000);
  engine_->AddPod(GangPod("team-a", "train", 4, 2, 3), 3000);
  engine_->Schedule(3000);
  EXPECT_EQ(w.state, Workload::State::kAdmitted);
  EXPECT_EQ(w.placements.size(), 2u);
  EXPECT_EQ(model_.pod_count(), 2u);
  EXPECT_EQ(engine_->Finish("team-a/train-3", 4000),
            FinishOutcome::kMemberFinished);
  EXPECT_EQ(engine_->Finish("team-a/train-4", 4000),
            FinishOutcome::kWorkloadFinished);
}

TEST_F(SucceededMembersTest, DeletingASucceededPodTakesItOffItsGang) {
  RunTrainUntilItsRunnersAreGone();
  EXPECT_EQ(engine_->Delete("team-a/train-0", 3000),
            DeleteOutcome::kWorkloadDeleted);
  EXPECT_EQ(engine_->ForgetFinished(0), 1u);
  EXPECT_EQ(engine_->Delete("team-a/train-0", 3000),
            DeleteOutcome::kUnknownKey);

  // Two new pods of the group are two of three now.
  engine_->AddPod(GangPod("team-a", "train", 3, 2, 3), 4000);
  engine_->AddPod(GangPod("team-a", "train", 4, 2, 3), 4000);
  engine_->Schedule(4000);
  EXPECT_EQ(W("team-a/train").state, Workload::State::kPending);
  EXPECT_EQ(W("team-a/train").reason,
            "waiting for pods: 2 of minMember 3 exist");
}

TEST_F(SucceededMembersTest, ANewRunOfAFinishedGangCountsFromNothing) {
  Start(TwoTeams());
  SubmitGang("team-a", "train", 2, 2, 0);
  engine_->Schedule(0);
  engine_->Finish("team-a/train-0", 1000);
  ASSERT_EQ(engine_->Finish("team-a/train-1", 1000),
            FinishOutcome::kWorkloadFinished);
  engine_->AddPod(GangPod("team-a", "train", 2, 2, 2), 2000);
  engine_->Schedule(2000);
  EXPECT_EQ(W("team-a/train").state, Workload::State::kPending);
  EXPECT_TRUE(W("team-a/train").succeeded.empty());
}

// The member's Succeeded update can come after its gang was evicted (the
// eviction raced its finish): it still did its part (seen in the arena).
TEST_F(SucceededMembersTest, AMemberThatSucceedsAfterItsGangsEvictionCounts) {
  Start(TwoTeams());
  SubmitGang("team-a", "train", 3, 2, 0);
  engine_->Schedule(0);
  ASSERT_EQ(W("team-a/train").state, Workload::State::kAdmitted);
  // Its runners go: the gang is short, and evicted after the grace.
  engine_->Delete("team-a/train-1", 1000);
  engine_->Delete("team-a/train-2", 1000);
  engine_->Schedule(1000 + 3'600'000);
  ASSERT_EQ(W("team-a/train").state, Workload::State::kPending);
  // Not over: two of three slots have no pod that succeeded.
  EXPECT_EQ(engine_->Finish("team-a/train-0", 3'601'000),
            FinishOutcome::kMemberFinished);
  EXPECT_EQ(engine_->ForgetFinished(0), 0u);
  engine_->AddPod(GangPod("team-a", "train", 3, 2, 3), 3'602'000);
  engine_->AddPod(GangPod("team-a", "train", 4, 2, 3), 3'602'000);
  // After the evicted gang's back-off.
  engine_->Schedule(3'612'000);
  EXPECT_EQ(W("team-a/train").state, Workload::State::kAdmitted)
      << W("team-a/train").reason;
  EXPECT_EQ(W("team-a/train").placements.size(), 2u);
}

// After a restart the list may bring a succeeded member before or after
// the replacements it makes whole; either way it counts.
TEST_F(SucceededMembersTest, ASucceededPodMetAfterItsPendingMatesCounts) {
  Start(TwoTeams());
  engine_->AddPod(GangPod("team-a", "train", 1, 2, 2), 0);
  engine_->Schedule(0);
  ASSERT_EQ(W("team-a/train").state, Workload::State::kPending);
  Pod done = GangPod("team-a", "train", 0, 2, 2);
  done.phase = PodPhase::kSucceeded;
  engine_->AdoptSucceeded(done);
  engine_->Schedule(1000);
  EXPECT_EQ(W("team-a/train").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/train").placements.size(), 1u);
}

}  // namespace
}  // namespace gpusched
