// Kueue's Configuration as a policy document: what its waitForPodsReady,
// fairSharing and resources map onto in SchedulerConfig, Kueue's defaults
// (v0.19.2's apis/config/*/defaults.go), and each error with its text.

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

constexpr int64_t kMinute = 60'000;

// The SchedulerConfig `yaml` loads to; a failed load fails the test.
SchedulerConfig ConfigOf(std::string_view yaml) {
  const PolicyResult result = ParsePolicyText(yaml, "p.yaml");
  EXPECT_TRUE(result.errors.empty())
      << (result.errors.empty() ? "" : result.errors[0].message);
  if (!result.policy) return {};
  return result.policy->config;
}

TEST(KueueConfigurationTest, WaitForPodsReadyMapsOntoTheGangTimers) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 10m
  recoveryTimeout: 3m
  blockAdmission: false
  requeuingStrategy:
    timestamp: Creation
    backoffLimitCount: 3
    backoffBaseSeconds: 30
    backoffMaxSeconds: 600
)");
  EXPECT_EQ(config.gang_admission_timeout_ms, 10 * kMinute);
  EXPECT_EQ(config.stale_gang_grace_ms, 3 * kMinute);
  EXPECT_EQ(config.gang_backoff_base_ms, 30'000);
  EXPECT_EQ(config.gang_backoff_max_ms, 600'000);
  EXPECT_EQ(config.gang_backoff_limit_count, 3);
  EXPECT_EQ(config.requeuing_timestamp, RequeuingTimestamp::kCreation);
  EXPECT_FALSE(config.gang_block_admission);
}

// Kueue: "Setting to 0s disables recovery timeout checking".
TEST(KueueConfigurationTest, ZeroRecoveryTimeoutNeverEvictsAShortGang) {
  EXPECT_EQ(ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {recoveryTimeout: 0s}
)")
                .stale_gang_grace_ms,
            SchedulerConfig::kNeverEvictShortGang);
}

TEST(KueueConfigurationTest, BlockAdmissionMapsOntoTheConfig) {
  EXPECT_TRUE(ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {blockAdmission: true}
)")
                  .gang_block_admission);
  // v1beta1 defaults it to `enable`; v1beta2 to false.
  EXPECT_TRUE(ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
waitForPodsReady: {enable: true}
)")
                  .gang_block_admission);
  EXPECT_FALSE(ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {}
)")
                   .gang_block_admission);
}

TEST(KueueConfigurationTest, EmptyWaitForPodsReadyTakesKueuesDefaults) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {}
)");
  EXPECT_EQ(config.gang_admission_timeout_ms, 30 * kMinute);
  EXPECT_EQ(config.stale_gang_grace_ms, 30 * kMinute);  // = timeout
  EXPECT_EQ(config.gang_backoff_base_ms, 60'000);
  EXPECT_EQ(config.gang_backoff_max_ms, 3'600'000);
  EXPECT_FALSE(config.gang_backoff_limit_count.has_value());
  EXPECT_EQ(config.requeuing_timestamp, RequeuingTimestamp::kEviction);
}

// v0.19.2 turns waitForPodsReady on when v1beta2 leaves it out (v0.17.0
// left it off).
TEST(KueueConfigurationTest, V1beta2WithoutWaitForPodsReadyHasItOn) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
)");
  EXPECT_EQ(config.gang_admission_timeout_ms, 30 * kMinute);
  EXPECT_EQ(config.gang_backoff_base_ms, 60'000);
}

TEST(KueueConfigurationTest, KueuesDefaultsGiveWayToTheSchedulerConfigsGang) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
---
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: c}
spec:
  gang: {admissionTimeout: 2m}
)");
  EXPECT_EQ(config.gang_admission_timeout_ms, 2 * kMinute);
  EXPECT_EQ(config.gang_backoff_base_ms,
            SchedulerConfig{}.gang_backoff_base_ms);
}

TEST(KueueConfigurationTest, V1beta1DisabledLeavesTheGangTimersAlone) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
waitForPodsReady: {enable: false, timeout: 1m}
)");
  EXPECT_EQ(config.gang_admission_timeout_ms,
            SchedulerConfig{}.gang_admission_timeout_ms);
  EXPECT_FALSE(config.gang_backoff_limit_count.has_value());
}

