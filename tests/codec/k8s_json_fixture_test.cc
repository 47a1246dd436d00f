// Decoding the shared Kubernetes fixtures (real-world Pod and Node JSON).
// The suite's name ends in SharedFixtureTest: it reads GPUSCHED_SHARED_DIR
// (ctest label shared_fixtures, tests/CMakeLists.txt).

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "api/codec/k8s_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "simdjson.h"

namespace gpusched {
namespace {

using ::testing::SizeIs;

std::string FixturePath(const std::string& name) {
  return std::string(GPUSCHED_SHARED_DIR) + "/fixtures/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file) << path;
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

TEST(K8sJsonSharedFixtureTest, H20NodeAllocatableInBaseUnits) {
  absl::StatusOr<Node> node = NodeFromJson(
      ReadFile(FixturePath("node-h20-8gpu-mig-mixed-partial.json")));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->meta.name, "zkj-pa-uat-gpu-004");
  EXPECT_EQ(node->allocatable.Get("nvidia.com/gpu"), 7);
  EXPECT_EQ(node->allocatable.Get("memory"), int64_t{1056189400} * 1024);
  EXPECT_EQ(node->allocatable.Get("nvidia.com/mig-1g.12gb"), 2);
  EXPECT_EQ(node->allocatable.Get("cpu"), 128000);  // 128 cores in milli
  EXPECT_EQ(node->capacity.Get("memory"), int64_t{1056291800} * 1024);
  EXPECT_EQ(node->meta.labels.at("nvidia.com/gpu.product"), "NVIDIA-H20");
  EXPECT_FALSE(node->unschedulable);
  EXPECT_THAT(node->taints, SizeIs(0));
}

TEST(K8sJsonSharedFixtureTest, A100MixedMigNodeCapacity) {
  absl::StatusOr<Node> node = NodeFromJson(
      ReadFile(FixturePath("node-a100-40gb-mig-mixed-partial.json")));
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ(node->capacity.Get("nvidia.com/mig-3g.20gb"), 1);
  EXPECT_EQ(node->allocatable.Get("nvidia.com/mig-1g.5gb"), 1);
  EXPECT_EQ(node->meta.labels.at("nvidia.com/mig.strategy"), "mixed");
}

TEST(K8sJsonSharedFixtureTest, MigPodLimitWrittenAsNumber) {
  absl::StatusOr<Pod> pod =
      PodFromJson(ReadFile(FixturePath("pod-mig-mixed-request.json")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.name, "gpu-pod");
  EXPECT_EQ(pod->meta.namespace_name, "");  // absent stays empty
  ASSERT_THAT(pod->containers, SizeIs(1));
  EXPECT_EQ(pod->containers[0].name, "ubuntu-container");
  EXPECT_EQ(pod->containers[0].limits.Get("nvidia.com/mig-3g.20gb"), 1);
  EXPECT_TRUE(pod->containers[0].requests.empty());
}

TEST(K8sJsonSharedFixtureTest, HamiVgpuPodNumericLimits) {
  absl::StatusOr<Pod> pod =
      PodFromJson(ReadFile(FixturePath("pod-hami-vgpu-request.json")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  ASSERT_THAT(pod->containers, SizeIs(1));
  const ResourceList& limits = pod->containers[0].limits;
  EXPECT_EQ(limits.Get("nvidia.com/gpu"), 1);
  EXPECT_EQ(limits.Get("nvidia.com/gpumem"), 3000);
  EXPECT_EQ(limits.Get("nvidia.com/gpucores"), 30);
}

TEST(K8sJsonSharedFixtureTest, HamiPolicyAnnotations) {
  absl::StatusOr<Pod> pod = PodFromJson(
      ReadFile(FixturePath("pod-hami-scheduling-policy-annotations.json")));
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.annotations.at("hami.io/gpu-scheduler-policy"),
            "binpack");
  EXPECT_EQ(pod->meta.annotations.at("hami.io/node-scheduler-policy"),
            "spread");
}

TEST(K8sJsonSharedFixtureTest, PodInsideExtenderFilterRequest) {
  const std::string text = ReadFile(
      FixturePath("extender-v1/constructed-filter-request-nodecache.json"));
  simdjson::dom::parser parser;
  simdjson::dom::element pod_element;
  ASSERT_EQ(parser.parse(text)["Pod"].get(pod_element), simdjson::SUCCESS);
  absl::StatusOr<Pod> pod = DecodePod(pod_element, "Pod");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->meta.name, "gpu-pod");
  EXPECT_EQ(pod->meta.namespace_name, "default");
  EXPECT_EQ(pod->meta.uid, "5f1d1c8e-0000-4000-8000-000000000001");
  EXPECT_EQ(pod->meta.resource_version, "123456");
  EXPECT_EQ(pod->meta.creation_unix_seconds, 1735689600);  // 2025-01-01Z
  EXPECT_EQ(pod->scheduler_name, "default-scheduler");
  EXPECT_EQ(pod->priority, 0);
  EXPECT_EQ(pod->phase, PodPhase::kPending);
  ASSERT_THAT(pod->containers, SizeIs(1));
  EXPECT_EQ(pod->containers[0].requests.Get("nvidia.com/mig-3g.20gb"), 1);
  EXPECT_EQ(pod->containers[0].limits.Get("nvidia.com/mig-3g.20gb"), 1);
}

// Every fixture whose kind is Pod or Node decodes without error.
TEST(K8sJsonSharedFixtureTest, EveryPodAndNodeFixtureDecodes) {
  int decoded = 0;
  simdjson::dom::parser parser;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           std::string(GPUSCHED_SHARED_DIR) + "/fixtures")) {
    if (entry.path().extension() != ".json") continue;
    const std::string text = ReadFile(entry.path().string());
    std::string_view kind;
    if (parser.parse(text)["kind"].get(kind) != simdjson::SUCCESS) continue;
    if (kind == "Pod") {
      EXPECT_TRUE(PodFromJson(text).ok()) << entry.path();
      ++decoded;
    } else if (kind == "Node") {
      EXPECT_TRUE(NodeFromJson(text).ok()) << entry.path();
      ++decoded;
    }
  }
  EXPECT_GE(decoded, 5);  // 3 pods + 2 nodes at the time of writing
}

}  // namespace
}  // namespace gpusched
