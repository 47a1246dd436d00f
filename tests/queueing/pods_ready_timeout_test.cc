// Kueue's waitForPodsReady on gpusched's gang timers: an admitted workload
// whose members are not all bound in time is rolled back with Kueue's
// reason (PodsReadyTimeout), requeued after base*2^(n-1) capped at the
// maximum, and deactivated (RequeuingLimitExceeded) once backoffLimitCount
// requeues are used up, until a new pod of it arrives.
#include <limits>

#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "queueing/gang_timers.h"
#include "tests/queueing/engine_fixture.h"
#include "tests/queueing/stage_builders.h"

namespace gpusched {
namespace {

SchedulerConfig Config(std::optional<int32_t> limit) {
  SchedulerConfig config;
  config.gang_admission_timeout_ms = 60'000;
  config.gang_backoff_base_ms = 10'000;
  config.gang_backoff_max_ms = 40'000;
  config.gang_backoff_limit_count = limit;
  return config;
}

// A gang of two admitted at `at`, one member bound.
Workload AdmittedGang(int64_t at) {
  Workload w;
  w.key = "team-a/gang";
  w.cluster_queue = "team-a";
  w.is_gang = true;
  w.min_member = 2;
  for (int i = 0; i < 2; ++i) {
    Pod pod = GangPod("team-a", "gang", i, 1, 2);
    w.pods[pod.Key()] = pod;
    w.placements[pod.Key()] = {"dgx-0", {}};
  }
  w.bound.insert(w.pods.begin()->first);
  w.state = Workload::State::kAdmitted;
  w.admitted_at_ms = at;
  return w;
}

// Times `w` out at `now` and applies what fired, as the engine does.
TimerOutcome TimeOut(const SchedulerConfig& config, Workload& w, int64_t now) {
  GangTimers timers;
  GangTimers::LiveMap live{{w.key, &w}};
  std::vector<TimerOutcome> fired =
      timers.UnboundPastTimeout(config, live, now);
  EXPECT_EQ(fired.size(), 1u);
  if (fired.empty()) return {};
  w.state = Workload::State::kPending;
  timers.BackOffAfterRollback(config, w, fired[0], now);
  return fired[0];
}

TEST(PodsReadyTimeoutTest, RequeuesAfterKueuesDoublingBackoffUpToTheMaximum) {
  const SchedulerConfig config = Config(std::nullopt);
  Workload w = AdmittedGang(0);
  const int64_t expected_backoff[] = {10'000, 20'000, 40'000, 40'000};
  int64_t now = 60'000;
  for (int64_t backoff : expected_backoff) {
    const TimerOutcome fired = TimeOut(config, w, now);
    EXPECT_EQ(fired.kind, TimerOutcome::Kind::kBindTimedOut);
    EXPECT_EQ(w.code, ReasonCode::kPodsReadyTimeout);
    EXPECT_EQ(w.backoff_until_ms, now + backoff);
    w.state = Workload::State::kAdmitted;
    w.admitted_at_ms = w.backoff_until_ms;
    now = w.admitted_at_ms + 60'000;
  }
  EXPECT_EQ(w.requeue_count, 4);
  EXPECT_FALSE(w.deactivated);
}

// Kueue's workload_controller_eviction_test.go "trigger deactivation of
// workload when reaching backoffLimitCount": limit 1, one requeue done.
TEST(PodsReadyTimeoutTest, TimeoutPastTheLimitDeactivates) {
  const SchedulerConfig config = Config(1);
  Workload w = AdmittedGang(0);
  w.requeue_count = 1;
  const TimerOutcome fired = TimeOut(config, w, 60'000);
  EXPECT_EQ(fired.kind, TimerOutcome::Kind::kRequeuingLimitExceeded);
  EXPECT_EQ(fired.reason,
            "only 1 of 2 members bound within 60s; quota and GPUs released, "
            "deactivated after 1 requeues (backoffLimitCount 1); a new pod "
            "of the workload activates it again");
  EXPECT_TRUE(w.deactivated);
  EXPECT_EQ(w.code, ReasonCode::kRequeuingLimitExceeded);
  EXPECT_EQ(w.backoff_until_ms, std::numeric_limits<int64_t>::max());
}

TEST(PodsReadyTimeoutTest, DeactivatedWorkloadSetsNoTimer) {
  const SchedulerConfig config = Config(0);
  Workload w = AdmittedGang(0);
  TimeOut(config, w, 60'000);
  GangTimers timers;
  GangTimers::LiveMap live{{w.key, &w}};
  EXPECT_EQ(timers.NextWakeup(config, {}, live, 60'000), std::nullopt);
}

TEST(PodsReadyTimeoutTest, ZeroLimitDeactivatesOnTheFirstTimeout) {
  Workload w = AdmittedGang(0);
  EXPECT_EQ(TimeOut(Config(0), w, 60'000).kind,
            TimerOutcome::Kind::kRequeuingLimitExceeded);
}

// Backoffs of a gang still short of pods are gpusched's, not Kueue's
// requeues: they do not use up backoffLimitCount.
TEST(PodsReadyTimeoutTest, IncompleteGangBackoffsDoNotCountTowardsTheLimit) {
  Workload w = AdmittedGang(0);
  w.failed_attempts = 5;
  EXPECT_EQ(TimeOut(Config(1), w, 60'000).kind,
            TimerOutcome::Kind::kBindTimedOut);
}

class PodsReadyTimeoutEngineTest : public EngineFixture {
 protected:
  void SetUp() override {
    Policy policy = TwoTeams();
    policy.config = Config(1);
    Start(std::move(policy));
  }
  const Workload& W() { return engine_->workloads().at("team-a/train"); }
};

TEST_F(PodsReadyTimeoutEngineTest, DeactivatedWorkloadWaitsUntilANewPod) {
  SubmitGang("team-a", "train", 2, 4, 0);
  engine_->Schedule(0);
  ASSERT_TRUE(W().admitted());
  engine_->Schedule(60'000);  // requeue 1 of 1, back after 10 s
  EXPECT_EQ(W().code, ReasonCode::kPodsReadyTimeout);
  engine_->Schedule(70'000);
  ASSERT_TRUE(W().admitted());
  engine_->Schedule(130'000);  // past the limit
  EXPECT_EQ(W().state, Workload::State::kPending);
  EXPECT_EQ(W().code, ReasonCode::kRequeuingLimitExceeded);
  engine_->Schedule(10'000'000);
  EXPECT_EQ(W().state, Workload::State::kPending);
  EXPECT_EQ(W().code, ReasonCode::kRequeuingLimitExceeded);
  // Its job controller replaced a member: it queues again, count reset.
  engine_->AddPod(GangPod("team-a", "train", 2, 4, 2), 10'000'000);
  engine_->Schedule(10'000'000);
  EXPECT_TRUE(W().admitted());
  EXPECT_EQ(W().requeue_count, 0);
}

// A gang whose readiness a live pod watch reports: bound members that are
// not Ready still time out, as Kueue's PodsReady waits for Ready.
class PodsReadyFromWatchTest : public PodsReadyTimeoutEngineTest {
 protected:
  // Admits team-a/train (2 pods), both bound, with `ready` reported.
  void AdmitBound(bool ready) {
    SubmitGang("team-a", "train", 2, 4, 0);
    for (const char* pod : {"team-a/train-0", "team-a/train-1"}) {
      engine_->SetMemberReadiness(pod, false);
    }
    engine_->Schedule(0);
    ASSERT_TRUE(W().admitted());
    for (const char* pod : {"team-a/train-0", "team-a/train-1"}) {
      engine_->MarkBound(pod);
      engine_->SetMemberReadiness(pod, ready);
    }
  }
};

TEST_F(PodsReadyFromWatchTest, BoundButNotReadyTimesOut) {
  AdmitBound(/*ready=*/false);
  engine_->Schedule(60'000);
  EXPECT_EQ(W().state, Workload::State::kPending);
  EXPECT_EQ(W().code, ReasonCode::kPodsReadyTimeout);
  EXPECT_EQ(W().reason,
            "only 0 of 2 members bound and Ready within 60s; quota and GPUs "
            "released, retry in 10s");
}

TEST_F(PodsReadyFromWatchTest, ReadyMembersKeepTheAdmission) {
  AdmitBound(/*ready=*/true);
  engine_->Schedule(60'000);
  EXPECT_TRUE(W().admitted());
}

// Kueue's PodsReady turns true once: a member that loses readiness later
// (a restarting container) is not the admission's timeout.
TEST_F(PodsReadyFromWatchTest, ReadinessLostAfterPodsReadyIsNoTimeout) {
  AdmitBound(/*ready=*/true);
  engine_->SetMemberReadiness("team-a/train-1", false);
  engine_->Schedule(60'000);
  EXPECT_TRUE(W().admitted());
}

}  // namespace
}  // namespace gpusched
