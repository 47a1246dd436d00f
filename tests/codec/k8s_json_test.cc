// Field-level behaviour of the Pod/Node JSON decoder: nulls, timestamps,
// scheduling fields, error paths and malformed input.

#include "api/codec/k8s_json.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

std::string Message(const absl::Status& status) {
  return std::string(status.message());
}

TEST(K8sJsonTest, NullMeansAbsentEverywhere) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "p", "namespace": null, "labels": null,
                 "annotations": {"a": "1", "b": null},
                 "creationTimestamp": null},
    "spec": {"containers": null, "initContainers": [null],
             "overhead": null, "nodeName": null, "nodeSelector": null,
             "affinity": null, "tolerations": null, "priority": null},
    "status": null})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.name, "p");
  EXPECT_TRUE(pod->meta.labels.empty());
  EXPECT_EQ(pod->meta.annotations, (StringMap{{"a", "1"}}));  // b dropped
  EXPECT_EQ(pod->meta.creation_unix_seconds, 0);
  EXPECT_THAT(pod->containers, SizeIs(0));
  ASSERT_THAT(pod->init_containers, SizeIs(1));  // null element: default
  EXPECT_EQ(pod->init_containers[0].name, "");
  EXPECT_FALSE(pod->priority.has_value());
  EXPECT_EQ(pod->phase, PodPhase::kPending);
}

TEST(K8sJsonTest, NullResourcesAndQuantities) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({"spec": {"containers": [
    {"name": "a", "resources": null},
    {"name": "b", "resources": {"requests": null,
                                "limits": {"cpu": null, "memory": "1Gi"}}}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_THAT(pod->containers, SizeIs(2));
  EXPECT_TRUE(pod->containers[0].requests.empty());
  EXPECT_FALSE(pod->containers[1].limits.Has("cpu"));
  EXPECT_EQ(pod->containers[1].limits.Get("memory"), int64_t{1} << 30);
}

TEST(K8sJsonTest, NullNodeFields) {
  absl::StatusOr<Node> node = NodeFromJson(
      R"({"metadata": {"name": "n"}, "spec": {"taints": null,
          "unschedulable": null}, "status": {"capacity": null}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_FALSE(node->unschedulable);
  EXPECT_TRUE(node->taints.empty());
  EXPECT_TRUE(node->capacity.empty());
}

struct TimestampCase {
  std::string text;
  int64_t unix_seconds;
};

TEST(K8sJsonTest, CreationTimestampToUnixSeconds) {
  const TimestampCase cases[] = {
      {"2025-01-01T00:00:00Z", 1735689600},
      {"1970-01-01T00:00:00Z", 0},
      {"2024-02-29T12:00:00Z", 1709208000},
      {"2025-01-01T00:00:00.999Z", 1735689600},     // floored
      {"2025-01-01T02:00:00+02:00", 1735689600},    // offset applied
      {"2024-12-31T19:00:00.5-05:00", 1735689600},  // both
  };
  for (const TimestampCase& c : cases) {
    absl::StatusOr<Pod> pod = PodFromJson(
        R"({"metadata": {"creationTimestamp": ")" + c.text + R"("}})");
    ASSERT_TRUE(pod.ok()) << c.text << ": " << pod.status();
    EXPECT_EQ(pod->meta.creation_unix_seconds, c.unix_seconds) << c.text;
  }
}

TEST(K8sJsonTest, DeletionTimestampMarksThePodDeleting) {
  absl::StatusOr<Pod> going = PodFromJson(
      R"({"metadata": {"deletionTimestamp": "2025-01-01T00:00:30Z"}})");
  ASSERT_TRUE(going.ok()) << going.status();
  EXPECT_TRUE(going->meta.deleting);
  for (std::string_view json : {R"({"metadata": {"deletionTimestamp": null}})",
                                R"({"metadata": {}})"}) {
    absl::StatusOr<Pod> staying = PodFromJson(json);
    ASSERT_TRUE(staying.ok()) << json << ": " << staying.status();
    EXPECT_FALSE(staying->meta.deleting) << json;
  }
  absl::StatusOr<Pod> bad =
      PodFromJson(R"({"metadata": {"deletionTimestamp": "soon"}})");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(Message(bad.status()),
              StartsWith("Pod.metadata.deletionTimestamp: "));
}

TEST(K8sJsonTest, InvalidCreationTimestampNamesField) {
  for (std::string_view bad :
       {"2025-02-30T00:00:00Z", "yesterday", "2025-01-01 00:00:00"}) {
    absl::StatusOr<Pod> pod =
        PodFromJson(R"({"metadata": {"creationTimestamp": ")" +
                    std::string(bad) + R"("}})");
    ASSERT_FALSE(pod.ok()) << bad;
    EXPECT_THAT(Message(pod.status()),
                StartsWith("Pod.metadata.creationTimestamp: invalid RFC 3339 "
                           "time"));
  }
}

