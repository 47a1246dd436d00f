// The requeue state across a restart: what one engine's workloads record
// (RequeueRecordsOf) is restored into a fresh engine that saw the same pods
// (RestoreRequeueStates), and the fresh engine then decides as the first
// would have: the same count towards backoffLimitCount, the same backoff,
// a deactivated workload still inactive, the same queue order under the
// Eviction timestamp.
#include "queueing/requeue_state.h"

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

// One engine with its own model of two DGX nodes.
struct Replica {
  explicit Replica(const Policy& policy) {
    for (int i = 0; i < 2; ++i)
      model.UpsertNode(Dgx("dgx-" + std::to_string(i)));
    engine = *QueueingEngine::Create(policy, &model);
  }
  const Workload& W(const std::string& key) const {
    return engine->workloads().at(key);
  }
  ClusterModel model;
  std::unique_ptr<QueueingEngine> engine;
};

class RequeueStateTest : public ::testing::Test {
 protected:
  static Policy PolicyWithLimit(int32_t limit, RequeuingTimestamp timestamp) {
    Policy policy = TwoTeams();
    policy.config.gang_admission_timeout_ms = 60'000;
    policy.config.gang_backoff_base_ms = 10'000;
    policy.config.gang_backoff_max_ms = 40'000;
    policy.config.gang_backoff_limit_count = limit;
    policy.config.requeuing_timestamp = timestamp;
    return policy;
  }
  void SetUp() override {
    policy_ = PolicyWithLimit(2, RequeuingTimestamp::kCreation);
  }
  static void Submit(Replica& r, const std::string& group, int64_t now) {
    for (int i = 0; i < 2; ++i) {
      r.engine->AddPod(GangPod("team-a", group, i, 4, 2), now);
    }
  }
  // A replica restarted: the same pods listed, then the records.
  std::unique_ptr<Replica> Restart(const Replica& before,
                                   const std::vector<std::string>& groups) {
    auto after = std::make_unique<Replica>(policy_);
    for (const std::string& group : groups) Submit(*after, group, 0);
    after->engine->RestoreRequeueStates(before.engine->RequeueRecords(), 0);
    return after;
  }

  Policy policy_;
};

