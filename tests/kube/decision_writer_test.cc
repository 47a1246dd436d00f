// DecisionWriter carries the loop's decisions out against the fake API
// server: admissions and revocations (many in flight, in the loop's order
// where order matters), and a workload's reason code as Events and as its
// PodGroup's status, for both PodGroup flavors.
#include "api/controller/decision_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/codec/k8s_json.h"
#include "simdjson.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched {
namespace {

using kube::testing::CoschedulingPodGroup;
using kube::testing::FakeApiServer;
using kube::testing::Gated;
using kube::testing::GpuPod;
using kube::testing::Json;
using kube::testing::NativePodGroup;
using kube::testing::VolcanoPodGroup;
using kube::testing::WaitUntil;

WorkloadStatus RingStatus(PodGroup::Flavor flavor, ReasonCode code,
                          WorkloadPhase phase) {
  return WorkloadStatus{
      .workload = "team-a/ring",
      .code = code,
      .message =
          "queue team-a: needs 16 nvidia.com/gpu of flavor h100; "
          "0 free of nominal 8; position 1 of 1",
      .phase = phase,
      .members = {{"team-a", "ring-0", "uid-ring-0"},
                  {"team-a", "ring-1", "uid-ring-1"}},
      .group = PodGroupRef{.flavor = flavor,
                           .group_namespace = "team-a",
                           .name = "ring",
                           .uid = "uid-group-ring"},
      .min_member = 2,
      .admitted = phase == WorkloadPhase::kWaiting ? 0 : 2,
      .bound = phase == WorkloadPhase::kRunning ? 2 : 0};
}

// The status of a single pod: no PodGroup to write.
WorkloadStatus SoloStatus(ReasonCode code, WorkloadPhase phase) {
  WorkloadStatus status = RingStatus(PodGroup::Flavor::kVolcano, code, phase);
  status.group.reset();
  status.members.resize(1);
  return status;
}

class DecisionWriterTest : public ::testing::Test {
 protected:
  DecisionWriterTest()
      : client_(*kube::KubeClient::Create(server_.Config())),
        writer_(std::make_unique<DecisionWriter>(
            *client_,
            DecisionWriterOptions{.retry_after = std::chrono::milliseconds(10),
                                  .reporting_instance = "gpusched-0"})) {}
  void TearDown() override { writer_->Stop(); }
  bool Written(int64_t n) {
    return WaitUntil([&] { return writer_->counts().written >= n; });
  }
  // The Events about object `name`, oldest first.
  std::vector<Json> EventsAbout(const std::string& name) {
    std::vector<Json> out;
    for (Json& e : server_.Events()) {
      if (e["regarding"]["name"] == name) out.push_back(std::move(e));
    }
    return out;
  }

  FakeApiServer server_;
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<DecisionWriter> writer_;
};

TEST_F(DecisionWriterTest, WaitingGangGetsAnEventOnEachPodAndItsPodGroup) {
  server_.AddPodGroup(VolcanoPodGroup("team-a/ring", 2));
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kVolcano, ReasonCode::kWaitingForQuota,
                  WorkloadPhase::kWaiting)});
  ASSERT_TRUE(Written(1));
  ASSERT_TRUE(WaitUntil([&] { return server_.Events().size() == 3; }));
  for (const char* pod : {"ring-0", "ring-1"}) {
    std::vector<Json> events = EventsAbout(pod);
    ASSERT_EQ(events.size(), 1u) << pod;
    EXPECT_EQ(events[0]["reason"], "WaitingForQuota");
    EXPECT_EQ(events[0]["type"], "Normal");
    EXPECT_EQ(events[0]["regarding"]["kind"], "Pod");
    EXPECT_EQ(events[0]["reportingController"], "gpusched.io/scheduler");
    EXPECT_EQ(events[0]["reportingInstance"], "gpusched-0");
  }
  std::vector<Json> group = EventsAbout("ring");
  ASSERT_EQ(group.size(), 1u);
  EXPECT_EQ(group[0]["regarding"]["kind"], "PodGroup");
  EXPECT_EQ(group[0]["regarding"]["apiVersion"],
            "scheduling.volcano.sh/v1beta1");
  EXPECT_EQ(group[0]["regarding"]["uid"], "uid-group-ring");
  EXPECT_EQ(group[0]["reason"], "WaitingForQuota");
}

