// A pod's admission state (Pod::admission) from its labels, annotations,
// scheduling gates and required node affinity, and that every reader of a
// Pod fills it.
#include "api/codec/pod_admission_state.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/codec/admission_review_json.h"
#include "api/codec/cluster_file.h"
#include "api/codec/k8s_json.h"
#include "api/codec/scenario_yaml.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using GroupKind = PodAdmissionState::GroupKind;

Pod WithMeta(StringMap labels, StringMap annotations = {}) {
  Pod pod;
  pod.meta.name = "p";
  pod.meta.namespace_name = "ml";
  pod.meta.labels = std::move(labels);
  pod.meta.annotations = std::move(annotations);
  return pod;
}

// A required affinity term whose matchFields hold `requirements`.
NodeSelectorTerm FieldsTerm(std::vector<NodeSelectorRequirement> requirements) {
  return NodeSelectorTerm{.match_fields = std::move(requirements)};
}

NodeSelectorRequirement NameIn(std::vector<std::string> nodes) {
  return {.key = "metadata.name", .op = "In", .values = std::move(nodes)};
}

TEST(PodAdmissionStateTest, PodWithoutKeysHasEmptyState) {
  const PodAdmissionState state = DecodePodAdmissionState(WithMeta({}));
  EXPECT_FALSE(state.queue_name.has_value());
  EXPECT_EQ(state.priority_class, "");
  EXPECT_EQ(state.group_kind, GroupKind::kNone);
  EXPECT_EQ(state.group_name, "");
  EXPECT_EQ(state.declared_count, 0);
  EXPECT_EQ(state.topology_required, "");
  EXPECT_EQ(state.topology_preferred, "");
  EXPECT_FALSE(state.gated_by_us);
  EXPECT_EQ(state.admitted_node, "");
  EXPECT_EQ(state.pinned_node, "");
}

TEST(PodAdmissionStateTest, QueueAndPriorityClassFromKueueLabels) {
  const PodAdmissionState state = DecodePodAdmissionState(
      WithMeta({{kQueueNameLabel, "q"}, {kPriorityClassLabel, "high"}}));
  EXPECT_EQ(state.queue_name, std::optional<std::string>("q"));
  EXPECT_EQ(state.priority_class, "high");
}

// An empty queue label still says the pod is gpusched's (outside queues).
TEST(PodAdmissionStateTest, EmptyQueueLabelIsPresent) {
  const PodAdmissionState state =
      DecodePodAdmissionState(WithMeta({{kQueueNameLabel, ""}}));
  EXPECT_EQ(state.queue_name, std::optional<std::string>(""));
}

struct GroupCase {
  std::string name;
  StringMap labels;
  StringMap annotations;
  GroupKind kind;
  std::string group;
  int declared_count;
};

class PodGroupKeyTest : public ::testing::TestWithParam<GroupCase> {};

TEST_P(PodGroupKeyTest, GangFromItsKey) {
  const GroupCase& c = GetParam();
  const PodAdmissionState state =
      DecodePodAdmissionState(WithMeta(c.labels, c.annotations));
  EXPECT_EQ(state.group_kind, c.kind);
  EXPECT_EQ(state.group_name, c.group);
  EXPECT_EQ(state.declared_count, c.declared_count);
}

INSTANTIATE_TEST_SUITE_P(
    Keys, PodGroupKeyTest,
    ::testing::Values(
        GroupCase{"Kueue",
                  {{kKueueGroupLabel, "g"}},
                  {{kKueueGroupCountAnnotation, "4"}},
                  GroupKind::kKueue,
                  "g",
                  4},
        GroupCase{"KueueWithoutCount",
                  {{kKueueGroupLabel, "g"}},
                  {},
                  GroupKind::kKueue,
                  "g",
                  0},
        GroupCase{"KueueCountNotANumber",
                  {{kKueueGroupLabel, "g"}},
                  {{kKueueGroupCountAnnotation, "four"}},
                  GroupKind::kKueue,
                  "g",
                  0},
        GroupCase{"Volcano",
                  {},
                  {{kVolcanoGroupAnnotation, "v"}},
                  GroupKind::kVolcano,
                  "v",
                  0},
        GroupCase{"Coscheduling",
                  {{kCoschedulingGroupLabel, "c"}},
                  {},
                  GroupKind::kCoscheduling,
                  "c",
                  0},
        // Only Kueue's pod group declares its size.
        GroupCase{"CountWithoutKueueGroup",
                  {{kCoschedulingGroupLabel, "c"}},
                  {{kKueueGroupCountAnnotation, "4"}},
                  GroupKind::kCoscheduling,
                  "c",
                  0},
        // Kueue before Volcano before coscheduling.
        GroupCase{"KueueFirst",
                  {{kKueueGroupLabel, "g"}, {kCoschedulingGroupLabel, "c"}},
                  {{kVolcanoGroupAnnotation, "v"}},
                  GroupKind::kKueue,
                  "g",
                  0},
        GroupCase{"VolcanoBeforeCoscheduling",
                  {{kCoschedulingGroupLabel, "c"}},
                  {{kVolcanoGroupAnnotation, "v"}},
                  GroupKind::kVolcano,
                  "v",
                  0},
        // An empty name is no key: the next one counts.
        GroupCase{"EmptyNameIsAbsent",
                  {{kKueueGroupLabel, ""}, {kCoschedulingGroupLabel, "c"}},
                  {{kVolcanoGroupAnnotation, ""}},
                  GroupKind::kCoscheduling,
                  "c",
                  0}),
    [](const auto& info) { return info.param.name; });