TEST(KueueConfigurationTest, V1beta1EnabledTimesOutAfterFiveMinutes) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
waitForPodsReady:
  enable: true
  blockAdmission: false
  requeuingStrategy: {backoffLimitCount: 0}
)");
  EXPECT_EQ(config.gang_admission_timeout_ms, 5 * kMinute);
  EXPECT_EQ(config.gang_backoff_limit_count, 0);
}

// The manager's own settings, as an admin's controller_manager_config.yaml
// has them, load and change nothing of the scheduling.
TEST(KueueConfigurationTest, ManagerSettingsAreAcceptedAndDropped) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
namespace: kueue-system
health: {healthProbeBindAddress: ":8081"}
metrics: {bindAddress: ":8443", enableClusterQueueResources: true}
webhook: {port: 9443}
leaderElection:
  leaderElect: true
  resourceName: c1f6bfd2.kueue.x-k8s.io
controller:
  groupKindConcurrency: {Job.batch: 5, Pod: 5}
clientConnection: {qps: 50, burst: 100}
manageJobsWithoutQueueName: false
managedJobsNamespaceSelector:
  matchExpressions:
  - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}
internalCertManagement: {enable: true}
integrations:
  frameworks: [batch/job, pod]
featureGates: {TopologyAwareScheduling: true}
waitForPodsReady: {timeout: 7m}
)");
  EXPECT_EQ(config.gang_admission_timeout_ms, 7 * kMinute);
  EXPECT_FALSE(config.fair_sharing);
}

TEST(KueueConfigurationTest, V1beta2FairSharingIsOnByItsPresence) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing:
  preemptionStrategies: [LessThanInitialShare]
)");
  EXPECT_TRUE(config.fair_sharing);
  EXPECT_EQ(config.preemption_strategies,
            std::vector{FairPreemptionStrategy::kLessThanInitialShare});
}

TEST(KueueConfigurationTest, V1beta1FairSharingFollowsEnable) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
fairSharing: {enable: true}
)");
  EXPECT_TRUE(config.fair_sharing);
}

TEST(KueueConfigurationTest, DeviceClassMappingsMapOntoResources) {
  const SchedulerConfig config = ConfigOf(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  deviceClassMappings:
  - name: nvidia.com/gpu
    deviceClassNames: [gpu.nvidia.com]
)");
  ASSERT_EQ(config.device_class_mappings.size(), 1u);
  EXPECT_EQ(config.device_class_mappings[0].resource, "nvidia.com/gpu");
  EXPECT_EQ(config.device_class_mappings[0].device_classes,
            std::vector<std::string>{"gpu.nvidia.com"});
}

TEST(KueueConfigurationTest, SummaryShowsTheLimitAndTheEvictionTimestamp) {
  const PolicyResult result = ParsePolicyText(R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  timeout: 2m
  requeuingStrategy: {backoffLimitCount: 4}
)",
                                              "p.yaml");
  ASSERT_TRUE(result.policy.has_value());
  EXPECT_NE(PolicySummary(*result.policy)
                .find("gang: admissionTimeout 2m, backoff 1m to 1h, "
                      "staleGangGracePeriod 2m, backoffLimitCount 4, "
                      "requeued by eviction time\n"),
            std::string::npos)
      << PolicySummary(*result.policy);
}

class KueueConfigurationErrorTest : public ::testing::TestWithParam<ErrorCase> {
};

TEST_P(KueueConfigurationErrorTest, ReportsExactly) {
  EXPECT_THAT(ErrorsOf(GetParam().yaml), ElementsAreArray(GetParam().errors));
}