TEST(K8sJsonTest, SchedulingFields) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "p", "namespace": "ns", "uid": "u1",
                 "resourceVersion": "7", "labels": {"app": "x"}},
    "spec": {"nodeName": "n1", "schedulerName": "gpusched",
             "priority": -5, "priorityClassName": "low",
             "nodeSelector": {"zone": "a", "disk": "ssd"},
             "overhead": {"cpu": 0.1, "memory": "64Mi"},
             "initContainers": [{"name": "init",
                                 "resources": {"requests": {"cpu": 2}}}],
             "containers": [{"name": "c", "resources": {
                 "requests": {"cpu": 0.5, "memory": 1e3},
                 "limits": {"nvidia.com/gpu": "1"}}}]},
    "status": {"phase": "Running", "nominatedNodeName": "n2"}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.namespace_name, "ns");
  EXPECT_EQ(pod->meta.uid, "u1");
  EXPECT_EQ(pod->meta.resource_version, "7");
  EXPECT_EQ(pod->node_name, "n1");
  EXPECT_EQ(pod->scheduler_name, "gpusched");
  EXPECT_EQ(pod->priority, -5);
  EXPECT_EQ(pod->priority_class_name, "low");
  EXPECT_EQ(pod->node_selector, (StringMap{{"disk", "ssd"}, {"zone", "a"}}));
  EXPECT_EQ(pod->overhead.Get("cpu"), 100);  // 0.1 -> 100m, not 101m
  EXPECT_EQ(pod->overhead.Get("memory"), 64 << 20);
  EXPECT_EQ(pod->init_containers[0].requests.Get("cpu"), 2000);
  EXPECT_EQ(pod->containers[0].requests.Get("cpu"), 500);
  EXPECT_EQ(pod->containers[0].requests.Get("memory"), 1000);  // 1e3 bytes
  EXPECT_EQ(pod->containers[0].limits.Get("nvidia.com/gpu"), 1);
  EXPECT_EQ(pod->phase, PodPhase::kRunning);
  EXPECT_EQ(pod->nominated_node_name, "n2");
}

// Kueue's PodsReady counts pods whose Ready condition is True; the other
// conditions, and Ready with any other status, leave a pod not ready.
TEST(K8sJsonTest, ReadyConditionMarksThePodReady) {
  const std::pair<std::string_view, bool> cases[] = {
      {R"({"status": {"conditions": [{"type": "PodScheduled", "status":
           "True"}, {"type": "Ready", "status": "True"}]}})",
       true},
      {R"({"status": {"conditions": [{"type": "Ready", "status": "False",
           "reason": "ContainersNotReady"}]}})",
       false},
      {R"({"status": {"conditions": [{"type": "ContainersReady",
           "status": "True"}]}})",
       false},
      {R"({"status": {"phase": "Running"}})", false},
  };
  for (const auto& [json, ready] : cases) {
    absl::StatusOr<Pod> pod = PodFromJson(json);
    ASSERT_TRUE(pod.ok()) << pod.status();
    EXPECT_EQ(pod->ready, ready) << json;
  }
}

