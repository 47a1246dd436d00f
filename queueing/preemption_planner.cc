#include "queueing/preemption_planner.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "queueing/gang_trial.h"

namespace gpusched {
namespace {

bool OwnQueueAllows(const PreemptionPolicy& p, const Workload& w,
                    const Workload& v) {
  switch (p.within_cluster_queue) {
    case WithinClusterQueue::kLowerPriority:
      return v.priority < w.priority;
    case WithinClusterQueue::kLowerOrNewerEqualPriority:
      return v.priority < w.priority ||
             (v.priority == w.priority && v.created_ms > w.created_ms);
    default:
      return false;
  }
}

}  // namespace

// A victim from another queue of the cohort tree (one that borrows now).
bool PreemptionPlanner::Allowed(const Workload& w, const Workload& v,
                                const std::string& queue,
                                const ClusterQueue& cq, bool borrows,
                                int64_t own_share) const {
  const PreemptionPolicy& p = cq.preemption;
  if (p.reclaim_within_cohort == ReclaimWithinCohort::kLowerPriority &&
      v.priority >= w.priority) {
    return false;
  }
  if (borrows) {
    // Preempting in the cohort while borrowing: borrowWithinCohort only.
    if (p.borrow_within_cohort == BorrowWithinCohort::kNever) return false;
    if (v.priority >= w.priority) return false;
    if (p.max_priority_threshold && v.priority > *p.max_priority_threshold) {
      return false;
    }
  }
  if (!policy_->config.fair_sharing) return true;
  FrAmounts without;
  for (const auto& [fr, amount] : v.charged) without[fr] = -amount;
  const int64_t target_now = quota_->WeightedShare(queue);
  const int64_t target_after = quota_->WeightedShare(queue, without);
  bool allowed = false;
  for (const std::string& s : policy_->config.preemption_strategies) {
    if (s == "LessThanOrEqualToFinalShare") allowed |= own_share <= target_after;
    if (s == "LessThanInitialShare") allowed |= own_share < target_now;
  }
  return allowed;
}

// withinClusterQueue for the own queue; reclaimWithinCohort /
// borrowWithinCohort for queues of the same cohort tree that borrow;
// fair-sharing strategies when enabled. Only the own queue and the
// borrowing queues of the tree are walked.
std::vector<Workload*> PreemptionPlanner::Candidates(const Workload& w,
                                                     const ClusterQueue& cq,
                                                     bool borrows,
                                                     int64_t now) {
  const PreemptionPolicy& p = cq.preemption;
  std::vector<Workload*> candidates;
  auto old_enough = [&](const Workload& v) {
    return &v != &w && !v.cluster_queue.empty() &&
           now - v.admitted_at_ms >=
               policy_->config.preemption_minimum_runtime_ms;
  };
  if (auto own = admitted_->find(cq.name); own != admitted_->end()) {
    for (auto& [key, v] : own->second) {
      if (old_enough(*v) && OwnQueueAllows(p, w, *v)) candidates.push_back(v);
    }
  }
  const std::string* root = flavors_->RootOf(cq.name);
  // While borrowing, only borrowWithinCohort may take from the cohort.
  if (p.reclaim_within_cohort == ReclaimWithinCohort::kNever ||
      root == nullptr ||
      (borrows && p.borrow_within_cohort == BorrowWithinCohort::kNever)) {
    return candidates;
  }
  const int64_t own_share =
      policy_->config.fair_sharing
          ? quota_->WeightedShare(cq.name, flavors_->FirstFlavorDemand(w))
          : 0;
  for (const std::string* other : flavors_->BorrowingQueuesOf(*root)) {
    if (*other == cq.name) continue;
    auto admitted = admitted_->find(*other);
    if (admitted == admitted_->end()) continue;
    for (auto& [key, v] : admitted->second) {
      if (old_enough(*v) && Allowed(w, *v, *other, cq, borrows, own_share)) {
        candidates.push_back(v);
      }
    }
  }
  return candidates;
}

std::optional<std::vector<Workload*>> PreemptionPlanner::ChooseVictims(
    Workload& w, const std::vector<Workload*>& order, const Trials& trials) {
  // Quota and free capacity only grow as victims leave, so if it does not
  // fit without all of them, no greedy prefix will: one search for all.
  if (!trials.could_fit(w, order)) return std::nullopt;
  {
    VictimTrial all(model_, quota_);
    for (Workload* v : order) all.TakeOff(*v);
    if (!trials.fits(w)) return std::nullopt;
  }
  VictimTrial trial(model_, quota_);
  bool fits = false;
  for (Workload* v : order) {
    trial.TakeOff(*v);
    if ((fits = trials.fits(w))) break;
  }
  if (!fits) return std::nullopt;  // the trial puts them all back
  std::vector<Workload*> victims;
  for (size_t i = trial.size(); i-- > 0;) {
    trial.PutBack(i);
    if (trials.fits(w)) continue;  // not needed
    trial.TakeOffAgain(i);
    victims.push_back(&trial.workload(i));
  }
  // Put the victims back in the order taken, to be evicted properly.
  trial.PutBackAll(/*last_first=*/false);
  return victims;
}

std::string PreemptionPlanner::VictimReason(const Workload& w,
                                            const Workload& v,
                                            const ClusterQueue& cq,
                                            bool borrows) const {
  const char* why = v.cluster_queue == cq.name ? "InClusterQueue"
                    : borrows                  ? "InCohortReclaimWhileBorrowing"
                    : policy_->config.fair_sharing ? "InCohortFairSharing"
                                                   : "InCohortReclamation";
  return absl::StrCat(why, ": preempted by ", w.key, " (priority ", w.priority,
                      ")");
}

PreemptionPlan PreemptionPlanner::Plan(Workload& w, int64_t now,
                                       const Trials& trials) {
  PreemptionPlan plan;
  const ClusterQueue* cq = flavors_->ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) return plan;
  const PreemptionPolicy& p = cq->preemption;
  if (p.within_cluster_queue == WithinClusterQueue::kNever &&
      p.reclaim_within_cohort == ReclaimWithinCohort::kNever) {
    return plan;
  }
  const bool borrows =
      quota_->WouldBorrow(cq->name, flavors_->FirstFlavorDemand(w));
  std::vector<Workload*> order = Candidates(w, *cq, borrows, now);
  plan.verdict = PreemptionPlan::Verdict::kNoCandidates;
  if (order.empty()) return plan;
  std::stable_sort(order.begin(), order.end(), [&](Workload* a, Workload* b) {
    const bool a_other = a->cluster_queue != cq->name;
    const bool b_other = b->cluster_queue != cq->name;
    if (a_other != b_other) return a_other;
    if (a->priority != b->priority) return a->priority < b->priority;
    if (a->admitted_at_ms != b->admitted_at_ms)
      return a->admitted_at_ms > b->admitted_at_ms;
    return a->key < b->key;
  });
  std::optional<std::vector<Workload*>> victims =
      ChooseVictims(w, order, trials);
  plan.verdict = PreemptionPlan::Verdict::kCannotFit;
  if (!victims) return plan;
  std::sort(victims->begin(), victims->end(),
            [](Workload* a, Workload* b) { return a->key < b->key; });
  plan.verdict = PreemptionPlan::Verdict::kEvict;
  for (Workload* v : *victims) {
    plan.victims.push_back({v, VictimReason(w, *v, *cq, borrows)});
  }
  return plan;
}

}  // namespace gpusched
