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
  EXPECT_EQ(engine_->ForgetFinished(), 0u);
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
  EXPECT_EQ(engine_->ForgetFinished(), 1u);
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
