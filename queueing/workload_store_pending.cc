// The pending queries: where a pending workload stands in its queue and
// why it waits, for reports, events and the visibility API.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "queueing/workload_store.h"

namespace gpusched {

std::string WorkloadStore::ReasonOf(const Workload& w) const {
  const WaitReason* shared = classes_.SharedFailure(w);
  return shared != nullptr ? shared->text : w.reason;
}

ReasonCode WorkloadStore::PendingCode(const Workload& w) const {
  if (w.state != Workload::State::kPending) return ReasonCode::kNone;
  const WaitReason* shared = classes_.SharedFailure(w);
  return shared != nullptr ? shared->code : w.code;
}

std::vector<const Workload*> WorkloadStore::PendingOrder(
    const std::string& cq) const {
  std::vector<const Workload*> pending;
  for (const auto& [key, w] : live_) {
    if (w->cluster_queue == cq && w->state == Workload::State::kPending &&
        !w->pods.empty()) {
      pending.push_back(w);
    }
  }
  std::sort(pending.begin(), pending.end(), queue_order_);
  return pending;
}

std::string WorkloadStore::PendingReason(const Workload& w) const {
  if (w.state != Workload::State::kPending || !IsQueued(w)) return ReasonOf(w);
  std::vector<const Workload*> order = PendingOrder(w.cluster_queue);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == &w) return PendingReason(w, i + 1, order.size());
  }
  return ReasonOf(w);
}

std::string WorkloadStore::PendingReason(const Workload& w, size_t position,
                                         size_t total) const {
  const std::string reason = ReasonOf(w);
  return absl::StrCat(reason, reason.empty() ? "" : "; ", "position ", position,
                      " of ", total);
}

std::map<const Workload*, std::pair<size_t, size_t>>
WorkloadStore::PendingPositions() const {
  std::map<const Workload*, std::pair<size_t, size_t>> positions;
  std::map<std::string, std::vector<const Workload*>> by_queue;
  for (const auto& [key, w] : live_) {
    if (IsQueued(*w) && w->state == Workload::State::kPending &&
        !w->pods.empty()) {
      by_queue[w->cluster_queue].push_back(w);
    }
  }
  for (auto& [cq, pending] : by_queue) {
    std::sort(pending.begin(), pending.end(), queue_order_);
    for (size_t i = 0; i < pending.size(); ++i) {
      positions[pending[i]] = {i + 1, pending.size()};
    }
  }
  return positions;
}

}  // namespace gpusched
