// Preemption: Kueue's candidate rules and order, whole workloads as
// victims, victims must free room for the placement (not only quota), and
// nobody younger than the minimum runtime.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "queueing/engine_internal.h"

namespace gpusched {

QueueingEngine::Held QueueingEngine::Unplace(Workload& w) {
  Held held{w.placements, w.charged};
  for (const auto& [pod, placement] : w.placements) {
    model_->RemovePod(PodUid(w.pods[pod]));
  }
  quota_.RemoveUsage(w.cluster_queue, w.charged);
  w.placements.clear();
  w.charged.clear();
  return held;
}

void QueueingEngine::Restore(Workload& w, Held held) {
  for (const auto& [pod, placement] : held.placements) {
    Pod bound = w.pods[pod];
    bound.node_name = placement.node;
    (void)model_->Place(bound, placement.node, placement.gpus,
                        w.bound.contains(pod));
  }
  quota_.AddUsage(w.cluster_queue, held.charged);
  w.placements = std::move(held.placements);
  w.charged = std::move(held.charged);
}

void QueueingEngine::Undo(const Attempt& attempt, const Workload& w) {
  for (const auto& [pod, placement] : attempt.placements) {
    auto it = w.pods.find(pod);
    if (it != w.pods.end()) model_->RemovePod(PodUid(it->second));
  }
}

void QueueingEngine::Release(Workload& w) {
  if (!w.admitted()) return;
  Unplace(w);
  w.bound.clear();
}

void QueueingEngine::Evict(Workload& w, int64_t now, EngineEvent::Type type,
                           const std::string& by, const std::string& reason) {
  Release(w);
  below_min_since_.erase(w.key);
  const bool preempted = type == EngineEvent::Type::kPreempted;
  if (preempted) ++w.preemptions;
  w.admitted_at_ms = -1;
  if (options_.requeue_preempted || !preempted) {
    SetState(w, Workload::State::kPending);
    w.pending_since_ms = now;
  } else {
    SetState(w, Workload::State::kFinished);
  }
  // Until its next attempt it waits for quota it held a moment ago.
  w.Explain({ReasonCode::kWaitingForQuota, reason});
  Emit(now, type, w, by, reason);
}

const std::vector<const std::string*>& QueueingEngine::BorrowingQueuesOf(
    const std::string& root) {
  BorrowingQueues& cached = borrowing_by_root_[root];
  if (cached.usage_version != quota_.usage_version() || !cached.valid) {
    cached.queues.clear();
    for (const std::string& queue : queues_of_root_[root]) {
      if (quota_.IsBorrowing(queue)) cached.queues.push_back(&queue);
    }
    cached.usage_version = quota_.usage_version();
    cached.valid = true;
  }
  return cached.queues;
}

// Candidates by Kueue's rules: withinClusterQueue for the own queue;
// reclaimWithinCohort / borrowWithinCohort for queues of the same cohort
// tree that borrow; fair-sharing strategies when enabled. Only the own
// queue and the borrowing queues of the tree are walked.
std::vector<Workload*> QueueingEngine::PreemptionCandidates(
    const Workload& w, const ClusterQueue& cq, bool borrows, int64_t now) {
  const PreemptionPolicy& p = cq.preemption;
  std::vector<Workload*> candidates;
  auto old_enough = [&](const Workload& v) {
    return &v != &w && IsQueued(v) &&
           now - v.admitted_at_ms >=
               policy_.config.preemption_minimum_runtime_ms;
  };
  if (auto own = admitted_by_queue_.find(cq.name);
      own != admitted_by_queue_.end()) {
    for (auto& [key, v] : own->second) {
      if (!old_enough(*v)) continue;
      bool ok = p.within_cluster_queue == WithinClusterQueue::kLowerPriority
                    ? v->priority < w.priority
                : p.within_cluster_queue ==
                        WithinClusterQueue::kLowerOrNewerEqualPriority
                    ? v->priority < w.priority ||
                          (v->priority == w.priority &&
                           v->created_ms > w.created_ms)
                    : false;
      if (ok) candidates.push_back(v);
    }
  }
  auto root = root_of_queue_.find(cq.name);
  // While borrowing, only borrowWithinCohort may take from the cohort.
  if (p.reclaim_within_cohort == ReclaimWithinCohort::kNever ||
      root == root_of_queue_.end() ||
      (borrows && p.borrow_within_cohort == BorrowWithinCohort::kNever)) {
    return candidates;
  }
  const int64_t own_share =
      policy_.config.fair_sharing
          ? quota_.WeightedShare(cq.name, FirstFlavorDemand(w))
          : 0;
  for (const std::string* other_name : BorrowingQueuesOf(root->second)) {
    const std::string& other = *other_name;
    if (other == cq.name) continue;
    auto admitted = admitted_by_queue_.find(other);
    if (admitted == admitted_by_queue_.end()) continue;
    for (auto& [key, v] : admitted->second) {
      if (!old_enough(*v)) continue;
      if (p.reclaim_within_cohort == ReclaimWithinCohort::kLowerPriority &&
          v->priority >= w.priority) {
        continue;
      }
      if (borrows) {
        // Preempting in the cohort while borrowing: borrowWithinCohort only.
        if (p.borrow_within_cohort == BorrowWithinCohort::kNever) continue;
        if (v->priority >= w.priority) continue;
        if (p.max_priority_threshold &&
            v->priority > *p.max_priority_threshold)
          continue;
      }
      if (policy_.config.fair_sharing) {
        FrAmounts without;
        for (const auto& [fr, amount] : v->charged) without[fr] = -amount;
        const int64_t target_now = quota_.WeightedShare(other);
        const int64_t target_after = quota_.WeightedShare(other, without);
        bool allowed = false;
        for (const std::string& s : policy_.config.preemption_strategies) {
          if (s == "LessThanOrEqualToFinalShare")
            allowed |= own_share <= target_after;
          if (s == "LessThanInitialShare") allowed |= own_share < target_now;
        }
        if (!allowed) continue;
      }
      candidates.push_back(v);
    }
  }
  return candidates;
}

// Whether the workload fits with every candidate taken off: quota and
// free capacity only grow as victims leave, so if it does not fit without
// all of them, no greedy prefix will, and one search answers for all.
bool QueueingEngine::FitsWithoutAll(Workload& w,
                                    const std::vector<Workload*>& candidates) {
  std::vector<std::pair<Workload*, Held>> taken;
  taken.reserve(candidates.size());
  for (Workload* v : candidates) taken.emplace_back(v, Unplace(*v));
  WaitReason ignored;
  std::optional<Attempt> attempt = Fit(w, &ignored);
  if (attempt) Undo(*attempt, w);
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
    Restore(*it->first, std::move(it->second));
  }
  return attempt.has_value();
}

