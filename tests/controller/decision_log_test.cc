// The recent decisions: what the loop's passes admitted, preempted and
// evicted, newest first, each once, by the replica that decided it.
#include "api/controller/decision_log.h"

#include "gtest/gtest.h"
#include "tests/controller/admission_loop_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

class DecisionLogTest : public AdmissionLoopTest {
 protected:
  RecentDecisions Decisions() { return *loop_->Decisions(); }
};

TEST_F(DecisionLogTest, AnAdmissionIsRecordedOnceWithItsQueue) {
  Start(TwoTeams());
  Add(QueuedPod("team-a", "first", 8));
  MorePasses();
  const RecentDecisions decisions = Decisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].kind, RecentDecision::Kind::kAdmitted);
  EXPECT_EQ(decisions[0].namespace_name, "team-a");
  EXPECT_EQ(decisions[0].name, "first");
  EXPECT_EQ(decisions[0].cluster_queue, "team-a");
  EXPECT_EQ(decisions[0].reason_code, "Admitted");
}

TEST_F(DecisionLogTest, APreemptionComesAfterTheAdmissionItUndid) {
  Start(TwoTeams(PreemptionPolicy{.within_cluster_queue =
                                      WithinClusterQueue::kLowerPriority}));
  Add(GangPod("team-a", "low", 0, 8, 1, /*priority=*/1));
  Add(GangPod("team-a", "high", 0, 8, 1, /*priority=*/100));
  MorePasses();
  const RecentDecisions decisions = Decisions();
  ASSERT_EQ(decisions.size(), 3u);  // newest first
  EXPECT_EQ(decisions[0].kind, RecentDecision::Kind::kAdmitted);
  EXPECT_EQ(decisions[0].name, "high");
  EXPECT_EQ(decisions[1].kind, RecentDecision::Kind::kPreempted);
  EXPECT_EQ(decisions[1].name, "low");
  EXPECT_EQ(decisions[1].reason_code, "InClusterQueue");
  EXPECT_NE(decisions[1].message.find("team-a/high"), std::string::npos)
      << decisions[1].message;
  EXPECT_EQ(decisions[2].name, "low");
}

// A gang short of members backs off (it held nothing): no decision.
TEST_F(DecisionLogTest, OnlyARolledBackAdmissionIsAnEviction) {
  Start(TwoTeams());
  TimeOutTwoGangs();
  const RecentDecisions decisions = Decisions();
  ASSERT_EQ(decisions.size(), 2u);
  EXPECT_EQ(decisions[0].kind, RecentDecision::Kind::kEvicted);
  EXPECT_EQ(decisions[0].reason_code, "PodsReadyTimeout");
  EXPECT_EQ(decisions[0].name, "unbound");
  EXPECT_EQ(decisions[1].kind, RecentDecision::Kind::kAdmitted);
}

TEST_F(DecisionLogTest, AStandbyRecordsNothing) {
  Start(TwoTeams());
  loop_->SetDeciding(false);
  Add(QueuedPod("team-a", "one", 4));
  MorePasses();
  EXPECT_TRUE(Decisions().empty());
}

TEST(DecisionLogRingTest, KeepsTheNewestUpToItsCapacity) {
  DecisionLog log(2);
  ClusterModel model;
  auto engine = QueueingEngine::Create(Policy{}, &model);
  ASSERT_TRUE(engine.ok()) << engine.status();
  std::vector<EngineEvent> events;
  for (const char* key : {"ns/a", "ns/b", "ns/c"}) {
    events.push_back({.type = EngineEvent::Type::kAdmitted, .workload = key});
  }
  log.Record(**engine, events, QueueView{});
  const RecentDecisions kept = *log.Latest();
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].name, "c");
  EXPECT_EQ(kept[1].name, "b");
}

}  // namespace
}  // namespace gpusched
