// Scenario files: inline and path forms of nodes and policy, events in
// time order, defaults, and Go durations.

#include "api/codec/scenario_yaml.h"

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::string ScenarioDir() {
  return std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/scenarios-codec";
}

std::string Events(const Scenario& scenario) {
  std::string out;
  for (const ScenarioEvent& e : scenario.events) {
    out += std::to_string(e.at_ms) + "#" + std::to_string(e.index) + " ";
  }
  return out;
}

TEST(ScenarioYamlTest, InlineNodesPolicyAndEvents) {
  absl::StatusOr<Scenario> s =
      ParseScenarioFile(ScenarioDir() + "/inline.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_THAT(s->nodes, SizeIs(2));
  EXPECT_EQ(s->nodes[0].meta.name, "gpu-node-1");
  EXPECT_EQ(s->nodes[1].allocatable.Get("nvidia.com/gpu"), 8);
  EXPECT_EQ(s->nodes[1].allocatable.Get("cpu"), 32000);  // milli-CPU
  ASSERT_THAT(s->policy.cluster_queues, SizeIs(1));
  EXPECT_EQ(s->policy.cluster_queues[0].name, "team-a");
  ASSERT_THAT(s->policy.local_queues, SizeIs(1));
  EXPECT_EQ(s->policy.local_queues[0].cluster_queue, "team-a");
  EXPECT_FALSE(s->requeue_preempted);
  EXPECT_EQ(s->until_ms, 5'400'000);  // 1h30m
}

TEST(ScenarioYamlTest, EventsSortStablyByTimeAndKeepFileIndex) {
  absl::StatusOr<Scenario> s =
      ParseScenarioFile(ScenarioDir() + "/inline.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  // File order: 5m#0, 0s#1, 5m#2, 250ms#3; the two 5m events keep theirs.
  EXPECT_EQ(Events(*s), "0#1 250#3 300000#0 300000#2 ");
}

TEST(ScenarioYamlTest, EventActionsCombine) {
  absl::StatusOr<Scenario> s =
      ParseScenarioFile(ScenarioDir() + "/inline.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  const ScenarioEvent& at_5m = s->events[2];
  EXPECT_THAT(at_5m.finish, ElementsAre("team-a/trainer"));
  EXPECT_THAT(at_5m.remove, ElementsAre("default/loner"));
  EXPECT_THAT(s->events[3].node_down, ElementsAre("gpu-node-2"));
  EXPECT_THAT(s->events[1].node_up, ElementsAre("gpu-node-2"));
}

TEST(ScenarioYamlTest, CreateHoldsPodsAndPodGroups) {
  absl::StatusOr<Scenario> s =
      ParseScenarioFile(ScenarioDir() + "/inline.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  const ScenarioEvent& at_0 = s->events[0];
  ASSERT_THAT(at_0.create_groups, SizeIs(1));
  const PodGroup& group = at_0.create_groups[0];
  EXPECT_EQ(group.Key(), "team-a/trainer");
  EXPECT_EQ(group.flavor, PodGroup::Flavor::kCoscheduling);
  EXPECT_EQ(group.min_member, 2);
  EXPECT_EQ(group.schedule_timeout_seconds, 60);
  ASSERT_THAT(at_0.create_pods, SizeIs(2));
  EXPECT_EQ(at_0.create_pods[0].Key(), "team-a/trainer-0");
  EXPECT_EQ(at_0.create_pods[0].containers[0].requests.Get("nvidia.com/gpu"),
            8);
  // A missing namespace is defaulted, as the API server does.
  EXPECT_EQ(at_0.create_pods[1].meta.namespace_name, "default");
}

TEST(ScenarioYamlTest, PathsAreRelativeToTheScenario) {
  absl::StatusOr<Scenario> s = ParseScenarioFile(ScenarioDir() + "/paths.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_THAT(s->nodes, SizeIs(2));
  EXPECT_EQ(s->nodes[1].meta.name, "gpu-node-2");
  EXPECT_EQ(s->nodes[0].allocatable.Get("memory"), int64_t{512} << 30);
  ASSERT_THAT(s->policy.flavors, SizeIs(1));
  EXPECT_EQ(s->policy.flavors[0].name, "h100");
  ASSERT_THAT(s->policy.cluster_queues, SizeIs(1));
  EXPECT_EQ(s->policy.cluster_queues[0]
                .resource_groups[0]
                .flavors[0]
                .resources[0]
                .nominal,
            8);
  EXPECT_EQ(Events(*s), "0#0 90000#1 ");
}

TEST(ScenarioYamlTest, BaseDirResolvesPathsOfText) {
  constexpr std::string_view kText = R"(apiVersion: gpusched.io/v1alpha1
kind: Scenario
nodes: cluster/nodes.yaml
)";
  absl::StatusOr<Scenario> s =
      ParseScenarioText(kText, "t.yaml", ScenarioDir());
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->nodes, SizeIs(2));
}

// Indented JSON with an inline policy: cutting each policy item out of the
// scenario used to hand yaml-cpp "  {...},", which it scans forever while
// allocating (simulate grew past 12 GB and died with std::bad_alloc).
TEST(ScenarioYamlTest, IndentedJsonWithAnInlinePolicyIsRead) {
  constexpr std::string_view kText = R"({
 "apiVersion": "gpusched.io/v1alpha1",
 "kind": "Scenario",
 "nodes": [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8"}}}],
 "policy": [
  {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "default"}},
  {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": "cq"}, "spec": {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": "4"}]}]}]}}
 ],
 "events": []
}
)";
  absl::StatusOr<Scenario> s = ParseScenarioText(kText, "t.json", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->nodes, SizeIs(1));
  ASSERT_THAT(s->policy.cluster_queues, SizeIs(1));
  EXPECT_EQ(s->policy.cluster_queues[0].name, "cq");
}

