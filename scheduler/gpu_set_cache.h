#ifndef GPUSCHED_SCHEDULER_GPU_SET_CACHE_H_
#define GPUSCHED_SCHEDULER_GPU_SET_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "scheduler/gpu_topology.h"

namespace gpusched {

// Memoises ChooseGpuSet per (free-GPU mask, count) for one topology.
//
// Why: the exhaustive set search costs about a microsecond on 8 GPUs, and
// filter + prioritize run it for every candidate node: 500 nodes make it
// the largest cost of a request. Thousands of nodes share a handful of
// topologies, so one table per distinct topology (interned) serves them all.
//
// The table is filled lazily without locks: every thread computes the same
// answer for a slot, so a racing duplicate store writes the same value.
class GpuSetCache {
 public:
  // Topologies with more GPUs than this are not cached (the table grows as
  // 2^n); callers then search directly.
  static constexpr int kMaxGpus = 12;

  // The shared cache for `topology`, or null when it has too many GPUs.
  static std::shared_ptr<const GpuSetCache> For(const GpuTopology& topology);

  explicit GpuSetCache(GpuTopology topology);

  // ChooseGpuSet(topology, GPUs of free_mask, count), as a mask of the
  // chosen GPUs; nullopt when count GPUs are not free.
  std::optional<uint32_t> Choose(uint32_t free_mask, int count) const;
  int max_pair_score() const { return max_pair_score_; }

 private:
  GpuTopology topology_;
  int max_pair_score_ = 0;
  // Slot (mask * (n + 1) + count): 0 = not computed yet, else
  // (chosen mask << 1) | 1, with chosen mask 0 meaning "does not fit".
  mutable std::unique_ptr<std::atomic<uint32_t>[]> table_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_SET_CACHE_H_
