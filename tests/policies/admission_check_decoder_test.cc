// Kueue's AdmissionCheck and ProvisioningRequestConfig, and a
// ClusterQueue's admissionChecks / admissionChecksStrategy: what they
// decode to, Kueue's defaults, and the errors that keep a queue whose check
// no controller would answer out of the policy.

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/policy_loader.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr std::string_view kCheck = R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  parameters:
    apiGroup: kueue.x-k8s.io
    kind: ProvisioningRequestConfig
    name: prc
)";

std::string ConfigDoc(std::string_view spec) {
  return std::string(
             "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: "
             "ProvisioningRequestConfig\nmetadata: {name: prc}\nspec:\n") +
         std::string(spec);
}

PolicyResult Parse(const std::string& yaml) {
  return ParsePolicyText(yaml, "p.yaml");
}

std::string FirstError(const PolicyResult& result) {
  return result.errors.empty() ? "" : result.errors[0].message;
}

TEST(AdmissionCheckDecoderTest, ReadsCheckAndItsConfig) {
  const PolicyResult result = Parse(
      std::string(kCheck) +
      ConfigDoc("  provisioningClassName: check-capacity.autoscaling.x-k8s.io\n"
                "  parameters: {ValidUntilSeconds: \"60\"}\n"
                "  managedResources: [nvidia.com/gpu]\n"));
  ASSERT_TRUE(result.ok()) << FirstError(result);
  ASSERT_EQ(result.policy->admission_checks.size(), 1u);
  const AdmissionCheck& check = result.policy->admission_checks[0];
  EXPECT_EQ(check.name, "prov");
  EXPECT_EQ(check.controller_name, kProvisioningRequestController);
  EXPECT_EQ(check.provisioning_request_config, "prc");
  const ProvisioningRequestConfig& config =
      result.policy->provisioning_request_configs.at(0);
  EXPECT_EQ(config.provisioning_class_name,
            "check-capacity.autoscaling.x-k8s.io");
  EXPECT_EQ(config.parameters.at("ValidUntilSeconds"), "60");
  EXPECT_THAT(config.managed_resources, ElementsAre("nvidia.com/gpu"));
  EXPECT_EQ(config.pod_set_merge_policy, PodSetMergePolicy::kNone);
}

// provisioningrequestconfig_types.go: +kubebuilder:default={3, 60, 1800}.
TEST(AdmissionCheckDecoderTest, RetryStrategyTakesKueuesDefaults) {
  const PolicyResult result =
      Parse(std::string(kCheck) + ConfigDoc("  provisioningClassName: c\n"));
  ASSERT_TRUE(result.ok()) << FirstError(result);
  const ProvisioningRetryStrategy& retry =
      result.policy->provisioning_request_configs.at(0).retry_strategy;
  EXPECT_EQ(retry.backoff_limit_count, 3);
  EXPECT_EQ(retry.backoff_base_seconds, 60);
  EXPECT_EQ(retry.backoff_max_seconds, 1800);
}

// Each field has its own default, so a partial strategy keeps the rest.
TEST(AdmissionCheckDecoderTest, PartialRetryStrategyKeepsOtherDefaults) {
  const PolicyResult result =
      Parse(std::string(kCheck) +
            ConfigDoc("  provisioningClassName: c\n"
                      "  retryStrategy: {backoffLimitCount: 0}\n"));
  ASSERT_TRUE(result.ok()) << FirstError(result);
  const ProvisioningRetryStrategy& retry =
      result.policy->provisioning_request_configs.at(0).retry_strategy;
  EXPECT_EQ(retry.backoff_limit_count, 0);
  EXPECT_EQ(retry.backoff_base_seconds, 60);
}

TEST(AdmissionCheckDecoderTest, ReadsPodSetUpdatesAndMergePolicy) {
  const PolicyResult result = Parse(
      std::string(kCheck) +
      ConfigDoc("  provisioningClassName: c\n"
                "  podSetMergePolicy: IdenticalWorkloadSchedulingRequirements\n"
                "  podSetUpdates:\n"
                "    nodeSelector:\n"
                "    - {key: cloud.example.com/pool, "
                "valueFromProvisioningClassDetail: pool}\n"));
  ASSERT_TRUE(result.ok()) << FirstError(result);
  const ProvisioningRequestConfig& config =
      result.policy->provisioning_request_configs.at(0);
  EXPECT_EQ(config.pod_set_merge_policy,
            PodSetMergePolicy::kIdenticalWorkloadSchedulingRequirements);
  ASSERT_EQ(config.node_selector_updates.size(), 1u);
  EXPECT_EQ(config.node_selector_updates[0].key, "cloud.example.com/pool");
  EXPECT_EQ(
      config.node_selector_updates[0].value_from_provisioning_class_detail,
      "pool");
}

TEST(AdmissionCheckDecoderTest, OtherControllerIsRefused) {
  const PolicyResult result = Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: mk}
spec:
  controllerName: kueue.x-k8s.io/multikueue
)");
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(FirstError(result),
              HasSubstr("p.yaml:6: AdmissionCheck \"mk\": spec.controllerName: "
                        "Unsupported value \"kueue.x-k8s.io/multikueue\""));
}

// Kueue leaves such a check inactive (ErrNilParametersRef).
TEST(AdmissionCheckDecoderTest, ProvisioningCheckNeedsParameters) {
  const PolicyResult result = Parse(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: prov}
spec: {controllerName: kueue.x-k8s.io/provisioning-request}
)");
  EXPECT_THAT(FirstError(result), HasSubstr("spec.parameters: Required value"));
}