TEST_F(DecisionWriterTest,
       WaitingVolcanoGroupIsPendingAndUnschedulableWithTheCode) {
  server_.AddPodGroup(VolcanoPodGroup("team-a/ring", 2));
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kVolcano, ReasonCode::kWaitingForQuota,
                  WorkloadPhase::kWaiting)});
  ASSERT_TRUE(Written(1));
  EXPECT_EQ(server_.Count("PATCH podgroup"), 1);  // the object: no /status
  Json status =
      server_.PodGroup("scheduling.volcano.sh", "team-a/ring")["status"];
  EXPECT_EQ(status["phase"], "Pending");
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0]["type"], "Unschedulable");
  EXPECT_EQ(status["conditions"][0]["status"], "True");
  EXPECT_EQ(status["conditions"][0]["reason"], "WaitingForQuota");
  EXPECT_NE(status["conditions"][0]["message"].get<std::string>().find(
                "needs 16 nvidia.com/gpu"),
            std::string::npos);
}

TEST_F(DecisionWriterTest, RunningVolcanoGroupIsRunningAndScheduled) {
  server_.AddPodGroup(VolcanoPodGroup("team-a/ring", 2));
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kVolcano, ReasonCode::kAdmitted,
                  WorkloadPhase::kRunning)});
  ASSERT_TRUE(Written(1));
  Json status =
      server_.PodGroup("scheduling.volcano.sh", "team-a/ring")["status"];
  EXPECT_EQ(status["phase"], "Running");
  EXPECT_EQ(status["running"], 2);
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0]["type"], "Scheduled");
}

TEST_F(DecisionWriterTest, CoschedulingGroupPhaseAndCountsGoToItsStatus) {
  server_.AddPodGroup(CoschedulingPodGroup("team-a/ring", 2));
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kCoscheduling, ReasonCode::kWaitingForQuota,
                  WorkloadPhase::kWaiting)});
  ASSERT_TRUE(Written(1));
  EXPECT_EQ(
      server_.PodGroup("scheduling.x-k8s.io", "team-a/ring")["status"]["phase"],
      "Pending");
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kCoscheduling, ReasonCode::kAdmitted,
                  WorkloadPhase::kRunning)});
  ASSERT_TRUE(Written(2));
  EXPECT_EQ(server_.Count("PATCH podgroup/status"), 2);
  Json status =
      server_.PodGroup("scheduling.x-k8s.io", "team-a/ring")["status"];
  EXPECT_EQ(status["phase"], "Running");
  EXPECT_EQ(status["running"], 2);
  ASSERT_TRUE(WaitUntil([&] { return EventsAbout("ring").size() == 2; }));
  EXPECT_EQ(EventsAbout("ring")[1]["regarding"]["apiVersion"],
            "scheduling.x-k8s.io/v1alpha1");
  EXPECT_EQ(EventsAbout("ring")[1]["reason"], "Admitted");
}

// A native PodGroup has no phase: gpusched's own condition says it, False
// with the wait code while it waits, True once admitted; the PodGroup's
// Events name the built-in API.
TEST_F(DecisionWriterTest, NativeGroupGetsGpuschedsConditionOnly) {
  server_.ServeNativePodGroups(true);
  server_.AddPodGroup(NativePodGroup("team-a/ring", 2));
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kNative, ReasonCode::kWaitingForQuota,
                  WorkloadPhase::kWaiting)});
  ASSERT_TRUE(Written(1));
  Json status = server_.PodGroup("scheduling.k8s.io", "team-a/ring")["status"];
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0]["type"], "gpusched.io/Admitted");
  EXPECT_EQ(status["conditions"][0]["status"], "False");
  EXPECT_EQ(status["conditions"][0]["reason"], "WaitingForQuota");
  EXPECT_FALSE(status.contains("phase"));
  writer_->Publish({RingStatus(PodGroup::Flavor::kNative, ReasonCode::kAdmitted,
                               WorkloadPhase::kRunning)});
  ASSERT_TRUE(Written(2));
  status = server_.PodGroup("scheduling.k8s.io", "team-a/ring")["status"];
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0]["status"], "True");
  EXPECT_EQ(status["conditions"][0]["reason"], "Admitted");
  EXPECT_EQ(server_.Count("PATCH podgroup/status"), 2);
  ASSERT_TRUE(WaitUntil([&] { return EventsAbout("ring").size() == 2; }));
  EXPECT_EQ(EventsAbout("ring")[0]["regarding"]["apiVersion"],
            "scheduling.k8s.io/v1beta1");
}

