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

std::string WaitingForBudget(const std::string& victim,
                             const std::string& message) {
  return absl::StrCat("waiting to preempt ", victim,
                      ": its eviction was refused: ", message);
}

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
    if (s == "LessThanOrEqualToFinalShare") {
      allowed |= own_share <= target_after;
    }
    if (s == "LessThanInitialShare") allowed |= own_share < target_now;
  }
  return allowed;
}

// withinClusterQueue for the own queue; reclaimWithinCohort /
// borrowWithinCohort for queues of the same cohort tree that borrow;
// fair-sharing strategies when enabled. Only the own queue and the
// borrowing queues of the tree are walked.
CandidateSet PreemptionPlanner::Candidates(const Workload& w,
                                           const ClusterQueue& cq,
                                           bool borrows, int64_t now) {
  const PreemptionPolicy& p = cq.preemption;
  CandidateSet set;
  std::vector<Workload*>& candidates = set.workloads;
  auto old_enough = [&](const Workload& v) {
    return &v != &w && !v.cluster_queue.empty() &&
           now - v.admitted_at_ms >=
               policy_->config.preemption_minimum_runtime_ms;
  };
  // A budget refused its eviction: not again before the back-off ends.
  auto refused = [&](const Workload& v) {
    auto it = refused_.find(v.key);
    if (it == refused_.end() || it->second.until <= now) return false;
    if (set.blocked.empty()) {
      set.blocked = WaitingForBudget(v.key, it->second.message);
    }
    return true;
  };
  if (auto own = admitted_->find(cq.name); own != admitted_->end()) {
    for (auto& [key, v] : own->second) {
      if (old_enough(*v) && OwnQueueAllows(p, w, *v) && !refused(*v)) {
        candidates.push_back(v);
      }
    }
  }
  const std::string* root = flavors_->RootOf(cq.name);
  // While borrowing, only borrowWithinCohort may take from the cohort.
  if (p.reclaim_within_cohort == ReclaimWithinCohort::kNever ||
      root == nullptr ||
      (borrows && p.borrow_within_cohort == BorrowWithinCohort::kNever)) {
    return set;
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
      if (old_enough(*v) && Allowed(w, *v, *other, cq, borrows, own_share) &&
          !refused(*v)) {
        candidates.push_back(v);
      }
    }
  }
  return set;
}

const std::string* PreemptionPlanner::PreemptorOf(
    const std::string& victim) const {
  auto it = preemptor_of_.find(victim);
  return it == preemptor_of_.end() ? nullptr : &it->second;
}

int64_t PreemptionPlanner::NoteRefused(const std::string& victim,
                                       std::string message, int64_t now,
                                       const RefusalBackoff& backoff) {
  Refusal& refusal = refused_[victim];
  // Members of one gang are refused one by one: one back-off for them all.
  if (refusal.until > now) return refusal.until;
  int64_t delay = backoff.base_ms;
  for (int i = 0; i < refusal.count && delay < backoff.max_ms; ++i) delay *= 2;
  ++refusal.count;
  refusal.until = now + std::min(delay, backoff.max_ms);
  refusal.message = std::move(message);
  return refusal.until;
}

std::optional<int64_t> PreemptionPlanner::NextRefusalExpiry(
    int64_t now) const {
  std::optional<int64_t> next;
  for (const auto& [victim, refusal] : refused_) {
    if (refusal.until > now && (!next || refusal.until < *next)) {
      next = refusal.until;
    }
  }
  return next;
}

void PreemptionPlanner::Forget(const std::string& key) {
  refused_.erase(key);
  preemptor_of_.erase(key);
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
  CandidateSet candidates = Candidates(w, *cq, borrows, now);
  std::vector<Workload*>& order = candidates.workloads;
  // Without the refused ones it found nothing: it waits for the budget.
  auto blocked_or = [&](PreemptionPlan::Verdict verdict) {
    plan.verdict = candidates.blocked.empty()
                       ? verdict
                       : PreemptionPlan::Verdict::kBlockedByBudget;
    plan.reason = std::move(candidates.blocked);
    return plan;
  };
  if (order.empty()) return blocked_or(PreemptionPlan::Verdict::kNoCandidates);
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
  if (!victims) return blocked_or(PreemptionPlan::Verdict::kCannotFit);
  std::sort(victims->begin(), victims->end(),
            [](Workload* a, Workload* b) { return a->key < b->key; });
  plan.verdict = PreemptionPlan::Verdict::kEvict;
  for (Workload* v : *victims) {
    plan.victims.push_back({v, VictimReason(w, *v, *cq, borrows)});
  }
  return plan;
}

}  // namespace gpusched
