// What the queueing core does with a pod whose DRA claims quota cannot
// charge as they stand (Pod::claim_hold, scheduler/dra_quota.h): a queued
// workload waits with Kueue's reason and the sentence naming the field,
// never admitted uncharged; and how adoption charges claims read late.
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

constexpr char kAllMode[] =
    "pod spec.resourceClaims[0] (gpus): ResourceClaimTemplate team-a/all "
    "spec.spec.devices.requests[0].exactly.allocationMode: Unsupported value: "
    "\"All\"";

Pod HeldPod(const std::string& name, ClaimHold::Kind kind,
            const std::string& reason) {
  Pod pod = QueuedPod("team-a", name, 0);
  pod.resource_claims.push_back({.name = "gpus", .template_name = "all"});
  pod.claim_hold = {.kind = kind, .reason = reason};
  return pod;
}

class ClaimHoldTest : public EngineFixture {
 protected:
  void SetUp() override { Start(TwoTeams()); }
  const Workload& W(const std::string& name) {
    return engine_->workloads().at("team-a/" + name);
  }
};

TEST_F(ClaimHoldTest, AnInadmissibleClaimWaitsWithKueuesReasonAndTheField) {
  engine_->AddPod(HeldPod("all", ClaimHold::Kind::kInadmissible, kAllMode), 0);
  engine_->Schedule(0);
  const Workload& w = W("all");
  EXPECT_FALSE(w.admitted());  // quota is free: only the claim holds it
  EXPECT_EQ(engine_->PendingCode(w), ReasonCode::kInadmissible);
  EXPECT_NE(w.reason.find("exactly.allocationMode"), std::string::npos)
      << w.reason;
  EXPECT_EQ(engine_->quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 0);
}

