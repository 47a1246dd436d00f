// Admission checks beside waitForPodsReady.blockAdmission and Admission
// Fair Sharing, as Kueue v0.19.2 combines them:
//  - blockAdmission: Kueue's cache counts every workload that holds a quota
//    reservation among those whose pods are not ready
//    (pkg/cache/scheduler/cache.go addOrUpdateWorkloadWithoutLock,
//    clusterqueue.go WorkloadsNotReady), and its scheduler waits before it
//    reserves quota (pkg/scheduler/scheduler.go waitForPodsReadyIfNeeded).
//    Admission once the checks are Ready is the workload controller's, so
//    nothing blocks it.
//  - Admission Fair Sharing: the entry penalty is pushed when quota is
//    reserved (scheduler.go assumeWorkload) and folded into the LocalQueue's
//    consumed usage when the workload turns Admitted (workload_controller.go
//    reconcileAfsPenaltiesOnUpdate); a deactivated workload's is dropped.

#include <cmath>
#include <map>
#include <string>

#include "gtest/gtest.h"
#include "queueing/admission_checks.h"
#include "queueing/engine.h"
#include "tests/queueing/checked_policy.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

class AdmissionChecksWithOptionsTest : public EngineFixture {
 protected:
  const Workload& W(const std::string& key) {
    return engine_->workloads().at(key);
  }
  void Set(const std::string& key, CheckState state, int64_t now) {
    engine_->SetCheckState(key, kCheck, state, "from the test", now);
    engine_->Schedule(now);
  }
};

Policy BlockingCheckedPolicy() {
  Policy policy = CheckedPolicy();
  policy.config.gang_block_admission = true;
  return policy;
}

TEST_F(AdmissionChecksWithOptionsTest, ReservationBlocksOtherAdmissions) {
  Start(BlockingCheckedPolicy());
  SubmitGang("team-a", "checked", 1, 4, 0);
  SubmitGang("team-b", "plain", 1, 4, 1);
  engine_->Schedule(2);
  ASSERT_TRUE(W("team-a/checked").check_reservation.has_value());
  EXPECT_FALSE(W("team-b/plain").admitted());
  EXPECT_EQ(W("team-b/plain").code, ReasonCode::kWaitingForPodsReady);
  EXPECT_EQ(W("team-b/plain").reason,
            "waiting for all admitted workloads to be in PodsReady condition "
            "(waitForPodsReady.blockAdmission): team-a/checked holds quota, "
            "waiting for its admission checks");
}

TEST_F(AdmissionChecksWithOptionsTest, ReadyChecksAdmitDespiteBlockAdmission) {
  Start(BlockingCheckedPolicy());
  SubmitGang("team-b", "plain", 1, 4, 0);
  engine_->Schedule(1);
  ASSERT_TRUE(W("team-b/plain").admitted());  // not bound: blocks fits
  SubmitGang("team-a", "checked", 1, 4, 2);
  engine_->Schedule(3);
  EXPECT_FALSE(W("team-a/checked").check_reservation.has_value())
      << "the scheduler waits for PodsReady before it reserves";
  EXPECT_EQ(W("team-a/checked").code, ReasonCode::kWaitingForPodsReady);
  engine_->MarkBound("team-b/plain-0");
  engine_->Schedule(4);
  ASSERT_TRUE(W("team-a/checked").check_reservation.has_value());
  SubmitGang("team-b", "later", 1, 4, 5);  // a fit that will be blocked
  Set("team-a/checked", CheckState::kReady, 6);
  EXPECT_TRUE(W("team-a/checked").admitted());
  EXPECT_EQ(W("team-b/later").code, ReasonCode::kWaitingForPodsReady);
  engine_->MarkBound("team-a/checked-0");
  engine_->Schedule(7);
  EXPECT_TRUE(W("team-b/later").admitted());
}

// team-a's ClusterQueue orders by usage, with a ten-second half-life
// sampled every second: the penalty is 4 GPUs * (1 - 0.5^0.1).
Policy FairCheckedPolicy() {
  Policy policy = CheckedPolicy();
  policy.cluster_queues[0].admission_mode = AdmissionMode::kUsageBased;
  policy.config.admission_fair_sharing = AdmissionFairSharingConfig{
      .usage_half_life_ms = 10'000, .usage_sampling_interval_ms = 1'000};
  return policy;
}
const double kPenalty = 4 * (1 - std::pow(0.5, 0.1));

