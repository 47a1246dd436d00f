// Cluster files: kubectl-shaped YAML and JSON lists, multi-document YAML,
// and errors that point at file, document, line and field.

#include "api/codec/cluster_file.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

std::string TestData(const std::string& name) {
  return std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/codec/" + name;
}

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

TEST(ClusterFileTest, KubectlYamlNodeFromGfdLabels) {
  absl::StatusOr<ClusterObjects> cluster =
      LoadClusterFile(TestData("kubectl-get-nodes-pods.yaml"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->nodes, SizeIs(1));
  const Node& node = cluster->nodes[0];
  EXPECT_EQ(node.meta.name, "dgx-h100-01");
  EXPECT_EQ(node.meta.uid, "0b6f1c52-7d1e-4d8b-9a51-2f0c8e3a1b01");
  EXPECT_EQ(node.meta.resource_version, "48213377");
  EXPECT_EQ(node.meta.labels.at("nvidia.com/gpu.product"),
            "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(node.meta.labels.at("nvidia.com/gpu.count"), "8");
  EXPECT_EQ(node.allocatable.Get("cpu"), 222500);
  EXPECT_EQ(node.allocatable.Get("memory"), int64_t{2113323252} * 1024);
  EXPECT_EQ(node.allocatable.Get("nvidia.com/gpu"), 8);
  EXPECT_EQ(node.capacity.Get("cpu"), 224000);
  ASSERT_THAT(node.taints, SizeIs(1));
  EXPECT_EQ(node.taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(node.taints[0].effect, "NoSchedule");
}

TEST(ClusterFileTest, KubectlYamlRunningPod) {
  absl::StatusOr<ClusterObjects> cluster =
      LoadClusterFile(TestData("kubectl-get-nodes-pods.yaml"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->pods, SizeIs(2));
  const Pod& pod = cluster->pods[0];
  EXPECT_EQ(pod.meta.name, "llama-finetune-0");
  EXPECT_EQ(pod.meta.namespace_name, "ml-team");
  EXPECT_EQ(pod.meta.annotations.at(kGpuIdsAnnotation), "0,1");
  EXPECT_EQ(pod.meta.creation_unix_seconds, 1736843405);  // 08:30:05Z
  EXPECT_EQ(pod.node_name, "dgx-h100-01");
  EXPECT_EQ(pod.scheduler_name, "gpusched");
  EXPECT_EQ(pod.priority, 1000);
  EXPECT_EQ(pod.priority_class_name, "ml-training");
  EXPECT_EQ(pod.phase, PodPhase::kRunning);
  ASSERT_THAT(pod.containers, SizeIs(1));
  EXPECT_EQ(pod.containers[0].requests.Get("nvidia.com/gpu"), 2);
  EXPECT_EQ(pod.containers[0].requests.Get("memory"), int64_t{128} << 30);
  ASSERT_THAT(pod.init_containers, SizeIs(1));
  EXPECT_EQ(pod.init_containers[0].requests.Get("cpu"), 500);
  ASSERT_THAT(pod.tolerations, SizeIs(2));
  EXPECT_EQ(pod.tolerations[1].effect, "NoExecute");
}

TEST(ClusterFileTest, KubectlYamlPendingPodAndSkippedKinds) {
  absl::StatusOr<ClusterObjects> cluster =
      LoadClusterFile(TestData("kubectl-get-nodes-pods.yaml"));
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->pods, SizeIs(2));
  const Pod& pod = cluster->pods[1];
  EXPECT_EQ(pod.phase, PodPhase::kPending);
  EXPECT_EQ(pod.meta.creation_unix_seconds, 1736848720);   // .123456 floored
  EXPECT_EQ(pod.containers[0].requests.Get("cpu"), 4000);  // `cpu: 4`
  EXPECT_EQ(pod.containers[0].limits.Get("nvidia.com/gpu"), 1);
  ASSERT_THAT(pod.required_affinity_terms, SizeIs(1));
  const auto& expressions = pod.required_affinity_terms[0].match_expressions;
  ASSERT_THAT(expressions, SizeIs(2));
  EXPECT_THAT(expressions[0].values,
              ElementsAre("NVIDIA-H100-80GB-HBM3", "NVIDIA-H20"));
  EXPECT_EQ(expressions[1].op, "Gt");
  EXPECT_THAT(expressions[1].values, ElementsAre("40000"));
  EXPECT_EQ(pod.node_selector.at("kubernetes.io/arch"), "amd64");
  EXPECT_THAT(cluster->skipped, ElementsAre("PodGroup ml-team/llama-finetune"));
}

TEST(ClusterFileTest, YamlSingleObject) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(R"(
apiVersion: v1
kind: Node
metadata:
  name: n1
status:
  allocatable: {cpu: "8", nvidia.com/gpu: 4}
)",
                                                            "node.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->nodes, SizeIs(1));
  EXPECT_EQ(cluster->nodes[0].allocatable.Get("nvidia.com/gpu"), 4);
  EXPECT_TRUE(cluster->pods.empty());
}

// The pod decoder is shared: YAML pods carry their DRA claims too.
TEST(ClusterFileTest, YamlPodResourceClaims) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(R"(
apiVersion: v1
kind: Pod
metadata: {name: trainer-0, namespace: ml}
spec:
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: two-h100}
status:
  resourceClaimStatuses:
  - {name: gpus, resourceClaimName: trainer-0-gpus-x2v8q}
  extendedResourceClaimStatus: {resourceClaimName: trainer-0-extended-8x2kq}
)",
                                                            "pod.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->pods, SizeIs(1));
  const Pod& pod = cluster->pods[0];
  ASSERT_THAT(pod.resource_claims, SizeIs(1));
  EXPECT_EQ(pod.resource_claims[0].template_name, "two-h100");
  EXPECT_EQ(pod.resource_claims[0].ResolvedClaimName(), "trainer-0-gpus-x2v8q");
  EXPECT_EQ(pod.extended_resource_claim, "trainer-0-extended-8x2kq");
}

