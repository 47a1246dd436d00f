// The gang timers decide who backs off, who is rolled back and who is
// evicted whole, and where the starvation reservation goes.
#include "queueing/gang_timers.h"

#include "gtest/gtest.h"
#include "tests/queueing/stage_builders.h"

namespace gpusched {
namespace {

SchedulerConfig Config() {
  SchedulerConfig config;
  config.gang_admission_timeout_ms = 60'000;
  config.gang_backoff_base_ms = 10'000;
  config.gang_backoff_max_ms = 40'000;
  config.stale_gang_grace_ms = 30'000;
  config.starvation_timeout_ms = 600'000;
  return config;
}

// A gang of `min_member` with `pods` pods, pending since 0.
Workload Gang(int pods, int min_member) {
  Workload w;
  w.key = "team-a/gang";
  w.cluster_queue = "team-a";
  w.is_gang = true;
  w.min_member = min_member;
  for (int i = 0; i < pods; ++i) {
    Pod pod = GangPod("team-a", "gang", i, 1, min_member);
    w.pods[pod.Key()] = pod;
  }
  return w;
}

TEST(GangTimersTest, BackoffDoublesUpToTheMaximum) {
  const SchedulerConfig config = Config();
  EXPECT_EQ(GangBackoff(config, 1), 10'000);
  EXPECT_EQ(GangBackoff(config, 2), 20'000);
  EXPECT_EQ(GangBackoff(config, 3), 40'000);
  EXPECT_EQ(GangBackoff(config, 9), 40'000);
}

TEST(GangTimersTest, IncompleteGangBacksOffOnlyAfterItsTimeout) {
  const SchedulerConfig config = Config();
  GangTimers timers;
  Workload w = Gang(2, 4);
  GangTimers::LiveMap live{{w.key, &w}};
  EXPECT_TRUE(timers.BackOffIncompleteGangs(config, live, 59'999).empty());
  std::vector<TimerOutcome> fired =
      timers.BackOffIncompleteGangs(config, live, 60'000);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].kind, TimerOutcome::Kind::kBackedOff);
  EXPECT_EQ(fired[0].workload, &w);
  EXPECT_EQ(w.code, ReasonCode::kBackingOff);
  EXPECT_EQ(w.backoff_until_ms, 70'000);
  EXPECT_EQ(w.failed_attempts, 1);
  EXPECT_EQ(fired[0].reason,
            "only 2 of minMember 4 pods after 60s; retry in 10s");
  // Backing off, it does not time out again before it tries again.
  EXPECT_TRUE(timers.BackOffIncompleteGangs(config, live, 69'999).empty());
  EXPECT_EQ(timers.NextWakeup(config, {}, live, 60'000), 70'000);
}

TEST(GangTimersTest, UnboundAdmissionRollsBackWithTheNextBackoff) {
  const SchedulerConfig config = Config();
  GangTimers timers;
  Workload w = Gang(2, 2);
  w.state = Workload::State::kAdmitted;
  w.admitted_at_ms = 1'000;
  for (const auto& [key, pod] : w.pods) w.placements[key] = {"dgx-0", {}};
  w.bound.insert(w.pods.begin()->first);
  GangTimers::LiveMap live{{w.key, &w}};
  EXPECT_EQ(timers.NextWakeup(config, {}, live, 1'000), 61'000);
  EXPECT_TRUE(timers.UnboundPastTimeout(config, live, 60'999).empty());
  std::vector<TimerOutcome> fired =
      timers.UnboundPastTimeout(config, live, 61'000);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].reason,
            "only 1 of 2 members bound within 60s; quota and GPUs released, "
            "retry in 10s");
  timers.BackOffAfterRollback(config, w, fired[0], 61'000);
  EXPECT_EQ(w.code, ReasonCode::kPodsReadyTimeout);
  EXPECT_EQ(w.backoff_until_ms, 71'000);
  EXPECT_EQ(w.admitted_at_ms, -1);
}

TEST(GangTimersTest, GangBelowMinMemberIsEvictedAfterTheGraceOnly) {
  const SchedulerConfig config = Config();
  GangTimers timers;
  std::map<std::string, Workload> workloads;
  Workload& w = workloads[Gang(2, 2).key] = Gang(2, 2);
  w.state = Workload::State::kAdmitted;
  w.placements[w.pods.begin()->first] = {"dgx-0", {}};  // one of two left
  timers.NoteBelowMin(w.key, 5'000);
  timers.NoteBelowMin(w.key, 9'000);  // the grace counts from the first
  EXPECT_EQ(timers.NextWakeup(config, workloads, {}, 5'000), 35'000);
  EXPECT_TRUE(timers.TakeBelowMinPastGrace(config, workloads, 34'999).empty());
  std::vector<TimerOutcome> fired =
      timers.TakeBelowMinPastGrace(config, workloads, 35'000);
  ASSERT_EQ(fired.size(), 1u);
  EXPECT_EQ(fired[0].kind, TimerOutcome::Kind::kBelowMinMember);
  EXPECT_EQ(fired[0].reason,
            "1 of minMember 2 pods left for 30s; evicting the whole gang");
  EXPECT_TRUE(timers.TakeBelowMinPastGrace(config, workloads, 99'000).empty());
}

// Kueue's recoveryTimeout 0s: a gang short of members is never evicted.
TEST(GangTimersTest, NoGraceLimitNeverEvictsAShortGang) {
  SchedulerConfig config = Config();
  config.stale_gang_grace_ms = SchedulerConfig::kNeverEvictShortGang;
  GangTimers timers;
  std::map<std::string, Workload> workloads;
  Workload& w = workloads[Gang(2, 2).key] = Gang(2, 2);
  w.state = Workload::State::kAdmitted;
  w.placements[w.pods.begin()->first] = {"dgx-0", {}};  // one of two left
  timers.NoteBelowMin(w.key, 5'000);
  EXPECT_EQ(timers.NextWakeup(config, workloads, {}, 5'000), std::nullopt);
  EXPECT_TRUE(
      timers.TakeBelowMinPastGrace(config, workloads, 1'000'000'000).empty());
  EXPECT_EQ(timers.GraceEnds(config, w), std::nullopt);
}

TEST(GangTimersTest, GangThatRecoveredIsForgottenWithoutEviction) {
  const SchedulerConfig config = Config();
  GangTimers timers;
  std::map<std::string, Workload> workloads;
  Workload& w = workloads[Gang(2, 2).key] = Gang(2, 2);
  w.state = Workload::State::kAdmitted;
  for (const auto& [key, pod] : w.pods) w.placements[key] = {"dgx-0", {}};
  timers.NoteBelowMin(w.key, 0);
  EXPECT_TRUE(timers.TakeBelowMinPastGrace(config, workloads, 99'000).empty());
  EXPECT_EQ(timers.NextWakeup(config, workloads, {}, 0), std::nullopt);
}

TEST(GangTimersTest, ReservationGoesToTheLongestWaitingAndIsLiftedOnAdmission) {
  const SchedulerConfig config = Config();
  GangTimers timers;
  std::map<std::string, Workload> workloads;
  Workload& old = workloads["team-a/old"] =
      SinglePodWorkload("team-a", "old", 8);
  Workload& young = workloads["team-a/young"] =
      SinglePodWorkload("team-a", "young", 8);
  old.key = "team-a/old";
  young.key = "team-a/young";
  young.pending_since_ms = 100;
  GangTimers::LiveMap live{{old.key, &old}, {young.key, &young}};
  auto ready = [](const Workload&) { return true; };
  auto nodes = [](const Workload&) {
    return std::vector<std::string>{"dgx-1"};
  };
  timers.UpdateReservation(config, workloads, live, 599'999, ready, nodes);
  EXPECT_EQ(timers.reserved_for(), "");
  timers.UpdateReservation(config, workloads, live, 700'000, ready, nodes);
  EXPECT_EQ(timers.reserved_for(), old.key);
  EXPECT_EQ(timers.reserved_nodes(), std::set<std::string>{"dgx-1"});
  const uint64_t changes = timers.reservation_changes();
  timers.NoteAdmitted(young);  // not the one it is for
  EXPECT_EQ(timers.reserved_for(), old.key);
  timers.NoteAdmitted(old);
  EXPECT_EQ(timers.reserved_for(), "");
  EXPECT_TRUE(timers.reserved_nodes().empty());
  EXPECT_GT(timers.reservation_changes(), changes);
}

}  // namespace
}  // namespace gpusched