TEST(ScenarioYamlTest, AScenarioYamlCppWouldNeverFinishIsRefusedByLine) {
  absl::StatusOr<Scenario> s = ParseScenarioText(
      "apiVersion: gpusched.io/v1alpha1\nkind: Scenario\n---\n{a: 1},\n",
      "t.yaml", "");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message(),
            "t.yaml: line 4, column 7: unexpected ',' after a complete value, "
            "outside any [ ] or { }");
}

TEST(ScenarioYamlTest, DefaultsWithoutPolicyUntilOrEvents) {
  constexpr std::string_view kText = R"(apiVersion: gpusched.io/v1alpha1
kind: Scenario
nodes:
- metadata: {name: n1}
)";
  absl::StatusOr<Scenario> s = ParseScenarioText(kText, "t.yaml", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_TRUE(s->requeue_preempted);
  EXPECT_EQ(s->until_ms, -1);
  EXPECT_THAT(s->events, IsEmpty());
  EXPECT_THAT(s->policy.cluster_queues, IsEmpty());
}

TEST(ScenarioYamlTest, WorkloadNamesFromGroupLabelsCanBeFinished) {
  constexpr std::string_view kText = R"(apiVersion: gpusched.io/v1alpha1
kind: Scenario
nodes: [{metadata: {name: n1}}]
events:
- at: 0s
  create:
  - kind: Pod
    metadata:
      name: w-0
      namespace: ml
      labels: {kueue.x-k8s.io/pod-group-name: gang}
  - kind: Pod
    metadata:
      name: v-0
      namespace: ml
      annotations: {scheduling.k8s.io/group-name: vgang}
- at: 1m
  finish: [ml/gang, ml/vgang, ml/w-0]
)";
  absl::StatusOr<Scenario> s = ParseScenarioText(kText, "t.yaml", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->events[1].finish,
              ElementsAre("ml/gang", "ml/vgang", "ml/w-0"));
}

struct DurationCase {
  std::string_view text;
  int64_t ms;
};

class ScenarioDurationTest : public ::testing::TestWithParam<DurationCase> {};

TEST_P(ScenarioDurationTest, EventTimeInMilliseconds) {
  const std::string text = std::string(R"(apiVersion: gpusched.io/v1alpha1
kind: Scenario
nodes: [{metadata: {name: n1}}]
events:
- at: )") + std::string(GetParam().text) +
                           "\n  nodeDown: [n1]\n";
  absl::StatusOr<Scenario> s = ParseScenarioText(text, "t.yaml", "");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->events[0].at_ms, GetParam().ms);
}

INSTANTIATE_TEST_SUITE_P(
    GoDurations, ScenarioDurationTest,
    ::testing::Values(DurationCase{"0s", 0}, DurationCase{"0", 0},
                      DurationCase{"250ms", 250}, DurationCase{"90s", 90'000},
                      DurationCase{"1.5s", 1'500}, DurationCase{"5m", 300'000},
                      DurationCase{"1h30m", 5'400'000},
                      DurationCase{"2h0m1s", 7'201'000},
                      DurationCase{"1m30.25s", 90'250},
                      DurationCase{"2000us", 2}, DurationCase{"3000000ns", 3}));

}  // namespace
}  // namespace gpusched
