#include "api/codec/gpu_topology_annotation.h"

#include "scheduler/gpu_topology.h"

namespace gpusched {

absl::StatusOr<GpuTopology> ParseGpuTopology(std::string_view annotation) {
  const size_t first = annotation.find_first_not_of(" \t\r\n\v\f");
  if (first == std::string_view::npos) {
    return gpu_topology_internal::ErrorAt({}, "empty input");
  }
  if (annotation[first] == '{') return ParseCompactGpuTopology(annotation);
  return ParseNvidiaSmiTopology(annotation);
}

void ReadGpuTopologyAnnotation(Node& node) {
  auto it = node.meta.annotations.find(kGpuTopologyAnnotation);
  if (it == node.meta.annotations.end()) {
    node.gpu_topology.reset();
    return;
  }
  node.gpu_topology = ParseGpuTopology(it->second);
}

}  // namespace gpusched