TEST_F(ClaimHoldTest, AClaimNotKnownYetWaitsForItThenIsAdmitted) {
  Pod pod = HeldPod("later", ClaimHold::Kind::kClaimNotKnown,
                    "pod spec.resourceClaims[0] (gpus): waiting for "
                    "ResourceClaimTemplate team-a/all: not known yet");
  engine_->AddPod(pod, 0);
  engine_->Schedule(0);
  EXPECT_EQ(engine_->PendingCode(W("later")),
            ReasonCode::kWaitingForResourceClaim);
  EXPECT_FALSE(W("later").admitted());
  // The template arrives: the sync charges the claim and sends the pod
  // again.
  pod.claim_hold = {};
  pod.claim_requests = {{"nvidia.com/gpu", 2}};
  engine_->AddPod(pod, 1'000);
  engine_->Schedule(1'000);
  ASSERT_TRUE(W("later").admitted());
  // 2 GPUs from the claim, none from the container.
  EXPECT_EQ(W("later").charged.at({"h100", "nvidia.com/gpu"}), 2);
}

TEST_F(ClaimHoldTest, OneHeldMemberHoldsTheWholeGang) {
  for (int i = 0; i < 2; ++i) {
    Pod pod = GangPod("team-a", "ring", i, 2, 2);
    if (i == 1) {
      pod.resource_claims.push_back({.name = "gpus", .template_name = "all"});
      pod.claim_hold = {.kind = ClaimHold::Kind::kInadmissible,
                        .reason = kAllMode};
    }
    engine_->AddPod(pod, 0);
  }
  engine_->Schedule(0);
  EXPECT_FALSE(W("ring").admitted());
  EXPECT_EQ(engine_->PendingCode(W("ring")), ReasonCode::kInadmissible);
}

TEST_F(ClaimHoldTest, AHeldPodDoesNotShareTheVerdictOfItsClass) {
  // Same queue and container shape: without the hold they are one class.
  engine_->AddPod(QueuedPod("team-a", "plain", 0), 0);
  engine_->AddPod(HeldPod("all", ClaimHold::Kind::kInadmissible, kAllMode), 0);
  engine_->Schedule(0);
  EXPECT_TRUE(W("plain").admitted());
  EXPECT_EQ(engine_->PendingCode(W("all")), ReasonCode::kInadmissible);
}

// The DRA lists arrived after the pod was adopted: its claims' GPUs are
// charged then, so the queue's usage is never short of what runs.
TEST_F(ClaimHoldTest, AnAdoptedPodIsChargedItsClaimsWhenTheyAreRead) {
  Pod pod = BoundTo(QueuedPod("team-a", "dra", 0), "dgx-0", "");
  pod.resource_claims.push_back({.name = "gpus", .template_name = "two"});
  pod.claim_hold = {.kind = ClaimHold::Kind::kClaimNotKnown, .reason = "x"};
  ASSERT_EQ(engine_->Adopt(pod, "dgx-0", true, 0).outcome,
            Adoption::Outcome::kAdopted);
  EXPECT_EQ(engine_->quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 0);
  pod.claim_hold = {};
  pod.claim_requests = {{"nvidia.com/gpu", 2}};
  ASSERT_EQ(engine_->Adopt(pod, "dgx-0", true, 1'000).outcome,
            Adoption::Outcome::kAlreadyPlaced);
  // 0 + 2 GPUs from the claim, on dgx-0's flavor.
  EXPECT_EQ(engine_->quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 2);
  EXPECT_EQ(W("dra").charged.at({"h100", "nvidia.com/gpu"}), 2);
  engine_->Finish("team-a/dra", 2'000);
  EXPECT_EQ(engine_->quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 0);
}

// A running pod adopted after a restart ran since its status.startTime:
// forecasts, the runtime history and the minimum runtime count from there.
TEST_F(ClaimHoldTest, AdoptionKeepsARunningWorkloadsStart) {
  Pod pod = BoundTo(QueuedPod("team-a", "long", 2), "dgx-0", "0,1");
  pod.start_unix_seconds = 1'000;  // 1,000 s after the epoch
  ASSERT_EQ(engine_->Adopt(pod, "dgx-0", true, 5'000'000).outcome,
            Adoption::Outcome::kAdopted);  // restarted at 5,000 s
  EXPECT_EQ(W("long").RunStartMs(), 1'000'000);
  EXPECT_EQ(W("long").admitted_at_ms, 5'000'000);  // the bind timeout's
}

TEST_F(ClaimHoldTest, AnAdoptedPodWithoutAStartRunsFromTheRestart) {
  Pod pod = AdmittedOn(QueuedPod("team-a", "unbound", 2), "dgx-0");
  ASSERT_EQ(engine_->Adopt(pod, "dgx-0", false, 5'000).outcome,
            Adoption::Outcome::kAdopted);
  EXPECT_EQ(W("unbound").RunStartMs(), 5'000);
}

// The API server refused the write that lifts a member's gate: the
// admission is withdrawn whole, quota released, and the workload backs off.
TEST_F(ClaimHoldTest, ARefusedAdmissionIsWithdrawnAndBacksOff) {
  engine_->AddPod(QueuedPod("team-a", "refused", 4), 0);
  engine_->Schedule(0);
  ASSERT_TRUE(W("refused").admitted());
  engine_->AdmissionRefused(
      "team-a/refused", "denied by ValidatingAdmissionPolicy 'no-gpus'", 1'000);
  const Workload& w = W("refused");
  EXPECT_FALSE(w.admitted());
  EXPECT_TRUE(w.placements.empty());
  EXPECT_EQ(w.code, ReasonCode::kAdmissionRefused);
  EXPECT_NE(w.reason.find("no-gpus"), std::string::npos);
  EXPECT_EQ(engine_->quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 0);
  // The first gang backoff (10 s by default) before it is tried again.
  EXPECT_EQ(w.backoff_until_ms, 11'000);
  engine_->Schedule(2'000);
  EXPECT_FALSE(W("refused").admitted());
  engine_->Schedule(11'000);
  EXPECT_TRUE(W("refused").admitted());
}

TEST_F(ClaimHoldTest, AGangOfAFailingPodGroupApiWaitsAndNothingElseDoes) {
  Pod member = GangPod("team-a", "vc", 0, 2, 1);
  member.meta.labels.erase("kueue.x-k8s.io/pod-group-name");
  member.meta.annotations[kVolcanoGroupAnnotation] = "vc";
  ReadPodAdmissionState(member);
  engine_->SetPodGroupApiFailing(PodGroup::Flavor::kVolcano,
                                 "conversion webhook for "
                                 "podgroups.scheduling.volcano.sh failed");
  engine_->AddPod(member, 0);
  engine_->AddPod(QueuedPod("team-a", "solo", 2), 0);
  engine_->Schedule(0);
  EXPECT_TRUE(W("solo").admitted());
  ASSERT_TRUE(engine_->workloads().contains("team-a/vc"));
  const Workload& gang = W("vc");
  EXPECT_EQ(gang.code, ReasonCode::kPodGroupApiUnavailable);
  EXPECT_NE(gang.reason.find("conversion webhook"), std::string::npos);
}

}  // namespace
}  // namespace gpusched
