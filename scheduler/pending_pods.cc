#include "scheduler/pending_pods.h"

#include "scheduler/cluster_model.h"

namespace gpusched {

void PendingPods::Remember(const Pod& pod) {
  std::string uid = PodUid(pod);
  auto copy = std::make_shared<const Pod>(pod);
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t sequence = next_sequence_++;
  by_uid_.insert_or_assign(uid, Entry{std::move(copy), sequence});
  arrival_order_.emplace_back(std::move(uid), sequence);
  while (arrival_order_.size() > capacity_) {
    auto& [oldest, oldest_sequence] = arrival_order_.front();
    auto it = by_uid_.find(oldest);
    if (it != by_uid_.end() && it->second.sequence == oldest_sequence) {
      by_uid_.erase(it);
    }
    arrival_order_.pop_front();
  }
}

std::shared_ptr<const Pod> PendingPods::Find(std::string_view uid) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : it->second.pod;
}

void PendingPods::Forget(std::string_view uid) {
  std::lock_guard<std::mutex> lock(mu_);
  by_uid_.erase(uid);
}

size_t PendingPods::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return by_uid_.size();
}

}  // namespace gpusched
