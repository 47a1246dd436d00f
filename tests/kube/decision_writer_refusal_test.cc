// Issue K §3: a write the cluster refuses never deletes a pod that never
// ran. A refused admission goes back to the loop and nothing says
// "Admitted"; a gated pod is never evicted; a revocation waiting for its
// retry holds up no admission elsewhere; a replica that loses the Lease
// drops what it queued.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/controller/decision_writer.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched {
namespace {

using kube::testing::FakeApiServer;
using kube::testing::Gated;
using kube::testing::GpuPod;
using kube::testing::WaitUntil;
using std::chrono::milliseconds;

constexpr char kGate[] = "gpusched.io/admission";
constexpr char kDenied[] =
    "pods \"refused\" is forbidden: ValidatingAdmissionPolicy 'keep-gated' "
    "with binding 'keep-gated' denied request: gate lifting is not allowed";

AdmitMember AdmitOn(const std::string& pod, const std::string& node) {
  return AdmitMember{.pod = {"team-a", pod, "uid-team-a-" + pod},
                     .node = node,
                     .workload = "team-a/" + pod,
                     .reason = "admitted on node " + node};
}

RevokeMember Revoke(const std::string& pod, const std::string& node,
                    bool bound) {
  return RevokeMember{.pod = {"team-a", pod, "uid-team-a-" + pod},
                      .node = node,
                      .workload = "team-a/" + pod,
                      .evict = true,
                      .bound = bound,
                      .reason = "taken back"};
}

// The single pod's Admitted status, told on the pod itself.
WorkloadStatus AdmittedStatus(const std::string& pod) {
  return WorkloadStatus{.workload = "team-a/" + pod,
                        .code = ReasonCode::kAdmitted,
                        .message = "admitted on node n1",
                        .phase = WorkloadPhase::kAdmitted,
                        .members = {{"team-a", pod, "uid-team-a-" + pod}},
                        .admitted = 1};
}

class DecisionWriterRefusalTest : public ::testing::Test {
 protected:
  DecisionWriterRefusalTest()
      : client_(*kube::KubeClient::Create(server_.Config())) {}
  void TearDown() override {
    if (writer_ != nullptr) writer_->Stop();
  }
  void StartWriter(milliseconds retry_after = milliseconds(10)) {
    writer_ = std::make_unique<DecisionWriter>(
        *client_, DecisionWriterOptions{
                      .retry_after = retry_after,
                      .max_retry_after = retry_after,
                      .reporting_instance = "gpusched-0",
                      .on_admission_refused = [this](AdmissionRefusal refusal) {
                        std::lock_guard lock(mu_);
                        refusals_.push_back(std::move(refusal));
                      }});
  }
  std::vector<AdmissionRefusal> Refusals() {
    std::lock_guard lock(mu_);
    return refusals_;
  }
  int EventsWithReason(const std::string& reason) {
    int n = 0;
    for (const auto& e : server_.Events()) n += e["reason"] == reason;
    return n;
  }

  FakeApiServer server_;
  std::unique_ptr<kube::KubeClient> client_;
  std::unique_ptr<DecisionWriter> writer_;
  std::mutex mu_;
  std::vector<AdmissionRefusal> refusals_;
};

TEST_F(DecisionWriterRefusalTest, ARefusedAdmissionGoesBackAndIsNeverToldDone) {
  server_.AddPod(Gated(GpuPod("team-a/refused", 4, ""), {kGate}));
  server_.DenyPodUpdates("team-a/refused", 422, kDenied);
  StartWriter();
  writer_->Publish({AdmitOn("refused", "n1"), AdmittedStatus("refused")});
  ASSERT_TRUE(WaitUntil([&] { return !Refusals().empty(); }));
  const AdmissionRefusal refusal = Refusals()[0];
  EXPECT_EQ(refusal.pod.uid, "uid-team-a-refused");
  EXPECT_EQ(refusal.node, "n1");
  EXPECT_EQ(refusal.workload, "team-a/refused");
  EXPECT_EQ(refusal.message, kDenied);  // the API server's own words
  EXPECT_EQ(server_.Count("DENIED PATCH pod"), 5);  // max_attempts
  // The Admitted status waited for the write, and went with it.
  EXPECT_FALSE(WaitUntil([&] { return EventsWithReason("Admitted") > 0; },
                         milliseconds(300)));
  EXPECT_EQ(writer_->counts().failed, 1);
  EXPECT_EQ((writer_->failure_counts()),
            (std::map<WriteFailureKey, int64_t>{{{"admit", "422"}, 1}}));
  EXPECT_TRUE(server_.Pod("team-a/refused")["spec"].contains(
      "schedulingGates"));  // still held, never ran
}

TEST_F(DecisionWriterRefusalTest, AnAdmittedEventWaitsForTheWriteToLand) {
  server_.AddPod(Gated(GpuPod("team-a/solo", 1, ""), {kGate}));
  server_.SetPodWriteDelay(milliseconds(300));
  StartWriter();
  writer_->Publish({AdmitOn("solo", "n1"), AdmittedStatus("solo")});
  // The status alone would be written at once; it waits for the PATCH.
  EXPECT_FALSE(WaitUntil([&] { return EventsWithReason("Admitted") > 0; },
                         milliseconds(150)));
  ASSERT_TRUE(WaitUntil([&] { return EventsWithReason("Admitted") == 1; }));
  EXPECT_TRUE(Refusals().empty());
}

// A pod whose gate is still on never ran: taking its admission back writes
// nothing (a bare pod would be deleted by an eviction).
TEST_F(DecisionWriterRefusalTest, AGatedPodIsNeverEvicted) {
  server_.AddPod(Gated(GpuPod("team-a/held", 4, ""), {kGate}));
  StartWriter();
  writer_->Publish({Revoke("held", "n1", /*bound=*/false)});
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().written == 1; }));
  EXPECT_EQ(server_.Count("POST eviction"), 0);
  EXPECT_FALSE(server_.Pod("team-a/held").is_null());
}

