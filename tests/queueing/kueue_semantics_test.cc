// Kueue's queueing semantics where gpusched used to differ (issue F §1):
// fair-sharing preemption by a preemptor that must borrow, own-queue
// victims together with reclaim from a borrower, capacity a lender cannot
// be sure to reclaim, and hierarchical cohorts admitting whoever borrows
// from the lowest subtree first. Each case is also a scenario in
// tests/scenarios/kueue/.
#include "gtest/gtest.h"
#include "queueing/classical_preemption.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

constexpr PreemptionPolicy kReclaimAny{
    .within_cluster_queue = WithinClusterQueue::kLowerPriority,
    .reclaim_within_cohort = ReclaimWithinCohort::kAny};
constexpr PreemptionPolicy kLowerPriorityEverywhere{
    .within_cluster_queue = WithinClusterQueue::kLowerPriority,
    .reclaim_within_cohort = ReclaimWithinCohort::kLowerPriority};

Policy Teams(std::vector<ClusterQueue> queues) {
  Policy policy = TwoTeams();
  policy.cluster_queues = std::move(queues);
  policy.local_queues.clear();
  for (const ClusterQueue& cq : policy.cluster_queues) {
    policy.local_queues.push_back(LocalQueue{cq.name, "q", cq.name});
  }
  return policy;
}

// Kueue's candidate order (its TestCandidatesOrdering): other queues
// first, then lower priority, then the most recently admitted, then name.
TEST(CandidateOrderTest, OtherQueuesThenPriorityThenNewest) {
  auto make = [](std::string queue, std::string key, int32_t priority,
                 int64_t admitted_at) {
    Workload v;
    v.cluster_queue = std::move(queue);
    v.key = std::move(key);
    v.priority = priority;
    v.admitted_at_ms = admitted_at;
    return v;
  };
  const Workload own_low = make("a", "ns/own-low", -5, 0);
  const Workload other_high = make("b", "ns/other-high", 9, 0);
  const Workload older = make("b", "ns/older", 1, 0);
  const Workload newer = make("b", "ns/newer", 1, 10);
  EXPECT_TRUE(CandidateBefore(other_high, own_low, "a"));
  EXPECT_TRUE(CandidateBefore(older, other_high, "a"));
  EXPECT_TRUE(CandidateBefore(newer, older, "a"));
  EXPECT_FALSE(CandidateBefore(older, newer, "a"));
}