// A workload the engine has given no code yet still gets a reason: the API
// server refuses a condition without one.
TEST_F(DecisionWriterTest, NativeConditionWithoutCodeIsPending) {
  server_.ServeNativePodGroups(true);
  server_.AddPodGroup(NativePodGroup("team-a/ring", 2));
  writer_->Publish({RingStatus(PodGroup::Flavor::kNative, ReasonCode::kNone,
                               WorkloadPhase::kWaiting)});
  ASSERT_TRUE(Written(1));
  Json status = server_.PodGroup("scheduling.k8s.io", "team-a/ring")["status"];
  ASSERT_EQ(status["conditions"].size(), 1u);
  EXPECT_EQ(status["conditions"][0]["reason"], "Pending");
}

// Issue G: Admitted is told once per workload, on its PodGroup: a gang of
// 64 costs one Event, not 64. A member's admission writes no Event of its
// own, and a phase change with the same code (admitted, then running)
// tells nobody: a replica that takes over and sees the gang start running
// does not tell it again.
TEST_F(DecisionWriterTest, AdmittedIsToldOncePerWorkloadOnItsPodGroup) {
  server_.AddPodGroup(VolcanoPodGroup("team-a/ring", 2));
  server_.AddPod(GpuPod("team-a/ring-0", 8, ""));
  server_.AddPod(GpuPod("team-a/ring-1", 8, ""));
  for (const char* pod : {"ring-0", "ring-1"}) {
    writer_->Publish(
        {AdmitMember{.pod = {"team-a", pod, std::string("uid-team-a-") + pod},
                     .node = "n1",
                     .workload = "team-a/ring",
                     .reason = "admitted on node n1"}});
  }
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kVolcano, ReasonCode::kAdmitted,
                  WorkloadPhase::kAdmitted)});
  WorkloadStatus running =
      RingStatus(PodGroup::Flavor::kVolcano, ReasonCode::kAdmitted,
                 WorkloadPhase::kRunning);
  running.code_changed = false;
  writer_->Publish({running});
  ASSERT_TRUE(Written(4));
  ASSERT_TRUE(WaitUntil([&] { return EventsAbout("ring").size() == 1; }));
  writer_->Stop();
  EXPECT_EQ(EventsAbout("ring")[0]["reason"], "Admitted");
  EXPECT_EQ(server_.Events().size(), 1u);  // none on the members
  EXPECT_EQ(server_.PodGroup("scheduling.volcano.sh",
                             "team-a/ring")["status"]["phase"],
            "Running");
}

// A workload without a PodGroup (most often a single pod) is told on its
// pod: it has no other object a user could look at.
TEST_F(DecisionWriterTest, AdmittedWithoutAPodGroupIsToldOnItsPod) {
  writer_->Publish(
      {SoloStatus(ReasonCode::kAdmitted, WorkloadPhase::kAdmitted)});
  ASSERT_TRUE(WaitUntil([&] { return server_.Events().size() == 1; }));
  EXPECT_EQ(EventsAbout("ring-0").size(), 1u);
  EXPECT_EQ(EventsAbout("ring-0")[0]["reason"], "Admitted");
  EXPECT_EQ(EventsAbout("ring-0")[0]["regarding"]["kind"], "Pod");
}

