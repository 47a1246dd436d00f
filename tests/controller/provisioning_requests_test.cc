// The ProvisioningRequests the engine's state calls for (Kueue v0.19.2
// pkg/controller/admissionchecks/provisioning/provisioning.go names and
// fills them): one per check that needs one, for a workload holding quota
// reserved or admitted, its attempt the check's retries plus one.
#include "api/controller/provisioning_requests.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/queueing/checked_policy.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

class ProvisioningChecksTest : public EngineFixture {
 protected:
  void StartReserved() {
    Start(CheckedPolicy());
    SubmitGang("team-a", "g", 2, 4, 0);
    engine_->Schedule(0);
  }
};

TEST_F(ProvisioningChecksTest, ReservedWorkloadCallsForItsFirstAttempt) {
  StartReserved();
  const std::vector<ProvisioningCheckView> views =
      ProvisioningChecksOf(*engine_);
  ASSERT_EQ(views.size(), 1u);
  const ProvisioningCheckView& view = views[0];
  EXPECT_EQ(view.workload, "team-a/g");
  EXPECT_EQ(view.check, kCheck);
  EXPECT_FALSE(view.admitted);
  EXPECT_EQ(view.request.namespace_name, "team-a");
  EXPECT_EQ(view.request.name, "g-prov-1");
  EXPECT_EQ(view.request.class_name, "check-capacity.autoscaling.x-k8s.io");
  // Both members have one shape: one pod set of two, and both own it.
  ASSERT_EQ(view.pod_sets.size(), 1u);
  EXPECT_EQ(view.pod_sets[0].count, 2);
  ASSERT_EQ(view.request.pod_sets.size(), 1u);
  EXPECT_EQ(view.request.pod_sets[0].pod_template, "ppt-g-prov-1-main");
  EXPECT_EQ(view.request.owners.size(), 2u);
}

TEST_F(ProvisioningChecksTest, RetriedWorkloadCallsForTheNextAttempt) {
  StartReserved();
  engine_->SetCheckState("team-a/g", kCheck, CheckState::kRetry, "", 1'000);
  engine_->Schedule(1'000);
  EXPECT_TRUE(ProvisioningChecksOf(*engine_).empty());  // backing off
  engine_->Schedule(11'000);
  const std::vector<ProvisioningCheckView> views =
      ProvisioningChecksOf(*engine_);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].request.name, "g-prov-2");
}

TEST_F(ProvisioningChecksTest, AdmittedWorkloadKeepsItsRequestUntilFinished) {
  StartReserved();
  engine_->SetCheckState("team-a/g", kCheck, CheckState::kReady, "", 1'000);
  engine_->Schedule(1'000);
  const std::vector<ProvisioningCheckView> views =
      ProvisioningChecksOf(*engine_);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_TRUE(views[0].admitted);
  for (int i = 0; i < 2; ++i)
    engine_->Delete("team-a/g-" + std::to_string(i), 2'000);
  EXPECT_TRUE(ProvisioningChecksOf(*engine_).empty());
}

TEST_F(ProvisioningChecksTest, PodAnnotationsUnderKueuePrefixAreParameters) {
  Start(CheckedPolicy());
  for (int i = 0; i < 2; ++i) {
    Pod pod = GangPod("team-a", "g", i, 4, 2);
    pod.meta.annotations["provreq.kueue.x-k8s.io/ValidUntilSeconds"] = "60";
    engine_->AddPod(pod, 0);
  }
  engine_->Schedule(0);
  const std::vector<ProvisioningCheckView> views =
      ProvisioningChecksOf(*engine_);
  ASSERT_EQ(views.size(), 1u);
  EXPECT_EQ(views[0].request.parameters.at("ValidUntilSeconds"), "60");
}

// A pod group of two roles that differ only in their container's name
// (a driver and a worker image, say): two pod sets without a merge policy
// and under IdenticalPodTemplates, one under
// IdenticalWorkloadSchedulingRequirements (Kueue's mergePodSets).
class PodSetMergeTest : public ProvisioningChecksTest {
 protected:
  std::vector<ProvisioningPodSetView> PodSetsWith(PodSetMergePolicy merge,
                                                  int worker_gpus = 2) {
    Policy policy = CheckedPolicy();
    policy.provisioning_request_configs[0].pod_set_merge_policy = merge;
    Start(policy);
    for (int i = 0; i < 3; ++i) {
      Pod pod = GangPod("team-a", "g", i, i == 0 ? 2 : worker_gpus, 3);
      pod.containers[0].name = i == 0 ? "driver" : "worker";
      engine_->AddPod(pod, 0);
    }
    engine_->Schedule(0);
    const std::vector<ProvisioningCheckView> views =
        ProvisioningChecksOf(*engine_);
    EXPECT_EQ(views.size(), 1u);
    if (views.size() != 1) return {};
    EXPECT_EQ(views[0].request.pod_sets.size(), views[0].pod_sets.size());
    return views[0].pod_sets;
  }
};

TEST_F(PodSetMergeTest, RolesAreApartWithoutAMergePolicy) {
  const auto sets = PodSetsWith(PodSetMergePolicy::kNone);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].count, 1);
  EXPECT_EQ(sets[1].count, 2);
  EXPECT_EQ(sets[1].name, "main-1");
}

TEST_F(PodSetMergeTest, IdenticalPodTemplatesKeepsDifferentTemplatesApart) {
  EXPECT_EQ(PodSetsWith(PodSetMergePolicy::kIdenticalPodTemplates).size(), 2u);
}

TEST_F(PodSetMergeTest, IdenticalSchedulingRequirementsMergesRoles) {
  const auto sets =
      PodSetsWith(PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements);
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].count, 3);
  EXPECT_EQ(sets[0].name, "main");
}

TEST_F(PodSetMergeTest, DifferentRequestsAreNeverMerged) {
  EXPECT_EQ(
      PodSetsWith(PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements,
                  /*worker_gpus=*/1)
          .size(),
      2u);
}

}  // namespace
}  // namespace gpusched
