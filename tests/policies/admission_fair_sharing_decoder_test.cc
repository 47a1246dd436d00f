// Admission Fair Sharing in the policy: Kueue's Configuration
// admissionFairSharing onto SchedulerConfig, a ClusterQueue's
// admissionScope (v1beta2 and v1beta1), a LocalQueue's fairSharing.weight,
// Kueue's defaults (v0.19.2 apis/config/v1beta2/defaults.go) and each
// error with its text (pkg/config/validation.go).

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/policy_loader.h"
#include "tests/policies/error_case.h"

namespace gpusched {
namespace {

using ::gpusched::testing::CaseName;
using ::gpusched::testing::ErrorCase;
using ::gpusched::testing::ErrorsOf;
using ::testing::ElementsAreArray;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

// The policy `yaml` loads to; a failed load fails the test.
Policy PolicyOf(std::string_view yaml) {
  const PolicyResult result = ParsePolicyText(yaml, "p.yaml");
  EXPECT_TRUE(result.errors.empty())
      << (result.errors.empty() ? "" : result.errors[0].message);
  return result.policy.value_or(Policy{});
}

TEST(AdmissionFairSharingDecoderTest, ConfigurationMapsOntoSchedulerConfig) {
  const Policy policy = PolicyOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  usageHalfLifeTime: 168h
  usageSamplingInterval: 5m
  resourceWeights:
    nvidia.com/gpu: 10
    cpu: 0.5
)");
  ASSERT_TRUE(policy.config.admission_fair_sharing.has_value());
  const AdmissionFairSharingConfig& afs = *policy.config.admission_fair_sharing;
  EXPECT_EQ(afs.usage_half_life_ms, 168 * 3'600'000LL);
  EXPECT_EQ(afs.usage_sampling_interval_ms, 300'000);
  EXPECT_THAT(
      afs.resource_weights,
      UnorderedElementsAre(Pair("nvidia.com/gpu", 10.0), Pair("cpu", 0.5)));
}

TEST(AdmissionFairSharingDecoderTest, WithoutTheSectionItIsOff) {
  const Policy policy = PolicyOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
)");
  EXPECT_FALSE(policy.config.admission_fair_sharing.has_value());
}

// defaults.go: an interval of 0 (or none) becomes 5m; the half-life has no
// default (0: usage forgotten at every sample).
TEST(AdmissionFairSharingDecoderTest, ZeroSamplingIntervalTakesFiveMinutes) {
  const Policy policy = PolicyOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing: {usageSamplingInterval: 0s}
)");
  ASSERT_TRUE(policy.config.admission_fair_sharing.has_value());
  EXPECT_EQ(policy.config.admission_fair_sharing->usage_sampling_interval_ms,
            300'000);
  EXPECT_EQ(policy.config.admission_fair_sharing->usage_half_life_ms, 0);
}

TEST(AdmissionFairSharingDecoderTest, ClusterQueueAdmissionScopeUsageBased) {
  const Policy policy = PolicyOf(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: b}
spec:
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: c}
spec:
  admissionScope: {admissionMode: NoAdmissionFairSharing}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: d}
spec: {}
)");
  ASSERT_EQ(policy.cluster_queues.size(), 4u);
  EXPECT_EQ(policy.cluster_queues[0].admission_mode,
            AdmissionMode::kUsageBased);
  EXPECT_EQ(policy.cluster_queues[1].admission_mode,
            AdmissionMode::kUsageBased);
  EXPECT_EQ(policy.cluster_queues[2].admission_mode,
            AdmissionMode::kNoAdmissionFairSharing);
  EXPECT_EQ(policy.cluster_queues[3].admission_mode,
            AdmissionMode::kNoAdmissionFairSharing);
}

TEST(AdmissionFairSharingDecoderTest, LocalQueueWeightInThousandths) {
  const Policy policy = PolicyOf(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: heavy, namespace: ns}
spec:
  clusterQueue: a
  fairSharing: {weight: "2.5"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: plain, namespace: ns}
spec: {clusterQueue: a}
)");
  ASSERT_EQ(policy.local_queues.size(), 2u);
  EXPECT_EQ(policy.local_queues[0].fair_weight_milli, 2500);
  EXPECT_EQ(policy.local_queues[1].fair_weight_milli, 1000);  // Kueue's 1
}

class AdmissionFairSharingErrorTest
    : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(AdmissionFairSharingErrorTest, ReportsExactly) {
  EXPECT_THAT(ErrorsOf(GetParam().yaml), ElementsAreArray(GetParam().errors));
}

const ErrorCase kErrorCases[] = {
    {"NegativeHalfLife",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing: {usageHalfLifeTime: -1h}
)",
     {"p.yaml:3: Configuration (document 1): "
      "admissionFairSharing.usageHalfLifeTime: Invalid value \"-1h\": must be "
      "non-negative"}},
    {"NegativeSamplingInterval",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  usageSamplingInterval: -5m
)",
     {"p.yaml:4: Configuration (document 1): "
      "admissionFairSharing.usageSamplingInterval: Invalid value \"-5m\": "
      "must be non-negative"}},
    {"NegativeResourceWeight",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  resourceWeights: {cpu: -1}
)",
     {"p.yaml:4: Configuration (document 1): "
      "admissionFairSharing.resourceWeights.cpu: Invalid value \"-1\": must "
      "be greater than or equal to 0"}},
    {"ResourceWeightNotANumber",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing:
  resourceWeights: {cpu: heavy}
)",
     {"p.yaml:4: Configuration (document 1): "
      "admissionFairSharing.resourceWeights.cpu: Invalid value \"heavy\": "
      "must be a number"}},
    {"UnknownAdmissionFairSharingField",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
admissionFairSharing: {halfLife: 1h}
)",
     {"p.yaml:3: Configuration (document 1): admissionFairSharing.halfLife: "
      "Unknown field"}},
    {"UnknownAdmissionMode",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  admissionScope: {admissionMode: UsageBased}
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.admissionScope.admissionMode: "
      "Unsupported value \"UsageBased\": supported values: "
      "\"NoAdmissionFairSharing\", \"UsageBasedAdmissionFairSharing\""}},
    {"AdmissionModeRequired",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  admissionScope: {}
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.admissionScope.admissionMode: "
      "Required value"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, AdmissionFairSharingErrorTest,
                         ::testing::ValuesIn(kErrorCases), CaseName);

}  // namespace
}  // namespace gpusched
