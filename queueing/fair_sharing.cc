#include "queueing/fair_sharing.h"

#include <algorithm>
#include <utility>

namespace gpusched {

FairSharingTournament::FairSharingTournament(
    const QuotaTree& quota, std::map<std::string, std::deque<Contender>> queues,
    Before queue_order)
    : quota_(quota),
      queues_(std::move(queues)),
      queue_order_(std::move(queue_order)) {
  // The part of the cohort forest that has contenders; sorted children and
  // roots keep the walk deterministic.
  for (const auto& [cq, contenders] : queues_) {
    const std::vector<std::string> path = quota_.PathToRoot(cq);
    if (path.empty()) continue;
    for (size_t i = 0; i + 1 < path.size(); ++i) {
      std::vector<std::string>& kids = children_[path[i + 1]];
      if (std::find(kids.begin(), kids.end(), path[i]) == kids.end()) {
        kids.push_back(path[i]);
      }
    }
    if (std::find(roots_.begin(), roots_.end(), path.back()) == roots_.end()) {
      roots_.push_back(path.back());
    }
  }
  for (auto& [node, kids] : children_) std::sort(kids.begin(), kids.end());
  std::sort(roots_.begin(), roots_.end());
}

bool FairSharingTournament::Better(const Pick& a, const std::string& a_node,
                                   const Pick& b,
                                   const std::string& b_node) const {
  const int64_t share_a = quota_.WeightedShareWithDemand(
      a.cluster_queue, a_node, a.contender->demand);
  const int64_t share_b = quota_.WeightedShareWithDemand(
      b.cluster_queue, b_node, b.contender->demand);
  if (share_a != share_b) return share_a < share_b;
  return queue_order_(a.contender->workload, b.contender->workload);
}

FairSharingTournament::Pick FairSharingTournament::Winner(
    const std::string& node) {
  Pick best;
  std::string best_child;
  if (auto it = queues_.find(node);
      it != queues_.end() && !it->second.empty()) {
    best = Pick{&it->second.front(), node};
    best_child = node;
  }
  auto kids = children_.find(node);
  if (kids == children_.end()) return best;
  for (const std::string& child : kids->second) {
    Pick pick = Winner(child);
    if (pick.contender == nullptr) continue;
    if (best.contender == nullptr || Better(pick, child, best, best_child)) {
      best = std::move(pick);
      best_child = child;
    }
  }
  return best;
}

void FairSharingTournament::Reorder(const std::string& cluster_queue) {
  auto queue = queues_.find(cluster_queue);
  if (queue == queues_.end()) return;
  std::stable_sort(queue->second.begin(), queue->second.end(),
                   [&](const Contender& a, const Contender& b) {
                     return queue_order_(a.workload, b.workload);
                   });
}

Workload* FairSharingTournament::Next() {
  Pick best;
  for (const std::string& root : roots_) {
    Pick pick = Winner(root);
    if (pick.contender == nullptr) continue;
    // Separate cohort trees share nothing: compare the queues' own shares.
    if (best.contender == nullptr ||
        Better(pick, pick.cluster_queue, best, best.cluster_queue)) {
      best = std::move(pick);
    }
  }
  if (best.contender == nullptr) return nullptr;
  std::deque<Contender>& queue = queues_[best.cluster_queue];
  Workload* winner = queue.front().workload;
  queue.pop_front();
  return winner;
}

}  // namespace gpusched