TEST_F(DecisionWriterTest, PreemptedIsAWarningAndASinglePodHasNoGroupToWrite) {
  writer_->Publish(
      {SoloStatus(ReasonCode::kPreempted, WorkloadPhase::kWaiting)});
  ASSERT_TRUE(Written(1));
  ASSERT_TRUE(WaitUntil([&] { return server_.Events().size() == 1; }));
  EXPECT_EQ(server_.Events()[0]["type"], "Warning");
  EXPECT_EQ(server_.Events()[0]["action"], "Preemption");
  EXPECT_EQ(server_.Count("PATCH podgroup"), 0);
}

// Issue J: an admission dropped in an API server outage would leave its
// member admitted and gated until the bind timeout evicts it. A failure the
// server recovers from (503) is retried past max_attempts, waiting longer
// each time, until the write lands.
TEST_F(DecisionWriterTest, AdmissionOutlastsAnApiServerOutage) {
  using std::chrono::milliseconds;
  server_.AddPod(GpuPod("team-a/solo", 1, ""));
  DecisionWriter writer(*client_, {.retry_after = milliseconds(1),
                                   .max_retry_after = milliseconds(8),
                                   .reporting_instance = "gpusched-0"});
  server_.FailNext(8);  // each attempt's first request fails: 8 attempts
  writer.Publish({AdmitMember{.pod = {"team-a", "solo", "uid-team-a-solo"},
                              .node = "n1",
                              .workload = "team-a/solo",
                              .reason = "admitted on node n1"}});
  ASSERT_TRUE(WaitUntil([&] { return writer.counts().written >= 1; }));
  writer.Stop();
  EXPECT_EQ(server_.Count("FAILED"), 8);
  EXPECT_EQ(writer.counts().retried, 8);
  EXPECT_EQ(writer.counts().failed, 0);
  EXPECT_EQ(server_.Pod("team-a/solo")["metadata"]["annotations"]
                                      ["gpusched.io/assigned-node"],
            "n1");
}

// A refusal the server will not take back (400) is given up after
// max_attempts, as before: it must not hold every later write for long.
TEST_F(DecisionWriterTest, RefusedWriteIsGivenUpAfterMaxAttempts) {
  server_.AddPod(GpuPod("team-a/solo", 1, ""));
  server_.FailNext(100, 400);
  writer_->Publish({AdmitMember{.pod = {"team-a", "solo", "uid-team-a-solo"},
                                .node = "n1",
                                .workload = "team-a/solo",
                                .reason = "admitted on node n1"}});
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().failed == 1; }));
  EXPECT_EQ(server_.Count("FAILED"), 5);  // max_attempts
  EXPECT_EQ(writer_->counts().written, 0);
}

TEST_F(DecisionWriterTest, AGroupAlreadyGoneIsNotAFailure) {
  writer_->Publish(
      {RingStatus(PodGroup::Flavor::kVolcano, ReasonCode::kWaitingForQuota,
                  WorkloadPhase::kWaiting)});
  ASSERT_TRUE(Written(1));
  EXPECT_EQ(writer_->counts().failed, 0);
  EXPECT_EQ(writer_->counts().retried, 0);
}

