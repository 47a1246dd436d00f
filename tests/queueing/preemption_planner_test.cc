// Preemption planning: Kueue's candidate rules, the fewest victims, and
// trials that leave the model and the quota as they were.
#include "queueing/preemption_planner.h"

#include "gtest/gtest.h"
#include "queueing/gang_trial.h"
#include "tests/queueing/stage_builders.h"

namespace gpusched {
namespace {

constexpr PreemptionPolicy kLowerPriority{
    .within_cluster_queue = WithinClusterQueue::kLowerPriority};

class PreemptionPlannerTest : public ::testing::Test {
 protected:
  void Start(Policy policy) {
    policy_ = std::move(policy);
    model_.UpsertNode(Dgx("dgx-0"));
    auto quota = QuotaTree::Build(policy_);
    ASSERT_TRUE(quota.ok());
    quota_.emplace(*std::move(quota));
    flavors_.emplace();
    flavors_->Rebuild(policy_, *quota_);
    planner_.emplace();
  }
  Workload& Running(const std::string& cq, const std::string& name, int gpus,
                    int32_t priority, int first_gpu) {
    Workload& w = workloads_[name] =
        SinglePodWorkload(cq, name, gpus, priority);
    AdmitOn(model_, *quota_, w, "dgx-0", first_gpu);
    admitted_[cq][w.key] = &w;
    return w;
  }
  PlanInputs Inputs() {
    return {policy_, *quota_, *flavors_, model_, admitted_};
  }
  // Fits when the quota and one node hold it (what a search would say).
  PreemptionPlanner::Trials Trials() {
    return {.could_fit = [](const Workload&,
                            const std::vector<Workload*>&) { return true; },
            .fits =
                [this](Workload& w) {
                  ++fit_calls_;
                  const int64_t need =
                      w.pods.begin()->second.containers[0].requests.Get(
                          "nvidia.com/gpu");
                  return quota_->Available(w.cluster_queue,
                                           {"h100", "nvidia.com/gpu"}) >=
                             need &&
                         model_.FindNode("dgx-0")->gpus().free_milli() >=
                             need * 1000;
                }};
  }

  Policy policy_;
  ClusterModel model_;
  std::optional<QuotaTree> quota_;
  std::optional<QuotaFlavors> flavors_;
  PreemptionPlanner::AdmittedByQueue admitted_;
  std::optional<PreemptionPlanner> planner_;
  std::map<std::string, Workload> workloads_;
  int fit_calls_ = 0;
};

TEST_F(PreemptionPlannerTest, FewestLowestPriorityVictims) {
  Start(TwoTeams(kLowerPriority));
  Running("team-a", "low", 4, 1, 0);
  Running("team-a", "lowest", 2, 0, 4);
  Running("team-a", "mid", 2, 2, 6);
  Workload w = SinglePodWorkload("team-a", "urgent", 4, 5);
  const std::string before = Snapshot(model_);
  PreemptionPlan plan = planner_->Plan(w, 0, Trials(), Inputs());
  ASSERT_EQ(plan.verdict, PreemptionPlan::Verdict::kEvict);
  // Greedy takes lowest (2 GPUs, not enough), then low (4): 6 free. Giving
  // back, last taken first: without low it does not fit, without lowest
  // it does. Only low goes.
  ASSERT_EQ(plan.victims.size(), 1u);
  EXPECT_EQ(plan.victims[0].workload->key, "team-a/low-0");
  EXPECT_EQ(plan.victims[0].reason,
            "InClusterQueue: preempted by team-a/urgent-0 (priority 5)");
  EXPECT_EQ(Snapshot(model_), before);  // the plan changed nothing
}

TEST_F(PreemptionPlannerTest, NeverPolicyAndHigherPriorityGiveNoVictims) {
  Start(TwoTeams());
  Running("team-a", "low", 8, 0, 0);
  Workload w = SinglePodWorkload("team-a", "urgent", 4, 5);
  EXPECT_EQ(planner_->Plan(w, 0, Trials(), Inputs()).verdict,
            PreemptionPlan::Verdict::kNotAllowed);
  EXPECT_EQ(fit_calls_, 0);
}

TEST_F(PreemptionPlannerTest, OnlyLowerPriorityAreCandidates) {
  Start(TwoTeams(kLowerPriority));
  Running("team-a", "high", 8, 9, 0);
  Workload w = SinglePodWorkload("team-a", "urgent", 4, 5);
  EXPECT_EQ(planner_->Plan(w, 0, Trials(), Inputs()).verdict,
            PreemptionPlan::Verdict::kNoCandidates);
}

TEST_F(PreemptionPlannerTest, MinimumRuntimeProtectsYoungWorkloads) {
  Policy policy = TwoTeams(kLowerPriority);
  policy.config.preemption_minimum_runtime_ms = 60'000;
  Start(std::move(policy));
  Workload& low = Running("team-a", "low", 8, 0, 0);
  low.admitted_at_ms = 10'000;
  Workload w = SinglePodWorkload("team-a", "urgent", 4, 5);
  const ClusterQueue& cq = policy_.cluster_queues[0];
  EXPECT_TRUE(planner_->Candidates(w, cq, 69'999, Inputs()).workloads.empty());
  EXPECT_EQ(planner_->Candidates(w, cq, 70'000, Inputs()).workloads.size(), 1u);
}

TEST_F(PreemptionPlannerTest, PlanThatCannotFitLeavesEverythingAsItWas) {
  Start(TwoTeams(kLowerPriority));
  Running("team-a", "low", 2, 0, 0);
  Running("team-a", "lower", 2, 0, 2);
  Workload w = SinglePodWorkload("team-a", "huge", 9, 5);  // never fits
  const std::string before = Snapshot(model_);
  const int64_t used = quota_->Usage("team-a", {"h100", "nvidia.com/gpu"});
  EXPECT_EQ(planner_->Plan(w, 0, Trials(), Inputs()).verdict,
            PreemptionPlan::Verdict::kCannotFit);
  EXPECT_GT(fit_calls_, 0);  // it did try, with victims taken off
  EXPECT_EQ(Snapshot(model_), before);
  EXPECT_EQ(quota_->Usage("team-a", {"h100", "nvidia.com/gpu"}), used);
  EXPECT_EQ(workloads_.at("low").placements.size(), 1u);
}

TEST_F(PreemptionPlannerTest, CountBoundSkipsTheTrials) {
  Start(TwoTeams(kLowerPriority));
  Running("team-a", "low", 2, 0, 0);
  Workload w = SinglePodWorkload("team-a", "urgent", 4, 5);
  PreemptionPlanner::Trials trials = Trials();
  trials.could_fit = [](const Workload&, const std::vector<Workload*>&) {
    return false;
  };
  EXPECT_EQ(planner_->Plan(w, 0, trials, Inputs()).verdict,
            PreemptionPlan::Verdict::kCannotFit);
  EXPECT_EQ(fit_calls_, 0);
}

}  // namespace
}  // namespace gpusched
