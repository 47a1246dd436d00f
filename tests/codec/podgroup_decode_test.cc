// PodGroups of Volcano, of the coscheduling plugin and of Kubernetes itself
// (scheduling.k8s.io), from YAML and JSON; the apiVersion's group picks the
// flavor.

#include "api/codec/podgroup_decode.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::Optional;

TEST(PodGroupDecodeTest, VolcanoFromYaml) {
  absl::StatusOr<PodGroup> group = PodGroupFromYaml(R"(
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: llama
  namespace: ml
spec:
  minMember: 4
  minResources:
    cpu: "16"
    nvidia.com/gpu: 32
  queue: research
  priorityClassName: high
status:
  phase: Pending
)",
                                                    "pg.yaml");
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(group->flavor, PodGroup::Flavor::kVolcano);
  EXPECT_EQ(group->Key(), "ml/llama");
  EXPECT_EQ(group->min_member, 4);
  EXPECT_EQ(group->min_resources.Get("cpu"), 16'000);  // milli-CPU
  EXPECT_EQ(group->min_resources.Get("nvidia.com/gpu"), 32);
  EXPECT_EQ(group->queue, "research");
  EXPECT_EQ(group->priority_class_name, "high");
  EXPECT_EQ(group->schedule_timeout_seconds, std::nullopt);
}

TEST(PodGroupDecodeTest, CoschedulingFromJson) {
  absl::StatusOr<PodGroup> group = PodGroupFromJson(R"({
    "apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
    "metadata": {"name": "nginx", "namespace": "web"},
    "spec": {"minMember": 3, "scheduleTimeoutSeconds": 10,
             "minResources": {"nvidia.com/gpu": "6"}}})");
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(group->flavor, PodGroup::Flavor::kCoscheduling);
  EXPECT_EQ(group->Key(), "web/nginx");
  EXPECT_EQ(group->min_member, 3);
  EXPECT_THAT(group->schedule_timeout_seconds, Optional(10));
  EXPECT_EQ(group->min_resources.Get("nvidia.com/gpu"), 6);
}

TEST(PodGroupDecodeTest, AnyVersionOfTheGroupSelectsTheFlavor) {
  absl::StatusOr<PodGroup> group = PodGroupFromJson(
      R"({"apiVersion": "scheduling.x-k8s.io/v1beta1",
          "metadata": {"name": "g"}})");
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(group->flavor, PodGroup::Flavor::kCoscheduling);
  EXPECT_EQ(group->min_member, 1);  // default
}

// Fields that belong to the other API are ignored like unknown fields.
TEST(PodGroupDecodeTest, OtherFlavorsFieldsAreIgnored) {
  absl::StatusOr<PodGroup> group = PodGroupFromJson(
      R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1",
          "metadata": {"name": "g"},
          "spec": {"queue": "q", "priorityClassName": "p"}})");
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(group->queue, "");
  EXPECT_EQ(group->priority_class_name, "");
  absl::StatusOr<PodGroup> volcano = PodGroupFromJson(
      R"({"apiVersion": "scheduling.volcano.sh/v1beta1",
          "metadata": {"name": "g"}, "spec": {"scheduleTimeoutSeconds": 5}})");
  ASSERT_TRUE(volcano.ok()) << volcano.status();
  EXPECT_EQ(volcano->schedule_timeout_seconds, std::nullopt);
}

// A native PodGroup as kube-apiserver v1.37 serves it: the gang's size is
// spec.schedulingPolicy.gang.minCount, the queue the PodGroup's own Kueue
// label; fields of the Volcano spec mean nothing here.
TEST(PodGroupDecodeTest, NativeFromJson) {
  absl::StatusOr<PodGroup> group = PodGroupFromJson(R"({
    "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
    "metadata": {"name": "ring", "namespace": "ml", "uid": "u-1",
                 "labels": {"kueue.x-k8s.io/queue-name": "research"}},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 4}},
             "workloadRef": {"workloadName": "w", "templateName": "t"},
             "minMember": 9, "queue": "other"},
    "status": {"conditions": [{"type": "PodGroupInitiallyScheduled",
                               "status": "False"}]}})");
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(group->flavor, PodGroup::Flavor::kNative);
  EXPECT_EQ(group->Key(), "ml/ring");
  EXPECT_EQ(group->meta.uid, "u-1");
  EXPECT_EQ(group->min_member, 4);
  EXPECT_EQ(group->queue, "research");
}

