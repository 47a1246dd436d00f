// What depends on free capacity and stays true while only admissions
// happen: remembered placement failures and upper bounds on free GPUs.
// Both are dropped when something frees capacity, and at every Schedule.
#include <algorithm>

#include "queueing/engine_internal.h"
#include "queueing/gang_placer.h"

namespace gpusched {

void QueueingEngine::NoteFreedCapacity() {
  if (events_.size() == placement_failures_events_) return;
  // Admissions only take capacity, so what failed stands, and the bounds
  // hold, until something frees some (an eviction, a finish, a lifted
  // reservation).
  if (ChangesSince(placement_failures_events_, placement_failures_reserved_)
          .capacity_freed) {
    placement_failures_.clear();
    capacity_bound_.valid = false;
  }
  placement_failures_events_ = events_.size();
  placement_failures_reserved_ = reservation_changes_;
}

bool QueueingEngine::CouldFitWithFreed(
    const Workload& w, const std::vector<Workload*>& candidates) {
  // A verdict from free capacity, as a search's would be: capacity freed
  // later must wake the workload's class.
  ++placement_searches_;
  NoteFreedCapacity();
  if (!capacity_bound_.valid) {
    capacity_bound_ = CapacityBound{.valid = true};
    for (const NodeState* node : *SortedNodes()) {
      const int64_t free = node->gpus().free_milli();
      capacity_bound_.time_shared |= node->gpus().time_shared();
      capacity_bound_.max_free = std::max(capacity_bound_.max_free, free);
      capacity_bound_.total_free += free;
    }
  }
  if (capacity_bound_.time_shared) return true;
  int64_t largest = 0, total = 0;
  for (const Pod* pod : w.MembersToAdmit()) {
    const int64_t milli = GpuDemandMilli(*pod);
    largest = std::max(largest, milli);
    total += milli;
  }
  if (largest == 0) return true;  // no whole or shared GPUs (MIG, CPU)
  std::map<std::string, int64_t> freed_on;
  int64_t freed = 0;
  for (const Workload* v : candidates) {
    for (const auto& [pod, placement] : v->placements) {
      const int64_t milli =
          int64_t{placement.gpus.milli_per_gpu} *
          static_cast<int64_t>(placement.gpus.gpu_ids.size());
      freed_on[placement.node] += milli;
      freed += milli;
    }
  }
  if (capacity_bound_.total_free + freed < total) return false;
  if (capacity_bound_.max_free >= largest) return true;
  for (const auto& [name, milli] : freed_on) {
    const NodeState* node = model_->FindNode(name);
    if (node != nullptr && node->gpus().free_milli() + milli >= largest) {
      return true;
    }
  }
  return false;
}

}  // namespace gpusched
