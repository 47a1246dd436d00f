#include "scheduler/gpu_set_cache.h"

#include <mutex>

#include "scheduler/gpu_set_allocator.h"

namespace gpusched {

std::shared_ptr<const GpuSetCache> GpuSetCache::For(
    const GpuTopology& topology) {
  if (topology.gpu_count() > kMaxGpus) return nullptr;
  // Interned by value; a cluster has a handful of distinct topologies, so a
  // linear scan at node load time is cheaper than hashing matrices.
  static std::mutex mu;
  static std::vector<std::shared_ptr<const GpuSetCache>> interned;
  std::lock_guard<std::mutex> lock(mu);
  for (const auto& cache : interned) {
    if (cache->topology_ == topology) return cache;
  }
  interned.push_back(std::make_shared<const GpuSetCache>(topology));
  return interned.back();
}

GpuSetCache::GpuSetCache(GpuTopology topology)
    : topology_(std::move(topology)), max_pair_score_(MaxPairScore(topology_)) {
  const int n = topology_.gpu_count();
  const size_t slots = (size_t{1} << n) * static_cast<size_t>(n + 1);
  table_ = std::make_unique<std::atomic<uint32_t>[]>(slots);
  for (size_t i = 0; i < slots; ++i) {
    table_[i].store(0, std::memory_order_relaxed);
  }
}

std::optional<uint32_t> GpuSetCache::Choose(uint32_t free_mask,
                                            int count) const {
  const int n = topology_.gpu_count();
  if (count <= 0 || count > n) return std::nullopt;
  std::atomic<uint32_t>& slot =
      table_[static_cast<size_t>(free_mask) * (n + 1) + count];
  uint32_t value = slot.load(std::memory_order_relaxed);
  if (value == 0) {
    std::vector<int> free;
    for (int i = 0; i < n; ++i) {
      if (free_mask & (1u << i)) free.push_back(i);
    }
    uint32_t chosen = 0;
    if (auto set = ChooseGpuSet(topology_, free, count)) {
      for (int gpu : *set) chosen |= 1u << gpu;
    }
    value = (chosen << 1) | 1;
    slot.store(value, std::memory_order_relaxed);
  }
  const uint32_t chosen = value >> 1;
  if (chosen == 0) return std::nullopt;
  return chosen;
}

}  // namespace gpusched