// The native PodGroup a pod names in its spec goes before every label:
// kube-scheduler gangs the pod by it, so gpusched's gang must be the same.
TEST(PodAdmissionStateTest, NativePodGroupGoesBeforeLabels) {
  Pod pod = WithMeta(
      {{kKueueGroupLabel, "g"}, {kCoschedulingGroupLabel, "c"}},
      {{kKueueGroupCountAnnotation, "4"}, {kVolcanoGroupAnnotation, "v"}});
  pod.pod_group_name = "ring";
  const PodAdmissionState state = DecodePodAdmissionState(pod);
  EXPECT_EQ(state.group_kind, GroupKind::kNative);
  EXPECT_EQ(state.group_name, "ring");
  EXPECT_EQ(state.declared_count, 0);  // the PodGroup's minCount says it
}

TEST(PodAdmissionStateTest, JsonDecoderReadsTheSchedulingGroup) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "w-0", "namespace": "ml"},
    "spec": {"schedulingGroup": {"podGroupName": "ring"}}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->pod_group_name, "ring");
  EXPECT_EQ(pod->admission.group_kind, GroupKind::kNative);
  EXPECT_EQ(pod->admission.group_name, "ring");
}

TEST(PodAdmissionStateTest, SchedulingGroupOfTheWrongTypeNamesTheField) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "w-0"},
    "spec": {"schedulingGroup": {"podGroupName": 7}}})");
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(std::string(pod.status().message()),
            "Pod.spec.schedulingGroup.podGroupName: expected string, got "
            "number");
}

TEST(PodAdmissionStateTest, TopologyLevelsFromAnnotations) {
  const PodAdmissionState state = DecodePodAdmissionState(
      WithMeta({}, {{kTopologyRequiredAnnotation, "gpusched.io/rack"},
                    {kTopologyPreferredAnnotation, "gpusched.io/block"}}));
  EXPECT_EQ(state.topology_required, "gpusched.io/rack");
  EXPECT_EQ(state.topology_preferred, "gpusched.io/block");
}

TEST(PodAdmissionStateTest, GatedOnlyByOurGate) {
  Pod pod = WithMeta({});
  pod.scheduling_gates = {"example.com/other"};
  EXPECT_FALSE(DecodePodAdmissionState(pod).gated_by_us);
  pod.scheduling_gates.push_back(kAdmissionGate);
  EXPECT_TRUE(DecodePodAdmissionState(pod).gated_by_us);
}

// A pod Kueue held when its manager stopped: gpusched queues it and lifts
// Kueue's gates on admission, as its own.
TEST(PodAdmissionStateTest, KueuesGatesReadAsOurs) {
  for (const char* gate : {kKueueAdmissionGate, kKueueTopologyGate}) {
    Pod pod = WithMeta({});
    pod.scheduling_gates = {"example.com/other", gate};
    EXPECT_TRUE(DecodePodAdmissionState(pod).gated_by_us) << gate;
  }
}

struct AdmittedCase {
  std::string name;
  StringMap labels;
  StringMap annotations;
  std::string node;
};

class AdmittedNodeTest : public ::testing::TestWithParam<AdmittedCase> {};

TEST_P(AdmittedNodeTest, NodeOnlyWithLabelTrueAndAnnotation) {
  const AdmittedCase& c = GetParam();
  EXPECT_EQ(
      DecodePodAdmissionState(WithMeta(c.labels, c.annotations)).admitted_node,
      c.node);
}

