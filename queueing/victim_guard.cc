#include "queueing/victim_guard.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/engine.h"

namespace gpusched {

VictimGuard VictimGuard::Of(const QueueingEngine& engine) {
  VictimGuard guard;
  for (const auto& [key, w] : engine.workloads()) {
    if (w.state == Workload::State::kFinished) continue;
    // Victims run on a node: a pending workload matters only for pods that
    // are bound already (rule 3), and the backlog costs nothing here.
    auto bound = [](const auto& pod) { return !pod.second.node_name.empty(); };
    if (!w.admitted() && std::none_of(w.pods.begin(), w.pods.end(), bound)) {
      continue;
    }
    Guarded& g = guard.workloads_[key];
    g = {.key = key,
         .admitted = w.admitted(),
         .is_gang = w.is_gang,
         .priority = w.priority,
         .cluster_queue = w.cluster_queue,
         .charged = w.charged};
    for (const auto& [pod_key, pod] : w.pods) {
      const std::string uid = PodUid(pod);
      guard.workload_of_uid_[uid] = key;
      if (w.placements.contains(pod_key)) g.member_uids.push_back(uid);
    }
    if (w.admitted() && !w.cluster_queue.empty() &&
        !guard.borrowed_.contains(w.cluster_queue)) {
      guard.borrowed_[w.cluster_queue] =
          engine.quota().Borrowed(w.cluster_queue);
    }
  }
  return guard;
}

// Steps: 1. group the victims the core holds by workload (by key, so the
// answer does not depend on the order asked); 2. keep the members of
// workloads not proposed whole; 3. of the whole ones, keep those their
// queue's guarantee needs; 4. the rest may go, each workload together.
VictimReview VictimGuard::Review(
    std::span<const std::string> victim_uids) const {
  std::map<std::string, Proposed> by_workload;
  for (const std::string& uid : victim_uids) {
    auto of = workload_of_uid_.find(uid);
    if (of == workload_of_uid_.end()) continue;  // not the core's
    Proposed& p = by_workload[of->second];
    p.workload = &workloads_.at(of->second);
    p.uids.push_back(uid);
  }
  VictimReview review;
  auto keep = [&](const Proposed& p, const std::string& reason) {
    for (const std::string& uid : p.uids) review.kept.push_back({uid, reason});
  };
  std::vector<const Proposed*> whole;
  for (const auto& [key, p] : by_workload) {
    std::string reason = WholeWorkloadReason(p, victim_uids);
    if (reason.empty()) {
      whole.push_back(&p);
    } else {
      keep(p, reason);
    }
  }
  const std::vector<std::string> reasons = GuaranteeReasons(whole);
  for (size_t i = 0; i < whole.size(); ++i) {
    if (reasons[i].empty()) {
      review.together.push_back(whole[i]->uids);
    } else {
      keep(*whole[i], reasons[i]);
    }
  }
  return review;
}

std::string VictimGuard::WholeWorkloadReason(
    const Proposed& p, std::span<const std::string> uids) {
  const Guarded& w = *p.workload;
  if (!w.admitted) {
    return absl::StrCat("workload ", w.key,
                        " is not admitted by gpusched's queueing core");
  }
  for (const std::string& uid : p.uids) {
    if (std::find(w.member_uids.begin(), w.member_uids.end(), uid) ==
        w.member_uids.end()) {
      return absl::StrCat("pod ", uid, " of workload ", w.key,
                          " holds no admission of gpusched's queueing core");
    }
  }
  std::vector<std::string> spared;
  for (const std::string& uid : w.member_uids) {
    if (std::find(uids.begin(), uids.end(), uid) == uids.end()) {
      spared.push_back(uid);
    }
  }
  if (spared.empty()) return "";
  return absl::StrCat(w.is_gang ? "gang " : "workload ", w.key,
                      " is evicted whole or not at all, and its members ",
                      absl::StrJoin(spared, ", "),
                      " are not victims on this node");
}

std::vector<std::string> VictimGuard::GuaranteeReasons(
    const std::vector<const Proposed*>& proposed) const {
  std::vector<std::string> reasons(proposed.size());
  // Per queue, the proposed workloads lowest priority first.
  std::map<std::string, std::vector<size_t>> by_queue;
  for (size_t i = 0; i < proposed.size(); ++i) {
    const std::string& cq = proposed[i]->workload->cluster_queue;
    if (!cq.empty()) by_queue[cq].push_back(i);
  }
  for (auto& [cq, indexes] : by_queue) {
    std::sort(indexes.begin(), indexes.end(), [&](size_t a, size_t b) {
      const Guarded& x = *proposed[a]->workload;
      const Guarded& y = *proposed[b]->workload;
      return std::tie(x.priority, x.key) < std::tie(y.priority, y.key);
    });
    auto known = borrowed_.find(cq);
    FrAmounts left = known == borrowed_.end() ? FrAmounts{} : known->second;
    for (size_t i : indexes) {
      const Guarded& w = *proposed[i]->workload;
      for (const auto& [fr, amount] : w.charged) {
        if (amount <= 0 || left[fr] >= amount) continue;
        reasons[i] = absl::StrCat(
            "ClusterQueue ", cq, " would fall below its nominal quota of ",
            fr.resource, " (flavor ", fr.flavor, "): workload ", w.key,
            " holds ", amount, " and the queue borrows only ", left[fr],
            " beyond its nominal quota");
        break;
      }
      if (!reasons[i].empty()) continue;
      for (const auto& [fr, amount] : w.charged) left[fr] -= amount;
    }
  }
  return reasons;
}

}  // namespace gpusched
