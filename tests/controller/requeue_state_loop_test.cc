// The requeue state kept outside the loop (keep_requeue_state): after a
// restart no pass runs before it is read, it is applied once every pod is
// listed, each deciding pass publishes it to be saved, and a later read
// reaches a standby only.
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "api/controller/admission_loop.h"
#include "gtest/gtest.h"
#include "tests/controller/restart_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

class RequeueStateLoopTest : public RestartFixture {
 protected:
  void SetUp() override {
    Policy policy = TwoTeams();
    policy.config.gang_admission_timeout_ms = 60'000;
    policy.config.gang_backoff_limit_count = 1;
    Start(std::move(policy), 2, /*await_lists=*/true,
          /*keep_requeue_state=*/true);
  }
  static std::vector<Pod> Gang() {
    return {GangPod("team-a", "g", 0, 4, 2), GangPod("team-a", "g", 1, 4, 2)};
  }
  static RequeueRecord Deactivated() {
    return {.workload = "team-a/g",
            .count = 1,
            .deactivated = true,
            .code = ReasonCode::kRequeuingLimitExceeded,
            .message = "deactivated after 1 requeues"};
  }
  bool IsDeactivated() {
    return loop_->ReadEngine([](const QueueingEngine& engine) {
      return engine.workloads().at("team-a/g").deactivated;
    });
  }
};

TEST_F(RequeueStateLoopTest, NoPassBeforeTheStateIsRead) {
  ListPods(Gang());
  ListNodesAndGroups();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(loop_->passes(), 0u);
  EXPECT_EQ(loop_->RequeueRecords(), nullptr);

  loop_->RequeueStateLoaded({}, /*initial=*/true);
  loop_->WaitIdle();
  EXPECT_EQ(Admissions(sink_.Take()).size(), 2u);
  ASSERT_NE(loop_->RequeueRecords(), nullptr);
  EXPECT_TRUE(loop_->RequeueRecords()->empty());
}

// The pods of the first list are not "new pods" that would activate it
// again: the record is applied after them.
TEST_F(RequeueStateLoopTest, DeactivatedGangStaysInactiveAfterARestart) {
  loop_->RequeueStateLoaded({Deactivated()}, /*initial=*/true);
  ListPods(Gang());
  ListNodesAndGroups();
  loop_->WaitIdle();
  EXPECT_TRUE(Admissions(sink_.Take()).empty());
  EXPECT_EQ(StateOf("team-a/g"), Workload::State::kPending);
  ASSERT_NE(loop_->RequeueRecords(), nullptr);
  ASSERT_EQ(loop_->RequeueRecords()->size(), 1u);
  RequeueRecord kept = Deactivated();
  kept.queued_from_ms = 1000;  // its pods' creation: when they were listed
  EXPECT_EQ(loop_->RequeueRecords()->front(), kept);
}

TEST_F(RequeueStateLoopTest, LaterReadReachesAStandbyOnly) {
  loop_->RequeueStateLoaded({Deactivated()}, /*initial=*/true);
  ListPods(Gang());
  ListNodesAndGroups();
  loop_->WaitIdle();
  // Deciding: its own state is newer than a read.
  loop_->RequeueStateLoaded({}, /*initial=*/false);
  loop_->WaitIdle();
  EXPECT_TRUE(IsDeactivated());

  loop_->SetDeciding(false);
  loop_->RequeueStateLoaded({}, /*initial=*/false);
  loop_->WaitIdle();
  EXPECT_FALSE(IsDeactivated());
  EXPECT_EQ(loop_->RequeueRecords(), nullptr) << "a standby publishes none";
}

}  // namespace
}  // namespace gpusched