INSTANTIATE_TEST_SUITE_P(
    Marks, AdmittedNodeTest,
    ::testing::Values(AdmittedCase{"Both",
                                   {{kAdmittedLabel, "true"}},
                                   {{kAssignedNodeAnnotation, "dgx-1"}},
                                   "dgx-1"},
                      AdmittedCase{"LabelWithoutAnnotation",
                                   {{kAdmittedLabel, "true"}},
                                   {},
                                   ""},
                      AdmittedCase{"AnnotationWithoutLabel",
                                   {},
                                   {{kAssignedNodeAnnotation, "dgx-1"}},
                                   ""},
                      AdmittedCase{"LabelNotTrue",
                                   {{kAdmittedLabel, "false"}},
                                   {{kAssignedNodeAnnotation, "dgx-1"}},
                                   ""}),
    [](const auto& info) { return info.param.name; });

struct PinCase {
  std::string name;
  std::vector<NodeSelectorTerm> terms;
  std::string pinned;
};

class PinnedNodeTest : public ::testing::TestWithParam<PinCase> {};

TEST_P(PinnedNodeTest, NodeEveryTermPinsTo) {
  Pod pod = WithMeta({});
  pod.required_affinity_terms = GetParam().terms;
  EXPECT_EQ(DecodePodAdmissionState(pod).pinned_node, GetParam().pinned);
}

INSTANTIATE_TEST_SUITE_P(
    Terms, PinnedNodeTest,
    ::testing::Values(
        PinCase{"NoTerms", {}, ""},
        PinCase{"OneTerm", {FieldsTerm({NameIn({"dgx-1"})})}, "dgx-1"},
        PinCase{
            "TwoTermsSameNode",
            {FieldsTerm({NameIn({"dgx-1"})}), FieldsTerm({NameIn({"dgx-1"})})},
            "dgx-1"},
        PinCase{
            "TwoTermsDifferentNodes",
            {FieldsTerm({NameIn({"dgx-1"})}), FieldsTerm({NameIn({"dgx-2"})})},
            ""},
        PinCase{"ATermWithoutPin",
                {FieldsTerm({NameIn({"dgx-1"})}), FieldsTerm({})},
                ""},
        PinCase{"TwoNodesInOneRequirement",
                {FieldsTerm({NameIn({"dgx-1", "dgx-2"})})},
                ""},
        PinCase{"NotIn",
                {FieldsTerm({{.key = "metadata.name",
                              .op = "NotIn",
                              .values = {"dgx-1"}}})},
                ""},
        // matchExpressions on a node label pin nothing.
        PinCase{"ExpressionOnly",
                {NodeSelectorTerm{.match_expressions = {NameIn({"dgx-1"})}}},
                ""}),
    [](const auto& info) { return info.param.name; });

TEST(PodAdmissionStateTest, ReadSetsThePodsRecord) {
  Pod pod = WithMeta({{kQueueNameLabel, "q"}});
  ReadPodAdmissionState(pod);
  EXPECT_EQ(pod.admission.queue_name, std::optional<std::string>("q"));
}

TEST(PodAdmissionStateTest, JsonDecoderFillsIt) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "w-0", "namespace": "ml",
      "labels": {"kueue.x-k8s.io/queue-name": "q",
                 "kueue.x-k8s.io/pod-group-name": "ring",
                 "gpusched.io/admitted": "true"},
      "annotations": {"kueue.x-k8s.io/pod-group-total-count": "2",
                      "gpusched.io/assigned-node": "dgx-1"}},
    "spec": {"schedulingGates": [{"name": "gpusched.io/admission"}],
      "affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {
          "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name",
            "operator": "In", "values": ["dgx-1"]}]}]}}}}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  const PodAdmissionState& state = pod->admission;
  EXPECT_EQ(state.queue_name, std::optional<std::string>("q"));
  EXPECT_EQ(state.group_kind, GroupKind::kKueue);
  EXPECT_EQ(state.group_name, "ring");
  EXPECT_EQ(state.declared_count, 2);
  EXPECT_TRUE(state.gated_by_us);
  EXPECT_EQ(state.admitted_node, "dgx-1");
  EXPECT_EQ(state.pinned_node, "dgx-1");
}

