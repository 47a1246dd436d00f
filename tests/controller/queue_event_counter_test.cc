// The queue counters: each admission, eviction and preemption counted
// once, by the replica that decided it, however many passes follow.
#include "api/controller/queue_event_counter.h"

#include "gtest/gtest.h"
#include "tests/controller/admission_loop_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

using QueueEventCounterTest = AdmissionLoopTest;

TEST_F(QueueEventCounterTest, AdmissionsAreCountedOnceWithTheirWait) {
  Start(TwoTeams());
  const Pod first = QueuedPod("team-a", "first", 8);
  Add(first);
  Add(QueuedPod("team-a", "second", 8));  // the node is full: it waits
  now_ += 30000;
  loop_->PodDeleted(first);
  loop_->WaitIdle();
  MorePasses();
  const QueueEventCounts counts = loop_->QueueCounts();
  EXPECT_EQ(counts.admitted, (std::map<std::string, uint64_t>{{"team-a", 2}}));
  const WaitHistogram& wait = counts.wait.at("team-a");
  EXPECT_EQ(wait.count, 2u);
  EXPECT_DOUBLE_EQ(wait.sum_seconds, 30.0);
  EXPECT_EQ(wait.buckets[0], 1u);  // le 1: the first, admitted at once
  EXPECT_EQ(wait.buckets[2], 1u);  // le 15: still only the first
  EXPECT_EQ(wait.buckets[3], 2u);  // le 30: the second too
  EXPECT_TRUE(counts.evicted.empty());
  EXPECT_TRUE(counts.preempted.empty());
}

TEST_F(QueueEventCounterTest, APreemptionIsOneEvictionAndOnePreemption) {
  Start(TwoTeams(PreemptionPolicy{.within_cluster_queue =
                                      WithinClusterQueue::kLowerPriority}));
  Add(GangPod("team-a", "low", 0, 8, 1, /*priority=*/1));
  Add(GangPod("team-a", "high", 0, 8, 1, /*priority=*/100));
  MorePasses();
  const QueueEventCounts counts = loop_->QueueCounts();
  EXPECT_EQ(counts.evicted,
            (std::map<QueueReason, uint64_t>{{{"team-a", "Preempted"}, 1}}));
  EXPECT_EQ(
      counts.preempted,
      (std::map<QueueReason, uint64_t>{{{"team-a", "InClusterQueue"}, 1}}));
}

// Two timers time a workload out: an admitted gang not bound in 300 s is
// rolled back (an eviction), and a gang short of members backs off (it
// held nothing: not an eviction).
TEST_F(QueueEventCounterTest, OnlyARolledBackAdmissionCountsAsAnEviction) {
  Start(TwoTeams());
  TimeOutTwoGangs();
  const QueueEventCounts counts = loop_->QueueCounts();
  EXPECT_EQ(
      counts.evicted,
      (std::map<QueueReason, uint64_t>{{{"team-a", "PodsReadyTimeout"}, 1}}));
  EXPECT_EQ(counts.admitted, (std::map<std::string, uint64_t>{{"team-a", 1}}));
}

TEST_F(QueueEventCounterTest, AStandbyCountsNothingUntilItDecides) {
  Start(TwoTeams());
  loop_->SetDeciding(false);  // before any pod: nothing decided yet
  Add(QueuedPod("team-a", "one", 4));
  MorePasses();
  EXPECT_EQ(loop_->QueueCounts(), QueueEventCounts{});
  loop_->SetDeciding(true);
  MorePasses();
  EXPECT_EQ(loop_->QueueCounts().admitted,
            (std::map<std::string, uint64_t>{{"team-a", 1}}));
}

TEST(PreemptionReasonTest, KueuesFourReasonsAndOtherwiseOther) {
  EXPECT_EQ(PreemptionReason("InClusterQueue: preempted by a/b (priority 5)"),
            "InClusterQueue");
  EXPECT_EQ(PreemptionReason("InCohortReclaimWhileBorrowing: x"),
            "InCohortReclaimWhileBorrowing");
  EXPECT_EQ(PreemptionReason("InCohortFairSharing"), "InCohortFairSharing");
  EXPECT_EQ(PreemptionReason("preempted by team-a/x"), "Other");
  EXPECT_EQ(PreemptionReason(""), "Other");
}

}  // namespace
}  // namespace gpusched