// Kueue's ConfigHelper: "wrong kind ..., expecting ..." (BadParametersRef).
TEST(AdmissionCheckDecoderTest, ParametersOfAnotherKindAreRefused) {
  std::string yaml(kCheck);
  yaml.replace(yaml.find("kind: ProvisioningRequestConfig"),
               std::string_view("kind: ProvisioningRequestConfig").size(),
               "kind: MultiKueueConfig");
  yaml += ConfigDoc("  provisioningClassName: c\n");
  EXPECT_THAT(FirstError(Parse(yaml)),
              HasSubstr("spec.parameters.kind: Unsupported value "
                        "\"MultiKueueConfig\""));
}

TEST(AdmissionCheckDecoderTest, MissingConfigIsNotFound) {
  EXPECT_THAT(FirstError(Parse(std::string(kCheck))),
              HasSubstr("spec.parameters.name: Not found \"prc\""));
}

TEST(AdmissionCheckDecoderTest, NegativeRetryFieldIsRefused) {
  const PolicyResult result =
      Parse(std::string(kCheck) +
            ConfigDoc("  provisioningClassName: c\n"
                      "  retryStrategy: {backoffBaseSeconds: -1}\n"));
  EXPECT_THAT(FirstError(result),
              HasSubstr("spec.retryStrategy.backoffBaseSeconds"));
}

TEST(AdmissionCheckDecoderTest, DuplicateNodeSelectorKeyIsRefused) {
  const PolicyResult result =
      Parse(std::string(kCheck) +
            ConfigDoc("  provisioningClassName: c\n"
                      "  podSetUpdates:\n"
                      "    nodeSelector:\n"
                      "    - {key: a, valueFromProvisioningClassDetail: x}\n"
                      "    - {key: a, valueFromProvisioningClassDetail: y}\n"));
  EXPECT_THAT(FirstError(result), HasSubstr("Duplicate value \"a\""));
}

std::string QueueWith(std::string_view api, std::string_view checks) {
  return std::string(kCheck) + ConfigDoc("  provisioningClassName: c\n") +
         "---\napiVersion: kueue.x-k8s.io/" + std::string(api) +
         "\nkind: ClusterQueue\nmetadata: {name: cq}\nspec:\n" +
         std::string(checks);
}

TEST(AdmissionCheckDecoderTest, StrategyRulesWithFlavors) {
  const PolicyResult result =
      Parse(QueueWith("v1beta2",
                      "  admissionChecksStrategy:\n"
                      "    admissionChecks:\n"
                      "    - {name: prov, onFlavors: [spot]}\n"));
  ASSERT_TRUE(result.ok()) << FirstError(result);
  const ClusterQueue& cq = result.policy->cluster_queues.at(0);
  ASSERT_EQ(cq.admission_checks.size(), 1u);
  EXPECT_EQ(cq.admission_checks[0].name, "prov");
  EXPECT_THAT(cq.admission_checks[0].on_flavors, ElementsAre("spot"));
}

TEST(AdmissionCheckDecoderTest, V1beta1NamesReadAsRulesForEveryFlavor) {
  const PolicyResult result =
      Parse(QueueWith("v1beta1", "  admissionChecks: [prov]\n"));
  ASSERT_TRUE(result.ok()) << FirstError(result);
  const ClusterQueue& cq = result.policy->cluster_queues.at(0);
  ASSERT_EQ(cq.admission_checks.size(), 1u);
  EXPECT_TRUE(cq.admission_checks[0].on_flavors.empty());
}

// v1beta2 dropped spec.admissionChecks (clusterqueue_types.go).
TEST(AdmissionCheckDecoderTest, V1beta2HasNoAdmissionChecksList) {
  EXPECT_THAT(
      FirstError(Parse(QueueWith("v1beta2", "  admissionChecks: [prov]\n"))),
      HasSubstr("spec.admissionChecks: Unknown field"));
}

TEST(AdmissionCheckDecoderTest, V1beta1ListAndStrategyAreExclusive) {
  EXPECT_THAT(
      FirstError(Parse(QueueWith(
          "v1beta1",
          "  admissionChecks: [prov]\n"
          "  admissionChecksStrategy: {admissionChecks: [{name: prov}]}\n"))),
      HasSubstr("spec.admissionChecksStrategy: Forbidden"));
}

// Kueue's ClusterQueue is inactive (AdmissionCheckNotFound); here it is
// an error, which the cluster's policy source sets the queue aside for.
TEST(AdmissionCheckDecoderTest, QueueNamingMissingCheckIsNotFound) {
  EXPECT_THAT(
      FirstError(Parse(QueueWith("v1beta2",
                                 "  admissionChecksStrategy:\n"
                                 "    admissionChecks: [{name: nope}]\n"))),
      HasSubstr("admissionChecks[0].name: Not found \"nope\""));
}

TEST(AdmissionCheckDecoderTest, CheckNamedTwiceIsRefused) {
  EXPECT_THAT(FirstError(Parse(QueueWith(
                  "v1beta2",
                  "  admissionChecksStrategy:\n"
                  "    admissionChecks: [{name: prov}, {name: prov}]\n"))),
              HasSubstr("Duplicate value \"prov\""));
}

}  // namespace
}  // namespace gpusched