TEST(K8sJsonTest, RequiredNodeAffinityTerms) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({"spec": {"affinity": {
    "podAntiAffinity": {"ignored": true},
    "nodeAffinity": {
      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1}],
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [
           {"key": "gpu", "operator": "In", "values": ["h100", "h20"]},
           {"key": "spot", "operator": "DoesNotExist"}]},
        {"matchFields": [{"key": "metadata.name", "operator": "In",
                          "values": ["n1"]}]}]}}}}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_THAT(pod->required_affinity_terms, SizeIs(2));
  const NodeSelectorTerm& first = pod->required_affinity_terms[0];
  ASSERT_THAT(first.match_expressions, SizeIs(2));
  EXPECT_EQ(first.match_expressions[0].key, "gpu");
  EXPECT_EQ(first.match_expressions[0].op, "In");
  EXPECT_THAT(first.match_expressions[0].values, ElementsAre("h100", "h20"));
  EXPECT_EQ(first.match_expressions[1].op, "DoesNotExist");
  EXPECT_TRUE(first.match_expressions[1].values.empty());
  const NodeSelectorTerm& second = pod->required_affinity_terms[1];
  EXPECT_TRUE(second.match_expressions.empty());
  ASSERT_THAT(second.match_fields, SizeIs(1));
  EXPECT_EQ(second.match_fields[0].key, "metadata.name");
  EXPECT_THAT(second.match_fields[0].values, ElementsAre("n1"));
}

