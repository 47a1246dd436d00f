// Kueue's Topology kind and ResourceFlavor spec.topologyName: what they
// decode to, the checks of Kueue's CRD (apis/kueue/v1beta2/topology_types.go,
// resourceflavor_types.go, v0.19.2; the same in v0.17.0), and a flavor
// naming an unknown Topology set aside as Kueue keeps it inactive.

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/policy_loader.h"
#include "queueing/policy.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;

constexpr std::string_view kTopology = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: dc}
spec:
  levels:
  - nodeLabel: cloud.com/topology-block
  - nodeLabel: cloud.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
)";

constexpr std::string_view kTasFlavor = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas}
spec:
  nodeLabels: {tas-node: "true"}
  topologyName: dc
)";

std::vector<std::string> Messages(const PolicyResult& result) {
  std::vector<std::string> out;
  for (const PolicyError& e : result.errors) out.push_back(e.message);
  return out;
}

std::string Joined(std::string_view a, std::string_view b) {
  return std::string(a) + "---\n" + std::string(b);
}

TEST(TopologyDecoderTest, TopologyLevelsKeepTheirOrderWidestFirst) {
  const PolicyResult result = ParsePolicyText(kTopology, "t.yaml");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  ASSERT_EQ(result.policy->topologies.size(), 1u);
  EXPECT_EQ(result.policy->topologies[0].name, "dc");
  EXPECT_THAT(result.policy->topologies[0].levels,
              ElementsAre("cloud.com/topology-block", "cloud.com/topology-rack",
                          "kubernetes.io/hostname"));
}

TEST(TopologyDecoderTest, V1beta1TopologyIsRead) {
  std::string yaml(kTopology);
  yaml.replace(yaml.find("v1beta2"), 7, "v1beta1");
  EXPECT_TRUE(ParsePolicyText(yaml, "t.yaml").ok());
}

TEST(TopologyDecoderTest, FlavorTakesItsTopologysLevels) {
  const PolicyResult result =
      ParsePolicyText(Joined(kTopology, kTasFlavor), "t.yaml");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  const Policy& policy = *result.policy;
  EXPECT_EQ(policy.flavors[0].topology_name, "dc");
  EXPECT_THAT(TopologyLevelsOf(policy, &policy.flavors[0]),
              ElementsAre("cloud.com/topology-block", "cloud.com/topology-rack",
                          "kubernetes.io/hostname"));
}

TEST(TopologyDecoderTest, FlavorWithoutTopologyTakesTheSchedulerConfigLevels) {
  const PolicyResult result = ParsePolicyText(
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
      "metadata: {name: plain}\n",
      "t.yaml");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  EXPECT_EQ(TopologyLevelsOf(*result.policy, &result.policy->flavors[0]),
            result.policy->config.topology_levels);
}

TEST(TopologyDecoderTest, UnknownTopologyIsAnErrorNamingTheFlavor) {
  EXPECT_THAT(
      Messages(ParsePolicyText(kTasFlavor, "t.yaml")),
      ElementsAre("t.yaml:6: ResourceFlavor \"tas\": spec.topologyName: "
                  "Not found \"dc\": no Topology of that name"));
}

TEST(TopologyDecoderTest, TopologyFlavorNeedsNodeLabels) {
  EXPECT_THAT(
      Messages(ParsePolicyText(
          Joined(kTopology,
                 "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
                 "metadata: {name: tas}\nspec:\n  topologyName: dc\n"),
          "t.yaml")),
      ElementsAre("t.yaml:14: ResourceFlavor \"tas\": spec: Forbidden: at "
                  "least one nodeLabel is required when topology is set"));
}

TEST(TopologyDecoderTest, HostnameOnlyAsTheLowestLevel) {
  EXPECT_THAT(
      Messages(
          ParsePolicyText("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
                          "metadata: {name: dc}\nspec:\n  levels:\n"
                          "  - nodeLabel: kubernetes.io/hostname\n"
                          "  - nodeLabel: cloud.com/topology-rack\n",
                          "t.yaml")),
      ElementsAre("t.yaml:6: Topology \"dc\": spec.levels[0].nodeLabel: "
                  "Invalid value \"kubernetes.io/hostname\": the "
                  "kubernetes.io/hostname label can only be used at the "
                  "lowest level of topology"));
}

TEST(TopologyDecoderTest, EachLevelOnce) {
  EXPECT_THAT(
      Messages(
          ParsePolicyText("apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
                          "metadata: {name: dc}\nspec:\n  levels:\n"
                          "  - nodeLabel: rack\n  - nodeLabel: rack\n",
                          "t.yaml")),
      ElementsAre("t.yaml:7: Topology \"dc\": spec.levels[1].nodeLabel: "
                  "Duplicate value \"rack\": each level may appear "
                  "once"));
}

TEST(TopologyDecoderTest, LevelsAreRequired) {
  EXPECT_THAT(Messages(ParsePolicyText(
                  "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
                  "metadata: {name: dc}\nspec: {}\n",
                  "t.yaml")),
              ElementsAre("t.yaml:4: Topology \"dc\": spec.levels: Required "
                          "value"));
}

TEST(TopologyDecoderTest, UnknownLevelFieldIsAnError) {
  EXPECT_THAT(Messages(ParsePolicyText(
                  "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\n"
                  "metadata: {name: dc}\nspec:\n  levels:\n"
                  "  - {nodeLabel: rack, weight: 2}\n",
                  "t.yaml")),
              ElementsAre("t.yaml:6: Topology \"dc\": spec.levels[0].weight: "
                          "Unknown field"));
}

// As Kueue keeps a ClusterQueue inactive while its flavor's Topology is
// missing (TopologyNotFound): the flavor is left out, then the queue that
// names it, and the rest loads.
TEST(TopologyDecoderTest, FlavorWithUnknownTopologyIsSetAsideWithItsQueue) {
  const std::string queue =
      "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
      "metadata: {name: team}\nspec:\n  namespaceSelector: {}\n"
      "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
      "    flavors:\n    - name: tas\n      resources:\n"
      "      - {name: nvidia.com/gpu, nominalQuota: 8}\n";
  const PolicyResult result = ParsePolicyTextsSettingAside(
      {{"resourceflavors/tas", std::string(kTasFlavor)},
       {"clusterqueues/team", queue}},
      {});
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  ASSERT_EQ(result.set_aside.size(), 2u);
  EXPECT_EQ(result.set_aside[0].name, "resourceflavors/tas");
  EXPECT_THAT(result.set_aside[0].message,
              ::testing::HasSubstr("no Topology of that name"));
  EXPECT_EQ(result.set_aside[1].name, "clusterqueues/team");
}

}  // namespace
}  // namespace gpusched
