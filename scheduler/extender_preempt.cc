// ExtenderService's preempt verb: kube-scheduler's own preemption proposes
// victims per node; gpusched keeps the nodes where they free room for the
// pod, with the victims the queueing core lets go (AdmissionGate::
// ReviewVictims).
#include <algorithm>
#include <cstdint>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/extender_service.h"
#include "scheduler/node_fit.h"
#include "scheduler/pod_view.h"

namespace gpusched {

namespace {

// Victims the queueing core keeps leave the list; returns why (the first
// reason, with how many), or "" when it keeps none of these.
std::string DropKept(const VictimReview& review,
                     std::vector<std::string>& victims) {
  std::string first;
  size_t dropped = 0;
  for (const VictimReview::Kept& kept : review.kept) {
    if (std::erase(victims, kept.uid) == 0) continue;
    if (dropped++ == 0) first = kept.reason;
  }
  if (dropped == 0) return "";
  return absl::StrCat("gpusched keeps ", dropped, " of the victims (", first,
                      ")");
}

// Victims reprieved as one: a workload's members, or a pod of its own.
struct ReprieveUnit {
  std::vector<const PodAllocation*> pods;
  int32_t priority = INT32_MIN;  // the highest of its pods
};

std::vector<ReprieveUnit> UnitsOf(
    const std::vector<const PodAllocation*>& known,
    const std::vector<std::vector<std::string>>& together) {
  std::vector<ReprieveUnit> units;
  std::vector<int> unit_of_group(together.size(), -1);
  for (const PodAllocation* victim : known) {
    int group = -1;
    for (size_t g = 0; g < together.size() && group < 0; ++g) {
      if (std::find(together[g].begin(), together[g].end(), victim->uid) !=
          together[g].end()) {
        group = static_cast<int>(g);
      }
    }
    int unit = group < 0 ? -1 : unit_of_group[group];
    if (unit < 0) {
      unit = static_cast<int>(units.size());
      units.emplace_back();
      if (group >= 0) unit_of_group[group] = unit;
    }
    units[unit].pods.push_back(victim);
    units[unit].priority = std::max(units[unit].priority, victim->priority);
  }
  std::stable_sort(
      units.begin(), units.end(),
      [](const auto& a, const auto& b) { return a.priority > b.priority; });
  return units;
}

}  // namespace

std::optional<PreemptionCandidate> ExtenderService::CheckCandidate(
    const PodView& view, PreemptionCandidate candidate,
    const VictimReview& review, std::vector<std::string>* notes) const {
  const NodeState* node = model_.FindNode(candidate.node);
  if (node == nullptr || candidate.victim_uids.empty()) return std::nullopt;
  const std::string kept = DropKept(review, candidate.victim_uids);
  auto note = [&](const char* outcome) {
    if (notes != nullptr && !kept.empty()) {
      notes->push_back(
          absl::StrCat("node ", candidate.node, ": ", kept, outcome));
    }
  };
  if (candidate.victim_uids.empty()) {
    note("; no victim is left, so the node is dropped");
    return std::nullopt;
  }
  NodeState without_victims = *node;
  for (const std::string& uid : candidate.victim_uids) {
    const PlacedPod* placed = model_.FindPodByUid(uid);
    if (placed == nullptr || placed->node != candidate.node) continue;
    without_victims.RemovePod(placed->pod_key);
  }
  if (!FitPodOnNode(view, without_victims).verdict.fits()) {
    note("; without them the pod does not fit, so the node is dropped");
    return std::nullopt;
  }
  note("; the pod fits without them");
  const std::vector<std::string> reprieved =
      Reprieve(view, candidate, review.together, without_victims);
  std::erase_if(candidate.victim_uids, [&](const std::string& uid) {
    return std::find(reprieved.begin(), reprieved.end(), uid) !=
           reprieved.end();
  });
  return candidate;
}

// Puts victims back, highest priority first, while the pod still fits, as
// kube-scheduler does; a workload's members only all together. At least
// one victim always stays, so the answer is valid for kube-scheduler.
std::vector<std::string> ExtenderService::Reprieve(
    const PodView& view, const PreemptionCandidate& candidate,
    const std::vector<std::vector<std::string>>& together,
    NodeState& without_victims) const {
  const NodeState& node = *model_.FindNode(candidate.node);
  std::vector<const PodAllocation*> known;
  for (const std::string& uid : candidate.victim_uids) {
    const PlacedPod* placed = model_.FindPodByUid(uid);
    if (placed == nullptr || placed->node != candidate.node) continue;
    known.push_back(node.FindPod(placed->pod_key));
  }
  std::vector<std::string> reprieved;
  size_t left = candidate.victim_uids.size();
  for (const ReprieveUnit& unit : UnitsOf(known, together)) {
    if (left <= unit.pods.size()) continue;
    NodeState trial = without_victims;
    bool added = true;
    for (const PodAllocation* victim : unit.pods) {
      added = added && trial.AddPod(*victim).ok();
    }
    if (!added || !FitPodOnNode(view, trial).verdict.fits()) continue;
    without_victims = std::move(trial);
    left -= unit.pods.size();
    for (const PodAllocation* victim : unit.pods) {
      reprieved.push_back(victim->uid);
    }
  }
  return reprieved;
}

std::vector<PreemptionCandidate> ExtenderService::Preempt(
    const Pod& pod, std::vector<PreemptionCandidate> candidates,
    std::vector<std::string>* notes) const {
  const PodView view = PodView::Of(pod);
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.node < b.node; });
  // The core's reviews read its published state, not the model: taken
  // before the model's lock, as filter's Check is.
  std::vector<VictimReview> reviews(candidates.size());
  if (options_.gate != nullptr) {
    for (size_t i = 0; i < candidates.size(); ++i) {
      reviews[i] = options_.gate->ReviewVictims(candidates[i].victim_uids);
    }
  }
  std::vector<PreemptionCandidate> kept;
  std::shared_lock lock(mu_);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (auto checked =
            CheckCandidate(view, std::move(candidates[i]), reviews[i], notes)) {
      kept.push_back(*std::move(checked));
    }
  }
  return kept;
}