TEST(K8sJsonTest, Tolerations) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({"spec": {"tolerations": [
    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "team", "operator": "Equal", "value": "ml",
     "effect": "NoExecute", "tolerationSeconds": 300},
    {"operator": "Exists"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_THAT(pod->tolerations, SizeIs(3));
  EXPECT_EQ(pod->tolerations[0].key, "nvidia.com/gpu");
  EXPECT_EQ(pod->tolerations[0].op, "Exists");
  EXPECT_EQ(pod->tolerations[0].effect, "NoSchedule");
  EXPECT_EQ(pod->tolerations[1].value, "ml");
  EXPECT_EQ(pod->tolerations[1].effect, "NoExecute");
  EXPECT_EQ(pod->tolerations[2].key, "");
  EXPECT_EQ(pod->tolerations[2].op, "Exists");
}

// A pod with a claim of its own and one from a template, which the
// resourceclaim controller made and recorded in status under the same name.
TEST(K8sJsonTest, PodResourceClaimsJoinTheirStatusByName) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "trainer-0", "namespace": "ml"},
    "spec": {"resourceClaims": [
      {"name": "shared", "resourceClaimName": "team-a100s"},
      {"name": "gpus", "resourceClaimTemplateName": "two-h100"},
      {"name": "unmade", "resourceClaimTemplateName": "t"}]},
    "status": {"resourceClaimStatuses": [
      {"name": "gpus", "resourceClaimName": "trainer-0-gpus-x2v8q"},
      {"name": "unmade", "resourceClaimName": null},
      {"name": "not-in-spec", "resourceClaimName": "stray"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_THAT(pod->resource_claims, SizeIs(3));
  const PodClaimRef& shared = pod->resource_claims[0];
  EXPECT_EQ(shared.name, "shared");
  EXPECT_EQ(shared.claim_name, "team-a100s");
  EXPECT_EQ(shared.ResolvedClaimName(), "team-a100s");
  const PodClaimRef& gpus = pod->resource_claims[1];
  EXPECT_EQ(gpus.claim_name, "");
  EXPECT_EQ(gpus.template_name, "two-h100");
  EXPECT_EQ(gpus.status_claim_name, "trainer-0-gpus-x2v8q");
  EXPECT_EQ(gpus.ResolvedClaimName(), "trainer-0-gpus-x2v8q");
  EXPECT_EQ(pod->resource_claims[2].ResolvedClaimName(), "");  // not made
  EXPECT_EQ(pod->extended_resource_claim, "");
}

TEST(K8sJsonTest, PodClaimStatusMayComeBeforeSpec) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "status": {"resourceClaimStatuses": [{"name": "gpus",
                                          "resourceClaimName": "p-gpus-1"}]},
    "spec": {"resourceClaims": [{"name": "gpus",
                                 "resourceClaimTemplateName": "t"}]}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_THAT(pod->resource_claims, SizeIs(1));
  EXPECT_EQ(pod->resource_claims[0].status_claim_name, "p-gpus-1");
}

// KEP-5004: kube-scheduler made a claim for the pod's nvidia.com/gpu
// request, served by the DeviceClass with that extendedResourceName.
TEST(K8sJsonTest, PodExtendedResourceClaim) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({"status": {
    "extendedResourceClaimStatus": {
      "requestMappings": [{"containerName": "main",
                           "resourceName": "nvidia.com/gpu",
                           "requestName": "container-0-request-0"}],
      "resourceClaimName": "trainer-0-extended-resources-8x2kq"}}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->extended_resource_claim, "trainer-0-extended-resources-8x2kq");
  EXPECT_TRUE(pod->resource_claims.empty());
}

TEST(K8sJsonTest, NodeTaintsAndUnschedulable) {
  absl::StatusOr<Node> node = NodeFromJson(R"({"metadata": {"name": "n"},
    "spec": {"unschedulable": true, "taints": [
      {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule",
       "timeAdded": "2025-01-01T00:00:00Z"}]}})");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_TRUE(node->unschedulable);
  ASSERT_THAT(node->taints, SizeIs(2));
  EXPECT_EQ(node->taints[0].key, "nvidia.com/gpu");
  EXPECT_EQ(node->taints[0].value, "present");
  EXPECT_EQ(node->taints[0].effect, "NoSchedule");
  EXPECT_EQ(node->taints[1].value, "");
}

struct ErrorCase {
  std::string json;
  std::string message_prefix;
};

TEST(K8sJsonTest, PodErrorsNameTheFieldPath) {
  const ErrorCase cases[] = {
      {R"({"spec": {"containers": [{"resources": {"requests":
           {"nvidia.com/gpu": "two"}}}]}})",
       R"(Pod.spec.containers[0].resources.requests["nvidia.com/gpu"]: )"
       R"(invalid quantity "two")"},
      {R"({"spec": {"containers": [{}, {"resources": {"limits":
           {"cpu": true}}}]}})",
       "Pod.spec.containers[1].resources.limits.cpu: expected quantity "
       "(string or number), got boolean"},
      {R"({"metadata": {"labels": {"count": 8}}})",
       "Pod.metadata.labels.count: expected string, got number"},
      {R"({"metadata": {"annotations": {"gpusched.io/gpu-ids": [0, 1]}}})",
       R"(Pod.metadata.annotations["gpusched.io/gpu-ids"]: expected string, )"
       "got array"},
      {R"({"metadata": {"name": 3}})",
       "Pod.metadata.name: expected string, got number"},
      {R"({"spec": {"containers": {"name": "c"}}})",
       "Pod.spec.containers: expected array, got object"},
      {R"({"spec": {"priority": "10"}})",
       "Pod.spec.priority: expected integer, got string"},
      {R"({"spec": {"priority": 3000000000}})",
       "Pod.spec.priority: integer 3000000000 out of int32 range"},
      {R"({"spec": {"priority": 1.5}})",
       "Pod.spec.priority: expected integer, got number"},
      {R"({"spec": {"affinity": {"nodeAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": {
           "nodeSelectorTerms": [{"matchExpressions": [{"key": "a"},
           {"key": "b", "values": [5]}]}]}}}}})",
       "Pod.spec.affinity.nodeAffinity."
       "requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
       "matchExpressions[1].values[0]: expected string, got number"},
      {R"({"spec": {"tolerations": ["NoSchedule"]}})",
       "Pod.spec.tolerations[0]: expected object, got string"},
      {R"({"spec": {"resourceClaims": {"name": "gpus"}}})",
       "Pod.spec.resourceClaims: expected array, got object"},
      {R"({"spec": {"resourceClaims": [{"name": "a",
           "resourceClaimTemplateName": 1}]}})",
       "Pod.spec.resourceClaims[0].resourceClaimTemplateName: expected "
       "string, got number"},
      {R"({"status": {"resourceClaimStatuses": [{"name": "a"},
           {"name": "b", "resourceClaimName": ["c"]}]}})",
       "Pod.status.resourceClaimStatuses[1].resourceClaimName: expected "
       "string, got array"},
      {R"({"status": {"conditions": {"type": "Ready"}}})",
       "Pod.status.conditions: expected array, got object"},
      {R"({"status": {"conditions": [{"type": "Ready", "status": true}]}})",
       "Pod.status.conditions[0].status: expected string, got boolean"},
      {R"({"status": {"extendedResourceClaimStatus": "c"}})",
       "Pod.status.extendedResourceClaimStatus: expected object, got string"},
      {R"([1, 2])", "Pod: expected object, got array"},
      {R"(null)", "Pod: expected object, got null"},
  };
  for (const ErrorCase& c : cases) {
    absl::StatusOr<Pod> pod = PodFromJson(c.json);
    ASSERT_FALSE(pod.ok()) << c.json;
    EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(pod.status()), StartsWith(c.message_prefix));
  }
}