// A disruption budget's 429 is handed back to the loop once and never
// retried: the planner decides again (waits, or other victims).
TEST_F(DecisionWriterTest, BudgetRefusalGoesBackToTheLoopAndIsNotRetried) {
  server_.AddPod(GpuPod("team-a/victim", 2, "n1"));
  server_.BlockEvictions("team-a/victim", "serving-pdb");
  std::mutex mu;
  std::vector<EvictionRefusal> refusals;
  DecisionWriter writer(
      *client_, DecisionWriterOptions{
                    .retry_after = std::chrono::milliseconds(10),
                    .reporting_instance = "gpusched-0",
                    .on_eviction_blocked = [&](EvictionRefusal refusal) {
                      std::lock_guard lock(mu);
                      refusals.push_back(std::move(refusal));
                    }});
  const RevokeMember revoke{
      .pod = {"team-a", "victim", "uid-team-a-victim"},
      .node = "n1",
      .workload = "team-a/victim",
      .evict = true,
      .reason = "InClusterQueue: preempted by team-a/urgent (priority 5)"};
  writer.Publish({revoke});
  ASSERT_TRUE(WaitUntil([&] { return writer.counts().blocked == 1; }));
  // Later decisions still go through: the refusal did not stall the queue.
  writer.Publish(
      {RingStatus(PodGroup::Flavor::kVolcano, ReasonCode::kPreempting,
                  WorkloadPhase::kWaiting)});
  ASSERT_TRUE(WaitUntil([&] { return writer.counts().written == 1; }));
  writer.Stop();
  EXPECT_EQ(server_.Count("POST eviction"), 1);
  EXPECT_EQ(writer.counts().retried, 0);
  EXPECT_EQ(writer.counts().failed, 0);
  EXPECT_FALSE(server_.Pod("team-a/victim").is_null());
  std::lock_guard lock(mu);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_EQ(refusals[0].pod, revoke.pod);
  EXPECT_EQ(refusals[0].node, "n1");
  EXPECT_EQ(refusals[0].workload, "team-a/victim");
  EXPECT_NE(refusals[0].message.find("disruption budget"), std::string::npos)
      << refusals[0].message;
  // The budget is named only in the Status's causes: the refusal says it.
  EXPECT_NE(refusals[0].message.find("serving-pdb needs 1 healthy pods"),
            std::string::npos)
      << refusals[0].message;
}

AdmitMember Admit(const std::string& pod, const std::string& node) {
  return AdmitMember{.pod = {"team-a", pod, "uid-team-a-" + pod},
                     .node = node,
                     .workload = "team-a/" + pod,
                     .reason = "admitted on node " + node};
}

// How many pod writes the server held at once, at most.
int MostWritesAtOnce(const std::vector<std::string>& log) {
  int now = 0;
  int most = 0;
  for (const std::string& entry : log) {
    now += entry.starts_with("begin ") ? 1 : -1;
    most = std::max(most, now);
  }
  return most;
}

// The position of `entry` in the log, or -1.
int PositionOf(const std::vector<std::string>& log, const std::string& entry) {
  auto it = std::find(log.begin(), log.end(), entry);
  return it == log.end() ? -1 : static_cast<int>(it - log.begin());
}

// Issue G: an admission costs a round trip, not CPU; written one at a time
// a burst of queued pods drained at about 60 pods/s. Independent pods'
// admissions are now in flight together.
TEST_F(DecisionWriterTest, AdmissionsOfDifferentPodsAreInFlightTogether) {
  std::vector<QueueDecision> admissions;
  for (int i = 0; i < 12; ++i) {
    const std::string pod = "p" + std::to_string(i);
    server_.AddPod(GpuPod("team-a/" + pod, 1, ""));
    admissions.push_back(Admit(pod, "n1"));
  }
  server_.SetPodWriteDelay(std::chrono::milliseconds(100));
  writer_->Publish(std::move(admissions));
  ASSERT_TRUE(Written(12));
  EXPECT_GE(MostWritesAtOnce(server_.PodWriteLog()), 8);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(server_.Pod("team-a/p" +
                          std::to_string(i))["metadata"]["annotations"]
                                            ["gpusched.io/assigned-node"],
              "n1");
  }
}

// Writes of one pod keep the loop's order: its admission taken back, then
// given again on another node, reach the server one after the other.
TEST_F(DecisionWriterTest, WritesOfOnePodKeepTheirOrder) {
  server_.AddPod(GpuPod("team-a/p", 1, ""));
  server_.SetPodWriteDelay(std::chrono::milliseconds(50));
  writer_->Publish({Admit("p", "n1"),
                    RevokeMember{.pod = {"team-a", "p", "uid-team-a-p"},
                                 .node = "n1",
                                 .workload = "team-a/p",
                                 .evict = false,
                                 .reason = "taken back"},
                    Admit("p", "n2")});
  ASSERT_TRUE(Written(3));
  EXPECT_EQ(MostWritesAtOnce(server_.PodWriteLog()), 1);
  EXPECT_EQ(
      server_.Pod(
          "team-a/p")["metadata"]["annotations"]["gpusched.io/assigned-node"],
      "n2");
}