// One whose gate was lifted is pinned to its node for good: evicted.
TEST_F(DecisionWriterRefusalTest, AnUngatedUnboundPodIsEvicted) {
  server_.AddPod(GpuPod("team-a/pinned", 4, ""));
  StartWriter();
  writer_->Publish({Revoke("pinned", "n1", /*bound=*/false)});
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().written == 1; }));
  EXPECT_EQ(server_.Count("POST eviction"), 1);
}

TEST_F(DecisionWriterRefusalTest,
       ARevocationWaitingForItsRetryHoldsUpOnlyItsOwnNode) {
  server_.AddPod(GpuPod("team-a/victim", 8, "n1"));
  server_.AddPod(GpuPod("team-a/urgent", 8, ""));
  server_.AddPod(GpuPod("team-a/elsewhere", 8, ""));
  server_.FailNext(1);  // the eviction's first try: retried in 2 s
  StartWriter(milliseconds(2000));
  writer_->Publish({Revoke("victim", "n1", /*bound=*/true)});
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().retried == 1; }));
  writer_->Publish({AdmitOn("urgent", "n1"), AdmitOn("elsewhere", "n2")});
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().written == 1; },
                        milliseconds(1000)));
  EXPECT_EQ(server_.Pod("team-a/elsewhere")["metadata"]["annotations"]
                                           ["gpusched.io/assigned-node"],
            "n2");
  EXPECT_TRUE(
      server_.Pod("team-a/urgent")["metadata"]["annotations"].is_null());
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().written == 3; }));
  const std::vector<std::string> log = server_.PodWriteLog();
  auto at = [&](const std::string& entry) {
    return std::find(log.begin(), log.end(), entry) - log.begin();
  };
  EXPECT_LT(at("end POST eviction team-a/victim"),
            at("begin PATCH pod team-a/urgent"));
}

TEST_F(DecisionWriterRefusalTest, LosingTheLeaseDropsQueuedWritesAtOnce) {
  server_.AddPod(GpuPod("team-a/a", 1, ""));
  server_.AddPod(GpuPod("team-a/b", 1, ""));
  server_.FailNext(1);  // a's first try fails: its retry waits 2 s
  StartWriter(milliseconds(2000));
  writer_->Publish({AdmitOn("a", "n1")});
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().retried == 1; }));
  writer_->SetWriting(false);
  writer_->Publish({AdmitOn("b", "n1")});  // a standby writes nothing
  EXPECT_FALSE(WaitUntil([&] { return server_.Count("PATCH pod") > 0; },
                         milliseconds(2500)));
  EXPECT_EQ(writer_->counts().written, 0);
  // Deciding again writes what it is given from then on.
  writer_->SetWriting(true);
  writer_->Publish({AdmitOn("b", "n1")});
  ASSERT_TRUE(WaitUntil([&] { return writer_->counts().written == 1; }));
  EXPECT_TRUE(server_.Pod("team-a/a")["metadata"]["annotations"].is_null());
}

}  // namespace
}  // namespace gpusched
