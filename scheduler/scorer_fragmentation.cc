// fragmentation: FGD (Weng et al., ATC '23): prefer the placement that
// grows the node's expected GPU fragmentation least, measured against the
// workload's task shapes (ScoreInput::shapes) with GPUs, CPU and memory.
#include <algorithm>
#include <cmath>

#include "absl/container/inlined_vector.h"
#include "scheduler/fragmentation.h"
#include "scheduler/scoring.h"

namespace gpusched {
namespace {

int64_t FreeOf(const NodeState& node, std::string_view resource) {
  const ResourceList& allocatable = node.node().allocatable;
  if (!allocatable.Has(resource)) return kUnlimited;
  return allocatable.Get(resource) - node.requested().Get(resource);
}

bool AskHostResources(std::span<const TaskShape> shapes) {
  return std::any_of(shapes.begin(), shapes.end(), [](const TaskShape& s) {
    return s.cpu_milli > 0 || s.memory_bytes > 0;
  });
}

}  // namespace

double FragmentationScorePrecise(const ScoreInput& input) {
  const std::span<const TaskShape> shapes =
      input.shapes.empty() ? DefaultTaskShapes() : input.shapes;
  // On the stack: this runs for every candidate node of every prioritize.
  // Unhealthy GPUs count as 0 free so that indices match the assignment.
  absl::InlinedVector<int, 16> gpus;
  for (const GpuDevice& d : input.node.gpus().devices()) {
    gpus.push_back(d.healthy ? d.free_milli : 0);
  }
  NodeFree free{.gpu_milli = gpus};
  // Resource lookups cost more than the measure; skip them for shapes that
  // ask no CPU or memory (DefaultTaskShapes).
  if (AskHostResources(shapes)) {
    free.cpu_milli = FreeOf(input.node, kCpu);
    free.memory_bytes = FreeOf(input.node, kMemory);
  }
  const double before = NodeFragmentation(free, shapes);
  for (int id : input.assignment.gpu_ids) {
    gpus[id] -= input.assignment.milli_per_gpu;
  }
  if (free.cpu_milli != kUnlimited) {
    free.cpu_milli -= input.pod.requests.Get(kCpu);
  }
  if (free.memory_bytes != kUnlimited) {
    free.memory_bytes -= input.pod.requests.Get(kMemory);
  }
  const double after = NodeFragmentation(free, shapes);
  // FGD's squashing: a growth of one GPU's worth of fragment costs ~25.
  const double delta = (after - before) / 1000.0;
  return 100.0 / (1.0 + std::exp(delta));
}

int FragmentationScore(const ScoreInput& input) {
  return static_cast<int>(std::lround(FragmentationScorePrecise(input)));
}

}  // namespace gpusched
