// topology: the link quality of the GPU set the pod would get.
#include <algorithm>

#include "scheduler/gpu_set_allocator.h"
#include "scheduler/scoring.h"

namespace gpusched {
namespace {

// Pair score of the best link gpusched knows: NV18 plus the same NUMA node.
constexpr int kBestPairScore = 18 * 100 + 20;

}  // namespace

// Half of the score is absolute (how good the links are, NVSwitch H100
// beats PCIe), half relative (how close the chosen set comes to the best set
// this node's topology allows). Pods with fewer than two GPUs have no links
// to care about and score 100 everywhere, which changes no ranking.
int TopologyScore(const ScoreInput& input) {
  const std::vector<int>& gpus = input.assignment.gpu_ids;
  if (gpus.size() < 2) return 100;
  const GpuTopology& topology = input.node.gpus().topology();
  const int64_t pairs = static_cast<int64_t>(gpus.size()) *
                        (static_cast<int64_t>(gpus.size()) - 1) / 2;
  const int64_t average = topology.SetScore(gpus) / pairs;
  const int absolute =
      static_cast<int>(std::min<int64_t>(100, average * 100 / kBestPairScore));
  const GpuSetCache* cache = input.node.gpus().set_cache();
  const int64_t max_pair =
      cache != nullptr ? cache->max_pair_score() : MaxPairScore(topology);
  const int relative =
      max_pair <= 0
          ? 100
          : static_cast<int>(std::min<int64_t>(
                100, topology.SetScore(gpus) * 100 / (pairs * max_pair)));
  return (absolute + relative) / 2;
}

}  // namespace gpusched