TEST(ClusterFileTest, MultiDocumentYaml) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(R"(---
kind: Node
metadata: {name: n1}
---
kind: Pod
metadata: {name: p1, namespace: default}
---
kind: PriorityClass
metadata: {name: high}
---
kind: PodList
items:
- metadata: {name: p2}
---
)",
                                                            "multi.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->nodes, SizeIs(1));
  ASSERT_THAT(cluster->pods, SizeIs(2));
  EXPECT_EQ(cluster->pods[0].meta.name, "p1");
  EXPECT_EQ(cluster->pods[1].meta.name, "p2");  // kind implied by PodList
  EXPECT_THAT(cluster->skipped, ElementsAre("PriorityClass high"));
}

TEST(ClusterFileTest, YamlScalarsAreStringsAndNullsAreAbsent) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(R"(
kind: Node
metadata:
  name: n1
  labels:
    count: 8
    present: true
    empty:
    tilde: ~
  annotations: null
spec:
  unschedulable: true
  taints:
status:
  capacity: {cpu: 0.5}
)",
                                                            "n.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const Node& node = cluster->nodes.at(0);
  EXPECT_EQ(node.meta.labels, (StringMap{{"count", "8"}, {"present", "true"}}));
  EXPECT_TRUE(node.meta.annotations.empty());
  EXPECT_TRUE(node.unschedulable);
  EXPECT_EQ(node.capacity.Get("cpu"), 500);
}

TEST(ClusterFileTest, JsonListWithMixedKinds) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(R"(
  {"apiVersion": "v1", "kind": "List", "items": [
    {"kind": "Node", "metadata": {"name": "n1"},
     "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
    {"kind": "Pod", "metadata": {"name": "p1", "namespace": "a"},
     "spec": {"nodeName": "n1"}},
    {"kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "a"}}],
   "metadata": {"resourceVersion": ""}})",
                                                            "c.json");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->nodes, SizeIs(1));
  ASSERT_THAT(cluster->pods, SizeIs(1));
  EXPECT_EQ(cluster->pods[0].node_name, "n1");
  EXPECT_THAT(cluster->skipped, ElementsAre("ConfigMap a/cm"));
}

TEST(ClusterFileTest, JsonNodeListItemsWithoutKind) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(
      R"({"kind": "NodeList", "items": [{"metadata": {"name": "a"}},
                                         {"metadata": {"name": "b"}}]})",
      "nodes.json");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_THAT(cluster->nodes, SizeIs(2));
  EXPECT_EQ(cluster->nodes[1].meta.name, "b");
}

TEST(ClusterFileTest, YamlErrorNamesFileLineAndPath) {
  const std::string text =
      "apiVersion: v1\n"           // line 1
      "kind: List\n"               // 2
      "items:\n"                   // 3
      "- kind: Node\n"             // 4
      "  metadata: {name: ok}\n"   // 5
      "- kind: Node\n"             // 6
      "  metadata: {name: bad}\n"  // 7
      "  status:\n"                // 8
      "    allocatable:\n"         // 9
      "      cpu: 12x\n";          // 10
  absl::StatusOr<ClusterObjects> cluster =
      ParseClusterText(text, "cluster.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(cluster.status()),
              StartsWith("cluster.yaml: line 10: "
                         "items[1].status.allocatable.cpu: "
                         "invalid quantity \"12x\""));
}