std::vector<PreemptionCandidate> ExtenderService::PreemptCatchingUp(
    const Pod& pod, std::vector<PreemptionCandidate> candidates,
    std::vector<std::string>* notes, int64_t fresh_ms,
    std::chrono::milliseconds catch_up) const {
  const uint64_t seen =
      Read([&](const ClusterModel&) { return node_changes_; });
  std::vector<PreemptionCandidate> kept = Preempt(pod, candidates, notes);
  std::vector<std::string> dropped;
  for (const PreemptionCandidate& c : candidates) {
    if (std::none_of(kept.begin(), kept.end(),
                     [&](const auto& k) { return k.node == c.node; })) {
      dropped.push_back(c.node);
    }
  }
  if (dropped.empty() || !AnyNodeChangedSince(dropped, NowMs() - fresh_ms) ||
      !WaitForChangeOf(dropped, seen, catch_up)) {
    return kept;
  }
  if (notes != nullptr) notes->clear();
  kept = Preempt(pod, std::move(candidates), notes);
  if (notes != nullptr) {
    notes->push_back(absl::StrCat(
        "decided again after the node watch caught up with ",
        absl::StrJoin(dropped, ", "), " (kube-scheduler saw it newer)"));
  }
  return kept;
}

bool ExtenderService::AnyNodeChangedSince(std::span<const std::string> names,
                                          int64_t since_ms) const {
  std::shared_lock lock(mu_);
  return std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    auto changed = node_changed_.find(name);
    return changed == node_changed_.end() || changed->second.ms >= since_ms;
  });
}

bool ExtenderService::WaitForChangeOf(std::span<const std::string> names,
                                      uint64_t seen,
                                      std::chrono::milliseconds timeout) const {
  std::shared_lock lock(mu_);
  return node_changed_cv_.wait_for(lock, timeout, [&] {
    return std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      auto changed = node_changed_.find(n);
      return changed != node_changed_.end() && changed->second.count > seen;
    });
  });
}

}  // namespace gpusched