// An eviction lands before the admission of its preemptor starts: the
// preemptor needs the GPUs the victim frees on that node. Admissions on
// other nodes do not wait for it (decision_writer_refusal_test.cc).
TEST_F(DecisionWriterTest, AnEvictionIsWrittenBeforeAdmissionsOnItsNode) {
  server_.AddPod(GpuPod("team-a/victim", 8, "n1"));
  server_.AddPod(GpuPod("team-a/urgent", 8, ""));
  server_.AddPod(GpuPod("team-a/other", 1, ""));
  server_.SetPodWriteDelay(std::chrono::milliseconds(100));
  writer_->Publish(
      {RevokeMember{.pod = {"team-a", "victim", "uid-team-a-victim"},
                    .node = "n1",
                    .workload = "team-a/victim",
                    .evict = true,
                    .reason = "preempted by team-a/urgent"},
       Admit("urgent", "n1"), Admit("other", "n2")});
  ASSERT_TRUE(Written(3));
  const std::vector<std::string> log = server_.PodWriteLog();
  const int evicted = PositionOf(log, "end POST eviction team-a/victim");
  ASSERT_GE(evicted, 0);
  EXPECT_GT(PositionOf(log, "begin PATCH pod team-a/urgent"), evicted);
  // n2's admission was in flight with the eviction.
  EXPECT_LT(PositionOf(log, "begin PATCH pod team-a/other"), evicted);
}

RevokeMember EvictVictim() {
  return RevokeMember{.pod = {"team-a", "victim", "uid-team-a-victim"},
                      .node = "n1",
                      .workload = "team-a/victim",
                      .evict = true,
                      .bound = true,
                      .reason = "preempted by team-a/urgent"};
}

// A member that succeeded before its eviction was written did its part:
// deleting it would take it from the gang that counts it (the arena's
// groups waited for good). It is read first and left alone.
TEST_F(DecisionWriterTest, AMemberThatEndedIsNeverEvicted) {
  server_.AddPod(GpuPod("team-a/victim", 1, "n1"));
  server_.UpdatePod("team-a/victim",
                    [](Json& pod) { pod["status"]["phase"] = "Succeeded"; });
  writer_->Publish({EvictVictim()});
  ASSERT_TRUE(Written(1));
  EXPECT_EQ(server_.Count("POST eviction"), 0);
  EXPECT_FALSE(server_.Pod("team-a/victim").is_null());
}

// The eviction carries the version it read: a pod that changed between the
// read and the eviction (it may have ended) is read again, not deleted on
// the stale reading.
TEST_F(DecisionWriterTest, AnEvictionCarriesTheVersionItRead) {
  server_.AddPod(GpuPod("team-a/victim", 1, "n1"));
  server_.RaceNextGets("team-a/victim", 1);
  writer_->Publish({EvictVictim()});
  ASSERT_TRUE(Written(1));
  EXPECT_EQ(server_.Count("POST eviction"), 2);
  EXPECT_EQ(writer_->counts().retried, 1);
  EXPECT_TRUE(server_.Pod("team-a/victim").is_null());
}

// A write the watch can serve makes no GET: the pod as the watch holds it
// is patched directly.
TEST_F(DecisionWriterTest, AdmissionPatchesTheWatchedPodWithoutReadingIt) {
  server_.AddPod(Gated(GpuPod("team-a/p", 1, ""), {"gpusched.io/admission"}));
  simdjson::dom::parser parser;
  absl::StatusOr<Pod> decoded =
      DecodePod(parser.parse(server_.Pod("team-a/p").dump()).value(), "Pod");
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  kube::WatchedPods watched;
  watched.Listed({*decoded});
  DecisionWriter writer(
      *client_, {.reporting_instance = "gpusched-0", .watched = &watched});
  writer.Publish({Admit("p", "n1")});
  ASSERT_TRUE(WaitUntil([&] { return writer.counts().written == 1; }));
  writer.Stop();
  EXPECT_EQ(server_.Count("GET pod"), 0);
  EXPECT_EQ(server_.Count("PATCH pod"), 1);
  EXPECT_FALSE(server_.Pod("team-a/p")["spec"].contains("schedulingGates"));
}

}  // namespace
}  // namespace gpusched
