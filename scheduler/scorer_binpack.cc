// binpack and spread: how full the node is after the placement.
#include <algorithm>

#include "scheduler/scoring.h"

namespace gpusched {
namespace {

int Percent(int64_t part, int64_t whole) {
  if (whole <= 0) return 0;
  return static_cast<int>(std::clamp<int64_t>(part * 100 / whole, 0, 100));
}

int GpuUtilisationAfter(const ScoreInput& in) {
  const GpuInventory& gpus = in.node.gpus();
  const int64_t placed = static_cast<int64_t>(in.assignment.gpu_ids.size()) *
                         in.assignment.milli_per_gpu;
  return Percent(gpus.total_milli() - gpus.free_milli() + placed,
                 gpus.total_milli());
}

int MigUtilisationAfter(const ScoreInput& in) {
  int64_t capacity = 0;
  int64_t used = 0;
  for (const MigPool& pool : in.node.gpus().mig_pools()) {
    capacity += pool.capacity;
    used += pool.used;
  }
  for (const auto& [resource, count] : in.assignment.mig) used += count;
  return Percent(used, capacity);
}

int CpuMemoryUtilisationAfter(const ScoreInput& in) {
  const ResourceList& allocatable = in.node.node().allocatable;
  const ResourceList& requested = in.node.requested();
  int cpu = Percent(requested.Get(kCpu) + in.pod.requests.Get(kCpu),
                    allocatable.Get(kCpu));
  int memory = Percent(requested.Get(kMemory) + in.pod.requests.Get(kMemory),
                       allocatable.Get(kMemory));
  return (cpu + memory) / 2;
}

int UtilisationAfter(const ScoreInput& in) {
  if (!in.assignment.gpu_ids.empty()) return GpuUtilisationAfter(in);
  if (!in.assignment.mig.empty()) return MigUtilisationAfter(in);
  return CpuMemoryUtilisationAfter(in);
}

}  // namespace

int BinpackScore(const ScoreInput& input) { return UtilisationAfter(input); }

int SpreadScore(const ScoreInput& input) {
  return 100 - UtilisationAfter(input);
}

}  // namespace gpusched