TEST(K8sJsonTest, NodeErrorsUseTheCallersPathPrefix) {
  simdjson::dom::parser parser;
  simdjson::dom::element element;
  ASSERT_EQ(parser
                .parse(std::string_view(
                    R"({"status": {"allocatable": {"cpu": "12x"}}})"))
                .get(element),
            simdjson::SUCCESS);
  absl::StatusOr<Node> node = DecodeNode(element, "Nodes.items[3]");
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(Message(node.status()),
              StartsWith(R"(Nodes.items[3].status.allocatable.cpu: )"
                         R"(invalid quantity "12x")"));
}

TEST(K8sJsonTest, NodeUnschedulableMustBeBoolean) {
  absl::StatusOr<Node> node =
      NodeFromJson(R"({"spec": {"unschedulable": "true"}})");
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(Message(node.status()),
            "Node.spec.unschedulable: expected boolean, got string");
}

TEST(K8sJsonTest, MalformedJsonNamesByteOffset) {
  const std::string json = R"({"metadata": {"name": x}})";
  absl::StatusOr<Pod> pod = PodFromJson(json);
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), absl::StatusCode::kInvalidArgument);
  const size_t offset = json.find('x');  // 22
  EXPECT_THAT(Message(pod.status()),
              StartsWith(absl::StrCat("malformed JSON at byte ", offset,
                                      " (line 1, column ", offset + 1, ")")));
}

TEST(K8sJsonTest, MalformedJsonReportsLineAndColumn) {
  const std::string json = "{\n  \"metadata\": {\n    \"name\": \"a\",,\n}}";
  absl::StatusOr<Node> node = NodeFromJson(json);
  ASSERT_FALSE(node.ok());
  const size_t offset = json.find(",,") + 1;  // the second comma
  EXPECT_THAT(Message(node.status()),
              StartsWith(absl::StrCat("malformed JSON at byte ", offset,
                                      " (line 3, column 17)")));
}

TEST(K8sJsonTest, TruncatedJsonPointsAtTheEnd) {
  const std::string json = R"({"metadata": {"name": "a")";
  absl::StatusOr<Pod> pod = PodFromJson(json);
  ASSERT_FALSE(pod.ok());
  EXPECT_THAT(Message(pod.status()),
              AllOf(StartsWith("malformed JSON at byte"),
                    HasSubstr("unexpected end of input")));
}

TEST(K8sJsonTest, EmptyInputIsMalformed) {
  absl::StatusOr<Pod> pod = PodFromJson("");
  ASSERT_FALSE(pod.ok());
  EXPECT_THAT(Message(pod.status()), StartsWith("malformed JSON"));
}

}  // namespace
}  // namespace gpusched
