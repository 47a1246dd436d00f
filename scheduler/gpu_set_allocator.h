#ifndef GPUSCHED_SCHEDULER_GPU_SET_ALLOCATOR_H_
#define GPUSCHED_SCHEDULER_GPU_SET_ALLOCATOR_H_

// Chooses which GPUs of one node a pod should get, by the go-gpuallocator
// set score (sum of pair scores, see GpuTopology::PairScore).
//
// Search:
//   - When C(free, count) <= C(16, 8) = 12870, every combination is scored.
//     The winner has the highest SetScore; ties go to the choice whose
//     leftover free GPUs score highest among themselves (so a well-connected
//     island is not stranded: the idea of go-gpuallocator's partition
//     search, at the cost of one pass); then to the lexicographically
//     smallest index list.
//   - Larger searches (rare: more than 16 free GPUs and a mid-sized count)
//     use a greedy fallback, restarted from every free GPU as seed: from the
//     seed, repeatedly add the GPU with the highest pair-score sum to the
//     GPUs chosen so far (ties: lowest index). The seed's first partner is
//     its best pair, so this includes "seed with the best pair, then grow".
//     The best result wins (ties: lexicographically smallest); no leftover
//     tie-break. Cost O(free^2 * count).
// Everything is deterministic: no hash-map order, every tie has a final
// unique key.

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "scheduler/gpu_topology.h"

namespace gpusched {

// Picks `count` GPUs out of `free_gpus` (indices into `topology`; sorted and
// de-duplicated here anyway) as described above. Returns them ascending, or
// nullopt when count <= 0 or count > number of free GPUs.
std::optional<std::vector<int>> ChooseGpuSet(const GpuTopology& topology,
                                             std::span<const int> free_gpus,
                                             int count);

// SetScore of the set ChooseGpuSet would pick (the best achievable, exactly
// so on the exhaustive path); nullopt like ChooseGpuSet.
std::optional<int64_t> BestSetScore(const GpuTopology& topology,
                                    std::span<const int> free_gpus, int count);

// The highest pair score between any two GPUs of `topology`; 0 with fewer
// than two GPUs.
int MaxPairScore(const GpuTopology& topology);

// SetScore(gpus) relative to every pair scoring MaxPairScore:
// SetScore * 100 / (pairs * MaxPairScore), rounded down, in 0..100.
// 100 for sets of fewer than two GPUs.
int NormalizedSetScore(const GpuTopology& topology, std::span<const int> gpus);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_SET_ALLOCATOR_H_
