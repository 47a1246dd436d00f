// Pod, Node and PodGroup JSON as the API server writes them (k8s_json.h,
// podgroup_decode.h), then what the scheduler reads from a decoded object:
// a pod's GPU request and a node's GPU inventory (labels, capacity and the
// topology annotation). Variants by first byte: p Pod, n Node, g PodGroup.
#include <cstddef>
#include <cstdint>

#include "api/codec/k8s_json.h"
#include "api/codec/podgroup_decode.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/gpu_request.h"
#include "tests/fuzz/fuzz_util.h"

namespace gpusched {
namespace {

void Pods(std::string_view json) {
  absl::StatusOr<Pod> pod = PodFromJson(json);
  if (!pod.ok()) return;
  (void)GpuRequestOf(*pod, EffectiveRequests(*pod));
}

void Nodes(std::string_view json) {
  absl::StatusOr<Node> node = NodeFromJson(json);
  if (!node.ok()) return;
  GpuInventory inventory = GpuInventory::FromNode(*node);
  (void)inventory.topology().NvLinkIslands();
}

}  // namespace
}  // namespace gpusched

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [variant, text] = gpusched::fuzz::Pick(data, size, "png");
  switch (variant) {
    case 0:
      gpusched::Pods(text);
      break;
    case 1:
      gpusched::Nodes(text);
      break;
    default:
      (void)gpusched::PodGroupFromJson(text);
  }
  return 0;
}