TEST_F(RequeueStateTest, CountAndBackoffSurviveARestart) {
  Replica first(policy_);
  Submit(first, "train", 0);
  first.engine->Schedule(0);
  ASSERT_TRUE(first.W("team-a/train").admitted());
  first.engine->Schedule(60'000);  // PodsReadyTimeout: requeue 1, back at 70 s
  ASSERT_EQ(first.W("team-a/train").requeue_count, 1);

  std::unique_ptr<Replica> second = Restart(first, {"train"});
  const Workload& w = second->W("team-a/train");
  EXPECT_EQ(w.requeue_count, 1);
  EXPECT_EQ(w.backoff_until_ms, 70'000);
  EXPECT_EQ(w.code, ReasonCode::kPodsReadyTimeout);
  EXPECT_EQ(w.reason, first.W("team-a/train").reason);
  second->engine->Schedule(61'000);
  EXPECT_FALSE(w.admitted()) << "admitted inside the backoff it had";
  second->engine->Schedule(70'000);
  EXPECT_TRUE(w.admitted());
  // Two more timeouts use the limit of 2 up from where the first left it.
  second->engine->Schedule(130'000);
  EXPECT_EQ(w.requeue_count, 2);
  second->engine->Schedule(150'000);
  ASSERT_TRUE(w.admitted());
  second->engine->Schedule(210'000);
  EXPECT_TRUE(w.deactivated);
  EXPECT_EQ(w.code, ReasonCode::kRequeuingLimitExceeded);
}

TEST_F(RequeueStateTest, DeactivatedWorkloadStaysInactiveUntilANewPod) {
  policy_ = PolicyWithLimit(0, RequeuingTimestamp::kCreation);
  Replica first(policy_);
  Submit(first, "train", 0);
  first.engine->Schedule(0);
  first.engine->Schedule(60'000);  // limit 0: deactivated at once
  ASSERT_TRUE(first.W("team-a/train").deactivated);

  std::unique_ptr<Replica> second = Restart(first, {"train"});
  const Workload& w = second->W("team-a/train");
  EXPECT_TRUE(w.deactivated);
  EXPECT_EQ(w.code, ReasonCode::kRequeuingLimitExceeded);
  EXPECT_EQ(w.backoff_until_ms, std::numeric_limits<int64_t>::max());
  second->engine->Schedule(10'000'000);
  EXPECT_FALSE(w.admitted());
  second->engine->AddPod(GangPod("team-a", "train", 2, 4, 2), 10'000'000);
  second->engine->Schedule(10'000'000);
  EXPECT_TRUE(w.admitted());
  EXPECT_EQ(w.requeue_count, 0);
}

// Kueue's Eviction timestamp: a workload rolled back queues from its
// eviction, behind one created later; a restart keeps that order.
TEST_F(RequeueStateTest, EvictionTimestampOrderSurvivesARestart) {
  policy_ = PolicyWithLimit(5, RequeuingTimestamp::kEviction);
  Replica first(policy_);
  Submit(first, "early", 0);
  first.engine->Schedule(0);
  Submit(first, "late", 1'000);    // waits: early holds the quota
  first.engine->Schedule(60'000);  // early rolled back, queued from 60 s
  ASSERT_EQ(first.W("team-a/early").created_ms, 60'000);

  std::unique_ptr<Replica> second = Restart(first, {"early", "late"});
  EXPECT_EQ(second->W("team-a/early").created_ms, 60'000);
  const std::vector<const Workload*> order =
      second->engine->PendingOrder("team-a");
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0]->key, "team-a/late");
  EXPECT_EQ(order[1]->key, "team-a/early");
}

TEST_F(RequeueStateTest, NoRecordClearsAndAnUnknownRecordWaitsForItsPods) {
  Replica r(policy_);
  Submit(r, "train", 0);
  r.engine->Schedule(0);
  r.engine->Schedule(60'000);
  ASSERT_EQ(r.W("team-a/train").requeue_count, 1);
  const RequeueRecord gone{.workload = "team-a/gone", .count = 2};
  r.engine->RestoreRequeueStates(
      {gone, RequeueRecord{.workload = "team-a/off", .deactivated = true}},
      61'000);
  EXPECT_EQ(r.W("team-a/train").requeue_count, 0);
  EXPECT_EQ(r.W("team-a/train").backoff_until_ms, 0);
  EXPECT_FALSE(r.engine->workloads().contains("team-a/gone"));
  EXPECT_EQ(r.engine->RequeueRecords(), std::vector<RequeueRecord>{gone})
      << "a deactivated record without pods is dropped, a count is kept";
  Submit(r, "gone", 62'000);
  EXPECT_EQ(r.W("team-a/gone").requeue_count, 2);
}

// Kueue's Workload outlives its evicted pods until their replacements
// come (finalizers, owner references): the count is kept across that gap.
TEST_F(RequeueStateTest,
       CountOutlivesPodsReplacedAfterTheWorkloadWasForgotten) {
  Replica r(policy_);
  Submit(r, "train", 0);
  r.engine->Schedule(0);
  r.engine->Schedule(60'000);  // requeue 1, back at 70 s
  for (int i = 0; i < 2; ++i) {
    r.engine->Delete(GangPod("team-a", "train", i, 4, 2).Key(), 60'500);
  }
  EXPECT_EQ(r.engine->ForgetFinished(61'000), 1u);
  ASSERT_FALSE(r.engine->workloads().contains("team-a/train"));
  ASSERT_EQ(r.engine->RequeueRecords().size(), 1u);

  Submit(r, "train", 62'000);  // the job controller's replacements
  const Workload& w = r.W("team-a/train");
  EXPECT_EQ(w.requeue_count, 1);
  EXPECT_EQ(w.backoff_until_ms, 70'000);
  r.engine->Schedule(62'000);
  EXPECT_FALSE(w.admitted());
  r.engine->Schedule(70'000);
  EXPECT_TRUE(w.admitted());
  // Kept only for a while: replacements after that start afresh.
  r.engine->Schedule(130'000);  // requeue 2
  for (int i = 0; i < 2; ++i) {
    r.engine->Delete(GangPod("team-a", "train", i, 4, 2).Key(), 130'000);
  }
  r.engine->ForgetFinished(130'000);
  r.engine->ForgetFinished(130'000 + RequeueKeeper::kKeepMs);
  EXPECT_TRUE(r.engine->RequeueRecords().empty());
}

TEST_F(RequeueStateTest, AdmittedWorkloadTakesOnlyItsCount) {
  Replica r(policy_);
  Submit(r, "train", 0);
  r.engine->Schedule(0);
  ASSERT_TRUE(r.W("team-a/train").admitted());
  r.engine->RestoreRequeueStates({RequeueRecord{.workload = "team-a/train",
                                                .count = 2,
                                                .requeue_at_ms = 99'000,
                                                .deactivated = true}},
                                 1'000);
  const Workload& w = r.W("team-a/train");
  EXPECT_TRUE(w.admitted());
  EXPECT_EQ(w.requeue_count, 2);
  EXPECT_FALSE(w.deactivated);
}

}  // namespace
}  // namespace gpusched
