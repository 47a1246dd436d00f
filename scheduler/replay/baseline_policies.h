#ifndef GPUSCHED_SCHEDULER_REPLAY_BASELINE_POLICIES_H_
#define GPUSCHED_SCHEDULER_REPLAY_BASELINE_POLICIES_H_

#include <cstdint>
#include <memory>

#include "scheduler/replay/placement_policy.h"

namespace gpusched::replay {

// The FGD paper's baselines (Weng et al., ATC '23, §6; gpu-facts.md §4.3),
// written from their descriptions. Ties go to a seeded random node among
// the best, as in kube-scheduler.

// Random: any node the pod fits, uniformly.
std::unique_ptr<PlacementPolicy> MakeRandomPolicy(uint64_t seed);
// BestFit: the least weighted leftover after placement, 0.5 CPU + 0.5 GPU,
// each normalised by the largest node's capacity.
std::unique_ptr<PlacementPolicy> MakeBestFitPolicy(uint64_t seed);
// DotProd (Tetris): the smallest dot product of the node's free (CPU, GPU)
// and the pod's request, both normalised by the node's capacity; for a
// share, per candidate GPU (that GPU's free milli).
std::unique_ptr<PlacementPolicy> MakeDotProductPolicy(uint64_t seed);
// GpuPacking: already shared GPUs first (least free first), then whole GPUs
// on nodes already in use (fewest taken), idle nodes last.
std::unique_ptr<PlacementPolicy> MakePackingPolicy(uint64_t seed);

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_BASELINE_POLICIES_H_
