#include "queueing/classical_preemption.h"

#include <algorithm>

namespace gpusched {
namespace {

bool LowerOrNewer(const Workload& w, const Workload& v) {
  return v.priority < w.priority ||
         (v.priority == w.priority && w.created_ms < v.created_ms);
}

VictimVariant Classify(const PreemptionAsk& ask, const Workload& v,
                       bool advantage) {
  if (advantage) return VictimVariant::kHierarchicalReclaim;
  const PreemptionPolicy& p = ask.cq->preemption;
  if (p.borrow_within_cohort == BorrowWithinCohort::kNever ||
      v.priority >= ask.preemptor->priority ||
      (p.max_priority_threshold && v.priority > *p.max_priority_threshold)) {
    return VictimVariant::kReclaimWithoutBorrowing;
  }
  return VictimVariant::kReclaimWhileBorrowing;
}

// The candidates of another ClusterQueue, meeting the preemptor's path at
// `lca`.
void FromQueue(const PreemptionAsk& ask, const std::string& queue,
               const std::string& lca, bool advantage,
               std::vector<VictimCandidate>& out) {
  auto it = ask.admitted->find(queue);
  if (it == ask.admitted->end()) return;
  for (const auto& [key, v] : it->second) {
    if (!PolicyAllows(ask.cq->preemption.reclaim_within_cohort, *ask.preemptor,
                      *v) ||
        !ask.eligible(*v) || !UsesAny(*v, ask.short_of)) {
      continue;
    }
    out.push_back({v, lca, Classify(ask, *v, advantage)});
  }
}

// Every queue above its quota under `node` (but not under `skip`, the
// subtree already searched), through cohorts above their quota.
void FromSubtree(const PreemptionAsk& ask, const std::string& node,
                 const std::string& lca, const std::string& skip,
                 bool advantage, std::vector<VictimCandidate>& out) {
  const QuotaTree& quota = *ask.quota;
  for (const std::string& cohort : quota.ChildCohorts(node)) {
    if (cohort == skip || quota.WithinNominal(cohort, ask.short_of)) continue;
    FromSubtree(ask, cohort, lca, skip, advantage, out);
  }
  for (const std::string& queue : quota.ChildClusterQueues(node)) {
    if (queue == ask.cq->name || quota.WithinNominal(queue, ask.short_of)) {
      continue;
    }
    FromQueue(ask, queue, lca, advantage, out);
  }
}

void SortCandidates(std::vector<VictimCandidate>& list, const std::string& own,
                    const AdmissionFairSharing* afs) {
  std::stable_sort(list.begin(), list.end(),
                   [&](const VictimCandidate& a, const VictimCandidate& b) {
                     return CandidateBefore(*a.workload, *b.workload, own, afs);
                   });
}

// Kueue v0.19.2's CandidatesOrdering (pkg/scheduler/preemption/common/
// ordering.go): two workloads of one usage-based ClusterQueue in different
// LocalQueues go by usage, the higher first. 0: no order by usage.
int AfsCompare(const Workload& a, const Workload& b,
               const AdmissionFairSharing* afs) {
  if (afs == nullptr || a.cluster_queue != b.cluster_queue ||
      !afs->Orders(a.cluster_queue) ||
      (a.namespace_name == b.namespace_name &&
       a.local_queue == b.local_queue)) {
    return 0;
  }
  const double usage_a = afs->Usage(LocalQueueKeyOf(a));
  const double usage_b = afs->Usage(LocalQueueKeyOf(b));
  if (usage_a == usage_b) return 0;
  return usage_a > usage_b ? -1 : 1;
}

}  // namespace

bool PolicyAllows(WithinClusterQueue policy, const Workload& w,
                  const Workload& v) {
  switch (policy) {
    case WithinClusterQueue::kLowerPriority:
      return v.priority < w.priority;
    case WithinClusterQueue::kLowerOrNewerEqualPriority:
      return LowerOrNewer(w, v);
    default:
      return false;
  }
}

bool PolicyAllows(ReclaimWithinCohort policy, const Workload& w,
                  const Workload& v) {
  switch (policy) {
    case ReclaimWithinCohort::kLowerPriority:
      return v.priority < w.priority;
    case ReclaimWithinCohort::kAny:
      return true;
    default:
      return false;
  }
}

bool UsesAny(const Workload& v, const std::vector<FlavorResource>& frs) {
  return std::any_of(frs.begin(), frs.end(), [&](const FlavorResource& fr) {
    auto it = v.charged.find(fr);
    return it != v.charged.end() && it->second > 0;
  });
}

namespace {

// When the workload took its quota: its run's start, or, holding quota
// for its admission checks, the reservation (Kueue orders candidates by
// their quota reservation, the latest first).
int64_t HeldSinceMs(const Workload& w) {
  if (!w.admitted() && w.check_reservation) {
    return w.check_reservation->since_ms;
  }
  return w.RunStartMs();
}

}  // namespace

bool CandidateBefore(const Workload& a, const Workload& b,
                     const std::string& own_queue,
                     const AdmissionFairSharing* afs) {
  const bool a_other = a.cluster_queue != own_queue;
  const bool b_other = b.cluster_queue != own_queue;
  if (a_other != b_other) return a_other;
  if (const int by_usage = AfsCompare(a, b, afs); by_usage != 0) {
    return by_usage < 0;
  }
  if (a.priority != b.priority) return a.priority < b.priority;
  if (HeldSinceMs(a) != HeldSinceMs(b)) return HeldSinceMs(a) > HeldSinceMs(b);
  return a.key < b.key;
}

ClassicalCandidates CollectClassical(const PreemptionAsk& ask) {
  ClassicalCandidates out;
  std::vector<VictimCandidate> hierarchy, priority, own;
  const PreemptionPolicy& p = ask.cq->preemption;
  if (auto it = ask.admitted->find(ask.cq->name); it != ask.admitted->end()) {
    for (const auto& [key, v] : it->second) {
      // The policy first: it is one comparison, and when it rules out the
      // whole queue (equal priorities) the rest need not run for thousands.
      if (PolicyAllows(p.within_cluster_queue, *ask.preemptor, *v) &&
          ask.eligible(*v) && UsesAny(*v, ask.short_of)) {
        own.push_back({v, "", VictimVariant::kWithinQueue});
      }
    }
  }
  const QuotaTree& quota = *ask.quota;
  if (p.reclaim_within_cohort != ReclaimWithinCohort::kNever) {
    FrAmounts remaining;
    bool advantage = quota.FitsInSubtree(ask.cq->name, ask.demand, &remaining);
    std::string previous;
    for (std::string node = quota.Parent(ask.cq->name); !node.empty();
         node = quota.Parent(node)) {
      FromSubtree(ask, node, node, previous, advantage,
                  advantage ? hierarchy : priority);
      FrAmounts next;
      advantage |= quota.FitsInSubtree(node, remaining, &next);
      remaining = std::move(next);
      previous = node;
    }
  }
  out.none_from_other_queues = hierarchy.empty() && priority.empty();
  out.none_for_hierarchical_reclaim = hierarchy.empty();
  for (auto* list : {&hierarchy, &priority, &own}) {
    SortCandidates(*list, ask.cq->name, ask.afs);
    out.ordered.insert(out.ordered.end(), list->begin(), list->end());
  }
  return out;
}

bool StillCounts(const PreemptionAsk& ask, const VictimCandidate& c,
                 bool preemptor_borrows) {
  const std::string& queue = c.workload->cluster_queue;
  if (queue == ask.cq->name) return true;
  if (preemptor_borrows &&
      c.variant == VictimVariant::kReclaimWithoutBorrowing) {
    return false;
  }
  const QuotaTree& quota = *ask.quota;
  if (quota.WithinNominal(queue, ask.short_of)) return false;
  for (std::string node = quota.Parent(queue); !node.empty() && node != c.lca;
       node = quota.Parent(node)) {
    if (quota.WithinNominal(node, ask.short_of)) return false;
  }
  return true;
}

std::vector<bool> ClassicalAttempts(const PreemptionAsk& ask,
                                    const ClassicalCandidates& candidates) {
  const bool forbidden =
      ask.cq->preemption.borrow_within_cohort == BorrowWithinCohort::kNever;
  const QuotaTree& quota = *ask.quota;
  const bool under_nominal = std::all_of(
      ask.short_of.begin(), ask.short_of.end(), [&](const FlavorResource& fr) {
        return quota.Usage(ask.cq->name, fr) < quota.Nominal(ask.cq->name, fr);
      });
  if (candidates.none_from_other_queues || (forbidden && !under_nominal)) {
    return {true};
  }
  if (forbidden && candidates.none_for_hierarchical_reclaim) {
    return {false, true};
  }
  return {true, false};
}

}  // namespace gpusched
