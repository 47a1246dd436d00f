// YAML readers of Kubernetes objects: cluster files (`kubectl get -o yaml`
// or `-o json` output, multi-document, Lists; cluster_file.h) and PodGroups
// (podgroup_decode.h). yaml-cpp is not instrumented: CheckYamlText in front
// of it must turn away what would make it run away. Variants by first byte:
// c cluster file, g PodGroup.
#include <cstddef>
#include <cstdint>

#include "api/codec/cluster_file.h"
#include "api/codec/podgroup_decode.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/gpu_request.h"
#include "tests/fuzz/fuzz_util.h"

namespace gpusched {
namespace {

void ClusterFile(std::string_view text) {
  absl::StatusOr<ClusterObjects> objects = ParseClusterText(text, "fuzz.yaml");
  if (!objects.ok()) return;
  for (const Node& node : objects->nodes) (void)GpuInventory::FromNode(node);
  for (const Pod& pod : objects->pods) {
    (void)GpuRequestOf(pod, EffectiveRequests(pod));
  }
}

}  // namespace
}  // namespace gpusched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [variant, text] = gpusched::fuzz::Pick(data, size, "cg");
  if (variant == 0) {
    gpusched::ClusterFile(text);
  } else {
    (void)gpusched::PodGroupFromYaml(text, "fuzz.yaml");
  }
  return 0;
}