// Steps: 1. candidates (PreemptionCandidates); 2. order: other queues
// first, lower priority, most recently admitted, name; 3. greedy: take
// candidates off until the workload fits (quota and placement); 4. give
// back, last taken first, every victim it fits without; 5. evict the rest
// and admit.
bool QueueingEngine::TryPreempt(Workload& w, int64_t now) {
  const ClusterQueue* cq = ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) return false;
  const PreemptionPolicy& p = cq->preemption;
  if (p.within_cluster_queue == WithinClusterQueue::kNever &&
      p.reclaim_within_cohort == ReclaimWithinCohort::kNever) {
    return false;
  }
  const bool borrows = quota_.WouldBorrow(cq->name, FirstFlavorDemand(w));
  std::vector<Workload*> candidates =
      PreemptionCandidates(w, *cq, borrows, now);
  if (candidates.empty()) return false;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](Workload* a, Workload* b) {
                     const bool a_other = a->cluster_queue != cq->name;
                     const bool b_other = b->cluster_queue != cq->name;
                     if (a_other != b_other) return a_other;
                     if (a->priority != b->priority)
                       return a->priority < b->priority;
                     if (a->admitted_at_ms != b->admitted_at_ms)
                       return a->admitted_at_ms > b->admitted_at_ms;
                     return a->key < b->key;
                   });
  std::vector<std::pair<Workload*, Held>> taken;
  WaitReason ignored;
  bool fits = false;
  // Trials search clusters with victims taken off: nothing to remember.
  in_preemption_trial_ = true;
  if (!CouldFitWithFreed(w, candidates) || !FitsWithoutAll(w, candidates)) {
    in_preemption_trial_ = false;
    return false;
  }
  for (Workload* v : candidates) {
    taken.emplace_back(v, Unplace(*v));
    if (auto attempt = Fit(w, &ignored)) {
      Undo(*attempt, w);
      fits = true;
      break;
    }
  }
  if (!fits) {
    in_preemption_trial_ = false;
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
      Restore(*it->first, std::move(it->second));
    }
    return false;
  }
  std::vector<Workload*> victims;
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
    Restore(*it->first, std::move(it->second));
    if (auto attempt = Fit(w, &ignored)) {
      Undo(*attempt, w);
      continue;  // not needed
    }
    it->second = Unplace(*it->first);
    victims.push_back(it->first);
  }
  in_preemption_trial_ = false;
  // Victims are off their nodes; put them back to evict them properly.
  for (auto& [v, held] : taken) {
    if (std::find(victims.begin(), victims.end(), v) != victims.end()) {
      Restore(*v, std::move(held));
    }
  }
  std::sort(victims.begin(), victims.end(),
            [](Workload* a, Workload* b) { return a->key < b->key; });
  for (Workload* v : victims) {
    const char* why = v->cluster_queue == cq->name ? "InClusterQueue"
                      : borrows ? "InCohortReclaimWhileBorrowing"
                      : policy_.config.fair_sharing ? "InCohortFairSharing"
                                                    : "InCohortReclamation";
    Evict(*v, now, EngineEvent::Type::kPreempted, w.key,
          absl::StrCat(why, ": preempted by ", w.key, " (priority ", w.priority,
                       ")"));
  }
  WaitReason why;
  if (auto attempt = Fit(w, &why)) {
    Commit(w, *std::move(attempt), now);
    return true;
  }
  // The victims are on their way out; their capacity comes back when
  // their pods are gone.
  w.Explain({ReasonCode::kPreempting, std::move(why.text)});
  return false;
}

}  // namespace gpusched