class KueueSemanticsTest : public ::testing::Test {
 protected:
  void Start(Policy policy) {
    for (int i = 0; i < 3; ++i) {
      model_.UpsertNode(Dgx("dgx-" + std::to_string(i)));
    }
    auto engine = QueueingEngine::Create(std::move(policy), &model_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }
  void Add(const std::string& queue, const std::string& name, int gpus,
           int32_t priority, int64_t now) {
    Pod pod = QueuedPod(queue, name, gpus);
    pod.priority = priority;
    engine_->AddPod(pod, now);
  }
  Workload::State State(const std::string& key) {
    return engine_->workloads().at(key).state;
  }
  int Preemptions(const std::string& key) {
    return engine_->workloads().at(key).preemptions;
  }

  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
};

// team-a is at its nominal quota, so the incoming workload makes it
// borrow; with fair sharing it still takes from team-b, whose share is
// the highest, and only from it (Kueue's LessThanOrEqualToFinalShare).
TEST_F(KueueSemanticsTest, FairSharingPreemptorThatMustBorrow) {
  Policy policy =
      Teams({Queue("team-a", 4, kReclaimAny), Queue("team-b", 4, kReclaimAny),
             Queue("team-c", 4, kReclaimAny)});
  policy.config.fair_sharing = true;
  Start(std::move(policy));
  for (int i = 0; i < 4; ++i) Add("team-a", "a" + std::to_string(i), 1, 0, 0);
  for (int i = 0; i < 6; ++i) Add("team-b", "b" + std::to_string(i), 1, 0, 0);
  for (int i = 0; i < 2; ++i) Add("team-c", "c" + std::to_string(i), 1, 0, 0);
  engine_->Schedule(0);
  Add("team-a", "incoming", 1, 0, 1000);
  engine_->Schedule(1000);
  EXPECT_EQ(State("team-a/incoming"), Workload::State::kAdmitted);
  auto preempted = [&](const std::string& queue, const std::string& prefix,
                       int count) {
    int sum = 0;
    for (int i = 0; i < count; ++i) {
      sum += Preemptions(queue + "/" + prefix + std::to_string(i));
    }
    return sum;
  };
  EXPECT_EQ(preempted("team-b", "b", 6), 1);
  EXPECT_EQ(preempted("team-a", "a", 4), 0);
  EXPECT_EQ(preempted("team-c", "c", 2), 0);
}

// Freeing team-a's own low-priority workload leaves the cohort one GPU
// short, because team-b borrows it: Kueue takes team-b's low-priority
// workload in the same plan (so team-a need not borrow at all).
TEST_F(KueueSemanticsTest, OwnQueueVictimAndReclaimInOnePlan) {
  Start(Teams({Queue("team-a", 8, kLowerPriorityEverywhere),
               Queue("team-b", 8, kLowerPriorityEverywhere)}));
  Add("team-a", "a-low", 4, -1, 0);
  Add("team-a", "a-mid", 3, 0, 0);
  Add("team-b", "b-low", 4, -1, 0);
  Add("team-b", "b-mid", 5, 0, 0);
  engine_->Schedule(0);
  ASSERT_EQ(State("team-b/b-mid"), Workload::State::kAdmitted);
  Add("team-a", "incoming", 5, 0, 1000);
  engine_->Schedule(1000);
  EXPECT_EQ(State("team-a/incoming"), Workload::State::kAdmitted);
  EXPECT_EQ(Preemptions("team-a/a-low"), 1);
  EXPECT_EQ(Preemptions("team-b/b-low"), 1);
  EXPECT_EQ(Preemptions("team-a/a-mid"), 0);
  EXPECT_EQ(Preemptions("team-b/b-mid"), 0);
}

// The StrictFIFO head of team-a fits team-a's nominal quota only if the
// cohort gives back what others borrow; it has no victims, and could not
// take them back later (reclaimWithinCohort is not Any): the quota stays
// held and team-b may not borrow it. With Any, team-b borrows.
class HeldQuotaTest : public KueueSemanticsTest {
 protected:
  void Run(ReclaimWithinCohort reclaim) {
    Start(Teams({Queue("team-a", 8, {.reclaim_within_cohort = reclaim},
                       QueueingStrategy::kStrictFifo),
                 Queue("team-b", 0)}));
    Add("team-a", "a1", 4, 0, 0);
    engine_->Schedule(0);
    Add("team-a", "a2", 8, 0, 1000);
    engine_->Schedule(1000);
    Add("team-b", "b1", 2, 0, 2000);
    engine_->Schedule(2000);
    EXPECT_EQ(State("team-a/a2"), Workload::State::kPending);
    // Outside a pass nothing stays charged for the held quota.
    EXPECT_EQ(engine_->quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 4);
  }
};

TEST_F(HeldQuotaTest, LenderHoldsQuotaItCannotBeSureToReclaim) {
  Run(ReclaimWithinCohort::kLowerPriority);
  EXPECT_EQ(State("team-b/b1"), Workload::State::kPending);
}

TEST_F(HeldQuotaTest, LenderThatCanReclaimAnythingHoldsNothing) {
  Run(ReclaimWithinCohort::kAny);
  EXPECT_EQ(State("team-b/b1"), Workload::State::kAdmitted);
}

// guaranteed borrows only inside its own cohort, best-effort from the
// root: guaranteed is admitted first despite its lower priority.
TEST_F(KueueSemanticsTest, HierarchicalCohortBorrowingLessGoesFirst) {
  Policy policy = Teams({Queue("guaranteed", 0), Queue("best-effort", 0)});
  policy.cluster_queues[0].cohort = "guaranteed";
  policy.cluster_queues[1].cohort = "root";
  policy.cohorts = {Cohort{.name = "root"},
                    Cohort{.name = "guaranteed",
                           .parent = "root",
                           .resource_groups = Queue("x", 8).resource_groups}};
  Start(std::move(policy));
  Add("guaranteed", "g", 8, 0, 0);
  Add("best-effort", "b", 8, 3, 0);
  engine_->Schedule(0);
  EXPECT_EQ(State("guaranteed/g"), Workload::State::kAdmitted);
  EXPECT_EQ(State("best-effort/b"), Workload::State::kPending);
  EXPECT_EQ(engine_->quota().BorrowHeight("best-effort",
                                          {{{"h100", "nvidia.com/gpu"}, 1}}),
            2);
}

}  // namespace
}  // namespace gpusched