// A basic policy places pods one by one: a "gang" of one, in one workload.
TEST(PodGroupDecodeTest, NativeBasicPolicyIsAGroupOfOne) {
  absl::StatusOr<PodGroup> group = PodGroupFromYaml(R"(
apiVersion: scheduling.k8s.io/v1alpha3
kind: PodGroup
metadata: {name: web, namespace: ns}
spec:
  schedulingPolicy: {basic: {}}
)",
                                                    "pg.yaml");
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(group->flavor, PodGroup::Flavor::kNative);
  EXPECT_EQ(group->min_member, 1);
  EXPECT_EQ(group->queue, "");  // no label: the pods' queue
}

// Only the native flavor reads the queue from the PodGroup's label.
TEST(PodGroupDecodeTest, QueueLabelIsNativeOnly) {
  absl::StatusOr<PodGroup> group = PodGroupFromJson(
      R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1",
          "metadata": {"name": "g",
                       "labels": {"kueue.x-k8s.io/queue-name": "q"}}})");
  ASSERT_TRUE(group.ok()) << group.status();
  EXPECT_EQ(group->queue, "");
}

struct BadGroup {
  std::string json;
  std::string message;
};

class PodGroupErrorTest : public ::testing::TestWithParam<BadGroup> {};

TEST_P(PodGroupErrorTest, NamesTheField) {
  absl::StatusOr<PodGroup> group = PodGroupFromJson(GetParam().json);
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(std::string(group.status().message()), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, PodGroupErrorTest,
    ::testing::Values(
        BadGroup{R"({"metadata": {"name": "g"}})",
                 "PodGroup.apiVersion: required for a PodGroup"},
        BadGroup{R"({"apiVersion": "v1"})",
                 "PodGroup.apiVersion: unsupported PodGroup API \"v1\": "
                 "expected scheduling.volcano.sh/v1beta1, "
                 "scheduling.x-k8s.io/v1alpha1 or scheduling.k8s.io/v1beta1"},
        BadGroup{R"({"apiVersion": 1})",
                 "PodGroup.apiVersion: expected string, got number"},
        BadGroup{R"({"apiVersion": "scheduling.volcano.sh/v1beta1",
                     "spec": {"minMember": 0}})",
                 "PodGroup.spec.minMember: must be at least 1, got 0"},
        BadGroup{R"({"apiVersion": "scheduling.volcano.sh/v1beta1",
                     "spec": {"minMember": "four"}})",
                 "PodGroup.spec.minMember: expected integer, got string"},
        BadGroup{R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1",
                     "spec": {"scheduleTimeoutSeconds": -1}})",
                 "PodGroup.spec.scheduleTimeoutSeconds: must be "
                 "non-negative, got -1"},
        BadGroup{R"({"apiVersion": "scheduling.volcano.sh/v1beta1",
                     "spec": {"minResources": {"cpu": "lots"}}})",
                 "PodGroup.spec.minResources.cpu: invalid quantity "
                 "\"lots\": expected a digit at character 1"},
        BadGroup{R"({"apiVersion": "scheduling.k8s.io/v1beta1",
                     "spec": {"schedulingPolicy": {"gang": {"minCount": 0}}}})",
                 "PodGroup.spec.schedulingPolicy.gang.minCount: must be at "
                 "least 1, got 0"},
        BadGroup{R"({"apiVersion": "scheduling.k8s.io/v1beta1",
                     "spec": {"schedulingPolicy": {"gang": {"minCount": "4"}}}})",
                 "PodGroup.spec.schedulingPolicy.gang.minCount: expected "
                 "integer, got string"},
        BadGroup{R"({"apiVersion": "scheduling.k8s.io/v1beta1",
                     "spec": {"schedulingPolicy": {"gang": 4}}})",
                 "PodGroup.spec.schedulingPolicy.gang: expected object, got "
                 "number"},
        BadGroup{R"({"apiVersion": "scheduling.k8s.io/v1beta1",
                     "metadata": {"labels": {"kueue.x-k8s.io/queue-name": 1}}})",
                 "PodGroup.metadata.labels[\"kueue.x-k8s.io/queue-name\"]: "
                 "expected string, got number"},
        BadGroup{R"([1])", "PodGroup: expected object, got array"}));

TEST(PodGroupDecodeTest, YamlErrorsNameSourceAndLine) {
  absl::StatusOr<PodGroup> group = PodGroupFromYaml(
      "apiVersion: scheduling.volcano.sh/v1beta1\nkind: PodGroup\n"
      "spec:\n  minMember: -2\n",
      "pg.yaml");
  ASSERT_FALSE(group.ok());
  EXPECT_EQ(std::string(group.status().message()),
            "pg.yaml: line 4: PodGroup.spec.minMember: must be at least 1, "
            "got -2");
}

}  // namespace
}  // namespace gpusched