TEST_F(AdmissionChecksWithOptionsTest, PenaltyIsPendingWhileChecksRun) {
  Start(FairCheckedPolicy());
  SubmitGang("team-a", "g", 1, 4, 0);
  engine_->Schedule(0);
  ASSERT_TRUE(W("team-a/g").check_reservation.has_value());
  EXPECT_NEAR(engine_->AfsUsage("team-a/q"), kPenalty, 1e-9);
  EXPECT_TRUE(engine_->AfsUsages().at("team-a/q").consumed.empty())
      << "not folded into consumed usage before admission";
}

TEST_F(AdmissionChecksWithOptionsTest, AdmissionFoldsThePendingPenaltyOnce) {
  Start(FairCheckedPolicy());
  SubmitGang("team-a", "g", 1, 4, 0);
  engine_->Schedule(0);
  Set("team-a/g", CheckState::kReady, 0);
  ASSERT_TRUE(W("team-a/g").admitted());
  EXPECT_NEAR(engine_->AfsUsages().at("team-a/q").consumed.at("nvidia.com/gpu"),
              kPenalty, 1e-9);
  EXPECT_NEAR(engine_->AfsUsage("team-a/q"), kPenalty, 1e-9)
      << "the penalty counts once, not pending and folded";
}

TEST_F(AdmissionChecksWithOptionsTest, RetryKeepsThePendingPenalty) {
  Start(FairCheckedPolicy());
  SubmitGang("team-a", "g", 1, 4, 0);
  engine_->Schedule(0);
  Set("team-a/g", CheckState::kRetry, 0);
  ASSERT_FALSE(W("team-a/g").check_reservation.has_value());
  EXPECT_NEAR(engine_->AfsUsage("team-a/q"), kPenalty, 1e-9);
}

TEST_F(AdmissionChecksWithOptionsTest, RejectionDropsThePendingPenalty) {
  Start(FairCheckedPolicy());
  SubmitGang("team-a", "g", 1, 4, 0);
  engine_->Schedule(0);
  Set("team-a/g", CheckState::kRejected, 0);
  ASSERT_TRUE(W("team-a/g").deactivated);
  EXPECT_EQ(engine_->AfsUsage("team-a/q"), 0);
}

// Kueue's provisioning controller hands the pods the provisioned nodes'
// selector (podSetUpdates): the members are placed only where it matches.
TEST_F(AdmissionChecksWithOptionsTest, ReadyUpdatesNodeSelectorPlacesTheGang) {
  Start(CheckedPolicy());
  SubmitGang("team-a", "g", 2, 4, 0);
  engine_->Schedule(0);
  engine_->SetCheckState("team-a/g", kCheck, CheckState::kReady, "", 1,
                         PodSetUpdate{.node_selector = {{"pool", "new"}}});
  engine_->Schedule(1);
  EXPECT_FALSE(W("team-a/g").admitted()) << "no node has pool=new yet";
  Node provisioned = Dgx("dgx-new");
  provisioned.meta.labels["pool"] = "new";
  model_.UpsertNode(provisioned);
  engine_->Schedule(2);
  ASSERT_TRUE(W("team-a/g").admitted());
  for (const auto& [pod, placement] : W("team-a/g").placements) {
    EXPECT_EQ(placement.node, "dgx-new") << pod;
  }
}

TEST_F(AdmissionChecksWithOptionsTest, RetryClearsTheCheckUpdate) {
  Start(CheckedPolicy());
  SubmitGang("team-a", "g", 1, 4, 0);
  engine_->Schedule(0);
  engine_->SetCheckState("team-a/g", kCheck, CheckState::kRetry, "", 1,
                         PodSetUpdate{.node_selector = {{"pool", "new"}}});
  EXPECT_TRUE(MergedPodSetUpdate(W("team-a/g").checks).empty());
}

TEST(ProvisionedPodSetUpdateTest, AnnotatesAndSelectsFromClassDetails) {
  const ProvisioningRequestConfig config{
      .name = "prc",
      .provisioning_class_name = "queued-provisioning.gke.io",
      .node_selector_updates = {
          {.key = "pool", .value_from_provisioning_class_detail = "nodePool"},
          {.key = "absent",
           .value_from_provisioning_class_detail = "missing"}}};
  const PodSetUpdate update = ProvisionedPodSetUpdate(
      "g-prov-1", config, {{"nodePool", "pool-7"}, {"other", "x"}});
  EXPECT_EQ(
      update.annotations,
      (std::map<std::string, std::string>{
          {kConsumeProvisioningRequestAnnotation, "g-prov-1"},
          {kProvisioningClassNameAnnotation, "queued-provisioning.gke.io"}}));
  EXPECT_EQ(update.node_selector,
            (std::map<std::string, std::string>{{"pool", "pool-7"}}))
      << "a detail the request lacks is skipped";
}

}  // namespace
}  // namespace gpusched
