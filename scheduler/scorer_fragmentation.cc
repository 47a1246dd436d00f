// fragmentation: FGD (Weng et al., ATC '23): prefer the placement that
// grows the node's GPU fragmentation least.
#include <cmath>
#include <vector>

#include "absl/container/inlined_vector.h"

#include "scheduler/fragmentation.h"
#include "scheduler/scoring.h"

namespace gpusched {

int FragmentationScore(const ScoreInput& input) {
  if (input.assignment.gpu_ids.empty()) return 50;  // no GPU change
  // On the stack: this runs for every candidate node of every prioritize.
  absl::InlinedVector<int, 16> free;
  for (const GpuDevice& d : input.node.gpus().devices()) {
    free.push_back(d.healthy ? d.free_milli : 0);
  }
  const double before = NodeFragmentation(free, DefaultTaskShapes());
  for (int id : input.assignment.gpu_ids) {
    free[id] -= input.assignment.milli_per_gpu;
  }
  const double after = NodeFragmentation(free, DefaultTaskShapes());
  // FGD's squashing: a growth of one GPU's worth of fragment costs ~25.
  const double delta = (after - before) / 1000.0;
  return static_cast<int>(std::lround(100.0 / (1.0 + std::exp(delta))));
}

}  // namespace gpusched