TEST(ClusterFileTest, YamlErrorInLaterDocumentNamesDocument) {
  const std::string text =
      "kind: Node\n"                              // line 1
      "metadata: {name: n1}\n"                    // 2
      "---\n"                                     // 3
      "kind: Pod\n"                               // 4
      "spec:\n"                                   // 5
      "  containers:\n"                           // 6
      "  - name: c\n"                             // 7
      "    resources:\n"                          // 8
      "      requests: {nvidia.com/gpu: two}\n";  // 9
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(text, "c.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(Message(cluster.status()),
              StartsWith("c.yaml: line 9: document 2: "
                         "spec.containers[0].resources.requests[\"nvidia.com/"
                         "gpu\"]: invalid quantity \"two\""));
}

TEST(ClusterFileTest, YamlTypeMismatchNamesLine) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(
      "kind: Pod\nspec:\n  containers:\n    name: c\n", "p.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(Message(cluster.status()),
            "p.yaml: line 4: spec.containers: expected array, got object");
}

TEST(ClusterFileTest, MalformedYamlNamesLine) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(
      "kind: List\nitems:\n- kind: Node\n  metadata: {name: [}\n", "bad.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(Message(cluster.status()),
              AllOf(StartsWith("bad.yaml: line 4, column "),
                    HasSubstr("malformed YAML")));
}

TEST(ClusterFileTest, MalformedJsonNamesByteOffset) {
  absl::StatusOr<ClusterObjects> cluster =
      ParseClusterText(R"({"kind": "List", "items": [}])", "c.json");
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(Message(cluster.status()),
              StartsWith("c.json: malformed JSON at byte 27 (line 1, "
                         "column 28)"));
}

TEST(ClusterFileTest, JsonItemErrorNamesItemIndex) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText(
      R"({"kind": "List", "items": [{"kind": "Node"},
          {"kind": "Node", "status": {"allocatable": {"cpu": "12x"}}}]})",
      "c.json");
  ASSERT_FALSE(cluster.ok());
  EXPECT_THAT(Message(cluster.status()),
              StartsWith("c.json: items[1].status.allocatable.cpu: invalid "
                         "quantity \"12x\""));
}

TEST(ClusterFileTest, ListItemWithoutKindIsAnError) {
  absl::StatusOr<ClusterObjects> cluster =
      ParseClusterText("kind: List\nitems:\n- metadata: {name: x}\n", "l.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(Message(cluster.status()),
            "l.yaml: line 3: items[0]: missing kind");
}

TEST(ClusterFileTest, EmptyTextHasNoObjects) {
  absl::StatusOr<ClusterObjects> cluster = ParseClusterText("", "e.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  EXPECT_TRUE(cluster->nodes.empty());
  EXPECT_TRUE(cluster->pods.empty());
}

TEST(ClusterFileTest, MissingFileIsNotFound) {
  absl::StatusOr<ClusterObjects> cluster =
      LoadClusterFile(TestData("does-not-exist.yaml"));
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(cluster.status()), HasSubstr("does-not-exist.yaml"));
}

// The same objects in YAML and JSON decode to the same structs: one walk.
TEST(ClusterFileTest, YamlAndJsonDecodeAlike) {
  absl::StatusOr<ClusterObjects> yaml = ParseClusterText(R"(
kind: PodList
items:
- metadata: {name: p, namespace: ns, labels: {a: b},
             creationTimestamp: "2025-01-01T00:00:00Z"}
  spec:
    priority: 7
    containers:
    - name: c
      resources: {requests: {cpu: 250m, nvidia.com/gpu: 1}}
    tolerations: [{key: k, operator: Exists}]
)",
                                                         "p.yaml");
  absl::StatusOr<ClusterObjects> json = ParseClusterText(R"(
{"kind": "PodList", "items": [{"metadata": {"name": "p", "namespace": "ns",
  "labels": {"a": "b"}, "creationTimestamp": "2025-01-01T00:00:00Z"},
  "spec": {"priority": 7, "containers": [{"name": "c", "resources":
  {"requests": {"cpu": "250m", "nvidia.com/gpu": 1}}}],
  "tolerations": [{"key": "k", "operator": "Exists"}]}}]})",
                                                         "p.json");
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  ASSERT_TRUE(json.ok()) << json.status();
  const Pod& a = yaml->pods.at(0);
  const Pod& b = json->pods.at(0);
  EXPECT_EQ(a.meta.name, b.meta.name);
  EXPECT_EQ(a.meta.namespace_name, b.meta.namespace_name);
  EXPECT_EQ(a.meta.labels, b.meta.labels);
  EXPECT_EQ(a.meta.creation_unix_seconds, b.meta.creation_unix_seconds);
  EXPECT_EQ(a.priority, b.priority);
  EXPECT_EQ(a.containers.at(0).requests, b.containers.at(0).requests);
  EXPECT_EQ(a.tolerations.at(0).op, b.tolerations.at(0).op);
}

}  // namespace
}  // namespace gpusched