const ErrorCase kConfigurationErrors[] = {
    {"BackoffBaseNotANumber",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  requeuingStrategy: {backoffBaseSeconds: 1m}
)",
     {"p.yaml:4: Configuration (document 1): "
      "waitForPodsReady.requeuingStrategy.backoffBaseSeconds: Invalid value "
      "\"1m\": must be an integer"}},
    {"BlockAdmissionNotABool",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {blockAdmission: sometimes}
)",
     {"p.yaml:3: Configuration (document 1): waitForPodsReady.blockAdmission: "
      "Invalid value \"sometimes\": must be true or false"}},
    {"EnableIsV1beta1Only",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {enable: true}
)",
     {"p.yaml:3: Configuration (document 1): waitForPodsReady.enable: Unknown "
      "field"}},
    {"ExcludeResourcePrefixesNotImplemented",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
resources:
  excludeResourcePrefixes: [example.com/]
)",
     {"p.yaml:4: Configuration (document 1): "
      "resources.excludeResourcePrefixes: Unsupported field: not implemented "
      "by gpusched: every resource counts"}},
    {"FairSharingBothSet",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing: {}
---
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: c}
spec:
  fairSharing: {enable: true}
)",
     {"p.yaml:3: Configuration (document 1): fairSharing: Forbidden: also set "
      "by SchedulerConfig \"c\" (spec.fairSharing at p.yaml:9); set it in one "
      "of the two"}},
    {"FairSharingForbidsBorrowWithinCohort",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
fairSharing: {}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority}
)",
     {"p.yaml:11: ClusterQueue \"a\": "
      "spec.preemption.borrowWithinCohort.policy: Invalid value "
      "\"LowerPriority\": must be Never when fair sharing is enabled "
      "(Configuration (document 1) at p.yaml:1)"}},
    {"ManageJobsWithoutQueueName",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
manageJobsWithoutQueueName: true
)",
     {"p.yaml:3: Configuration (document 1): manageJobsWithoutQueueName: "
      "Unsupported field: gpusched queues only pods that name a LocalQueue"}},
    {"NegativeBackoffLimitCount",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  requeuingStrategy: {backoffLimitCount: -1}
)",
     {"p.yaml:4: Configuration (document 1): "
      "waitForPodsReady.requeuingStrategy.backoffLimitCount: Invalid value "
      "\"-1\": must be between 0 and 2147483647"}},
    {"NegativeTimeout",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {timeout: -1s}
)",
     {"p.yaml:3: Configuration (document 1): waitForPodsReady.timeout: Invalid "
      "value \"-1s\": must be non-negative"}},
    {"TwoConfigurations",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
---
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
)",
     {"p.yaml:4: Configuration (document 2): Forbidden: at most one "
      "Configuration per policy; Configuration (document 1) is at p.yaml:1"}},
    {"UnknownTimestamp",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady:
  requeuingStrategy: {timestamp: Admission}
)",
     {"p.yaml:4: Configuration (document 1): "
      "waitForPodsReady.requeuingStrategy.timestamp: Unsupported value "
      "\"Admission\": supported values: \"Creation\", \"Eviction\""}},
    {"UnknownTopLevelField",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodReady: {timeout: 5m}
)",
     {"p.yaml:3: Configuration (document 1): waitForPodReady: Unknown field"}},
    {"WaitForPodsReadyAndGangBothSet",
     R"(
apiVersion: config.kueue.x-k8s.io/v1beta2
kind: Configuration
waitForPodsReady: {timeout: 5m}
---
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: c}
spec:
  gang: {admissionTimeout: 2m}
)",
     {"p.yaml:3: Configuration (document 1): waitForPodsReady: Forbidden: also "
      "set by SchedulerConfig \"c\" (spec.gang at p.yaml:9); set it in one of "
      "the two"}},
    {"WrongApiVersion",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: Configuration
)",
     {"p.yaml:1: Configuration (document 1): apiVersion: Unsupported value "
      "\"kueue.x-k8s.io/v1beta2\": supported values: "
      "\"config.kueue.x-k8s.io/v1beta1\", \"config.kueue.x-k8s.io/v1beta2\""}},
};

INSTANTIATE_TEST_SUITE_P(Configuration, KueueConfigurationErrorTest,
                         ::testing::ValuesIn(kConfigurationErrors), CaseName);

}  // namespace
}  // namespace gpusched