TEST(PodAdmissionStateTest, ClusterFileYamlFillsIt) {
  absl::StatusOr<ClusterObjects> objects = ParseClusterText(R"(kind: Pod
metadata:
  name: v-0
  namespace: ml
  annotations: {scheduling.k8s.io/group-name: vgang}
)",
                                                            "c.yaml");
  ASSERT_TRUE(objects.ok()) << objects.status();
  ASSERT_EQ(objects->pods.size(), 1u);
  EXPECT_EQ(objects->pods[0].admission.group_kind, GroupKind::kVolcano);
  EXPECT_EQ(objects->pods[0].admission.group_name, "vgang");
}

TEST(PodAdmissionStateTest, ScenarioPodsHaveIt) {
  absl::StatusOr<Scenario> s = ParseScenarioText(
      "{apiVersion: gpusched.io/v1alpha1, kind: Scenario,\n"
      " nodes: [{metadata: {name: n1}}],\n"
      " events: [{at: 0s, create: [{kind: Pod, metadata: {name: w-0,\n"
      "   labels: {kueue.x-k8s.io/queue-name: q}}}]}]}\n",
      "t.yaml", "");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->events[0].create_pods.size(), 1u);
  EXPECT_EQ(s->events[0].create_pods[0].admission.queue_name,
            std::optional<std::string>("q"));
}

// The webhook's review of a CREATE of pod ml/`name` whose object is
// `object` (JSON).
absl::StatusOr<AdmissionReviewRequest> ReviewPodCreate(
    const std::string& name, const std::string& object) {
  return DecodeAdmissionReview(
      R"({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
          "request": {"uid": "u1", "operation": "CREATE",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "namespace": "ml", "name": ")" +
          name + R"(", "object": )" + object + "}}",
      1 << 20, kAdmissionGate);
}

TEST(PodAdmissionStateTest, AdmissionReviewPodHasIt) {
  absl::StatusOr<AdmissionReviewRequest> review = ReviewPodCreate(
      "c-0",
      R"({"metadata": {"labels": {"scheduling.x-k8s.io/pod-group": "cg"}}})");
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_EQ(review->pod.admission.group_kind, GroupKind::kCoscheduling);
  EXPECT_EQ(review->pod.admission.group_name, "cg");
}

// A native gang's member carries no label: the webhook must read its spec
// to know the queueing core holds it (and gate it).
TEST(PodAdmissionStateTest, AdmissionReviewReadsTheNativePodGroup) {
  absl::StatusOr<AdmissionReviewRequest> review = ReviewPodCreate(
      "ring-0", R"({"metadata": {}, "spec": {"schedulerName": "gpusched",
                    "schedulingGroup": {"podGroupName": "ring"}}})");
  ASSERT_TRUE(review.ok()) << review.status();
  EXPECT_EQ(review->scheduler_name, "gpusched");
  EXPECT_EQ(review->pod.admission.group_kind, GroupKind::kNative);
  EXPECT_EQ(review->pod.admission.group_name, "ring");
}

}  // namespace
}  // namespace gpusched

namespace gpusched {
namespace {

TEST(RuntimeHintTest, ExpectedRuntimeAndDeadlineAreReadWithThePod) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "p", "namespace": "ml",
                 "annotations": {"gpusched.io/expected-runtime": "1h30m"}},
    "spec": {"activeDeadlineSeconds": 7200, "containers": []}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->runtime.expected_ms, 90 * 60'000);
  EXPECT_EQ(pod->runtime.deadline_ms, 7'200'000);
  EXPECT_TRUE(pod->runtime.rejected.empty());
}

TEST(RuntimeHintTest, AnEstimateThatIsNoDurationIsSetAsideWithWhy) {
  Pod pod;
  pod.meta.annotations["gpusched.io/expected-runtime"] = "a while";
  ReadPodAdmissionState(pod);
  EXPECT_FALSE(pod.runtime.expected_ms.has_value());
  EXPECT_NE(pod.runtime.rejected.find("\"a while\" is not a positive duration"),
            std::string::npos)
      << pod.runtime.rejected;
  pod.meta.annotations["gpusched.io/expected-runtime"] = "-5m";
  ReadPodAdmissionState(pod);
  EXPECT_FALSE(pod.runtime.expected_ms.has_value());
}

TEST(RuntimeHintTest, ADeadlineThatIsNotPositiveNamesItsField) {
  absl::StatusOr<Pod> pod = PodFromJson(R"({
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {"activeDeadlineSeconds": 0, "containers": []}})");
  ASSERT_FALSE(pod.ok());
  EXPECT_NE(std::string(pod.status().message()).find("activeDeadlineSeconds"),
            std::string::npos)
      << pod.status();
}

}  // namespace
}  // namespace gpusched
