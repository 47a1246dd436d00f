// explain: the one workload's queue, positions, quota arithmetic, nodes
// grouped by answer, and preemption policy.
#include "queueing/workload_explanation.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "queueing/start_forecast.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

class WorkloadExplanationTest : public EngineFixture {
 protected:
  WorkloadExplanation Explain(const std::string& key) {
    absl::StatusOr<WorkloadExplanation> out =
        ExplainWorkload(*engine_, model_, key);
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : WorkloadExplanation{};
  }
};

TEST_F(WorkloadExplanationTest,
       GangWaitingForQuotaShowsTheArithmeticAndFullNodes) {
  Start(TwoTeams(), 2);
  // 12 GPUs, 6 on each node: team-a borrows 4 of team-b's 8.
  SubmitGang("team-a", "running", 2, 6, 0);
  engine_->Schedule(0);
  SubmitGang("team-b", "ring", 2, 4, 1000);
  engine_->Schedule(1000);

  const WorkloadExplanation e = Explain("team-b/ring");
  EXPECT_EQ(e.state, WorkloadExplanation::State::kPending);
  EXPECT_EQ(e.local_queue, "q");
  EXPECT_EQ(e.cluster_queue, "team-b");
  EXPECT_EQ(e.cohort, "research");
  EXPECT_EQ(e.position_in_cluster_queue, 0u);
  EXPECT_EQ(e.pending_in_cluster_queue, 1u);
  EXPECT_EQ(e.members, 2);
  EXPECT_EQ(e.code, ReasonCode::kWaitingForQuota);
  ASSERT_EQ(e.quota.size(), 2u);  // team-b, then cohort research
  EXPECT_EQ(e.quota[0].node, "team-b");
  EXPECT_FALSE(e.quota[0].cohort);
  EXPECT_EQ(e.quota[0].fr, (FlavorResource{"h100", "nvidia.com/gpu"}));
  EXPECT_EQ(e.quota[0].nominal, 8);
  EXPECT_EQ(e.quota[0].used, 0);
  EXPECT_EQ(e.quota[0].asks, 8);
  EXPECT_EQ(e.quota[0].available, 4);  // 16 in the cohort, 12 used
  EXPECT_EQ(e.quota[0].most_ever, 16);
  EXPECT_EQ(e.quota[1].node, "research");
  EXPECT_TRUE(e.quota[1].cohort);
  ASSERT_EQ(e.placement.size(), 1u);  // both nodes: 2 of 8 GPUs free
  EXPECT_EQ(e.placement[0].nodes, 2);
  EXPECT_NE(e.placement[0].verdict, "fits");
  EXPECT_THAT(e.placement[0].examples,
              ::testing::ElementsAre("dgx-0", "dgx-1"));
  EXPECT_THAT(e.preemption, HasSubstr("reclaimWithinCohort Never"));
}

TEST_F(WorkloadExplanationTest, PositionsCountTheLocalQueueApart) {
  Start(TwoTeams(), 1);
  SubmitGang("team-a", "running", 1, 8, 0);
  engine_->Schedule(0);
  SubmitGang("team-a", "first", 1, 4, 1000);
  SubmitGang("team-a", "second", 1, 4, 2000);
  engine_->Schedule(2000);

  const WorkloadExplanation e = Explain("team-a/second");
  EXPECT_EQ(e.position_in_cluster_queue, 1u);
  EXPECT_EQ(e.position_in_local_queue, 1u);
  EXPECT_EQ(e.pending_in_local_queue, 2u);
  EXPECT_EQ(e.placement[0].verdict.find("fits"), std::string::npos);
}

TEST_F(WorkloadExplanationTest, AdmittedWorkloadShowsWhatItIsCharged) {
  Start(TwoTeams(), 1);
  SubmitGang("team-a", "running", 2, 2, 0);
  engine_->Schedule(0);
  const WorkloadExplanation e = Explain("team-a/running");
  EXPECT_EQ(e.state, WorkloadExplanation::State::kAdmitted);
  ASSERT_FALSE(e.quota.empty());
  EXPECT_EQ(e.quota[0].asks, 4);
  EXPECT_EQ(e.quota[0].used, 4);
  EXPECT_TRUE(e.placement.empty());
}

// The dry run plans on a copy what the next pass would do for the
// workload, and evicts nobody.
TEST_F(WorkloadExplanationTest, DryRunNamesTheVictimsAndEvictsNobody) {
  Start(TwoTeams(PreemptionPolicy{.within_cluster_queue =
                                      WithinClusterQueue::kLowerPriority}),
        1);
  engine_->AddPod(GangPod("team-a", "low", 0, 8, 1, /*priority=*/1), 0);
  engine_->Schedule(0);
  // Queued, not yet looked at by a pass.
  engine_->AddPod(GangPod("team-a", "urgent", 0, 8, 1, /*priority=*/9), 1000);

  std::optional<PreemptionPreview> preview =
      PreviewPreemptionOnCopy(*engine_, model_, "team-a/urgent", 1000);
  ASSERT_TRUE(preview.has_value());
  EXPECT_EQ(preview->verdict, PreemptionPreview::Verdict::kWouldEvict);
  ASSERT_EQ(preview->victims.size(), 1u);
  EXPECT_EQ(preview->victims[0].key, "team-a/low");
  EXPECT_EQ(preview->victims[0].priority, 1);
  EXPECT_THAT(preview->victims[0].reason, HasSubstr("team-a/urgent"));
  EXPECT_TRUE(engine_->workloads().at("team-a/low").admitted());
  EXPECT_EQ(model_.pod_count(), 1u);
  // Only a pending workload has one.
  EXPECT_FALSE(PreviewPreemptionOnCopy(*engine_, model_, "team-a/low", 1000)
                   .has_value());
}

TEST_F(WorkloadExplanationTest, DryRunSaysWhenThePolicyNeverPreempts) {
  Start(TwoTeams(), 1);
  engine_->AddPod(GangPod("team-a", "low", 0, 8, 1, 1), 0);
  engine_->Schedule(0);
  engine_->AddPod(GangPod("team-a", "urgent", 0, 8, 1, 9), 1000);
  engine_->Schedule(1000);
  std::optional<PreemptionPreview> preview =
      PreviewPreemptionOnCopy(*engine_, model_, "team-a/urgent", 1000);
  ASSERT_TRUE(preview.has_value());
  EXPECT_EQ(preview->verdict, PreemptionPreview::Verdict::kNotAllowed);
  EXPECT_TRUE(preview->victims.empty());
}

TEST_F(WorkloadExplanationTest, UnknownWorkloadIsNotFound) {
  Start(TwoTeams(), 1);
  absl::StatusOr<WorkloadExplanation> e =
      ExplainWorkload(*engine_, model_, "team-a/nobody");
  EXPECT_TRUE(absl::IsNotFound(e.status())) << e.status();
  EXPECT_THAT(std::string(e.status().message()), HasSubstr("team-a/nobody"));
}

}  // namespace
}  // namespace gpusched
