// Kueue's classical preemption (fair sharing off) over cohort trees: which
// admitted workloads may make room for a preemptor, in which order they are
// tried, and whether one still counts once others are gone. Pure functions
// over the quota tree; the planner runs the trials.
#ifndef GPUSCHED_QUEUEING_CLASSICAL_PREEMPTION_H_
#define GPUSCHED_QUEUEING_CLASSICAL_PREEMPTION_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "queueing/admission_fair_sharing.h"
#include "queueing/policy.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"

namespace gpusched {

// How a candidate may be preempted (Kueue's preemption variants).
enum class VictimVariant {
  kWithinQueue,              // the preemptor's own ClusterQueue
  kHierarchicalReclaim,      // from a subtree whose quota covers the demand
  kReclaimWithoutBorrowing,  // only if the preemptor then borrows nothing
  kReclaimWhileBorrowing,    // borrowWithinCohort allows it
};

struct VictimCandidate {
  Workload* workload = nullptr;
  // The cohort where the preemptor's path and the candidate's meet; empty
  // in the preemptor's own queue.
  std::string lca;
  VictimVariant variant = VictimVariant::kWithinQueue;
};

// Who is asking, and for what.
struct PreemptionAsk {
  const QuotaTree* quota = nullptr;
  const ClusterQueue* cq = nullptr;
  const Workload* preemptor = nullptr;
  FrAmounts demand;  // on the flavors judged (the first of each group)
  // The flavor-resources the preemptor is short of: only workloads using
  // one of them are candidates, and only queues above their quota in one
  // of them are reclaimed from.
  std::vector<FlavorResource> short_of;
  // Admitted workloads per ClusterQueue.
  const std::map<std::string, std::map<std::string, Workload*>>* admitted =
      nullptr;
  // Not too young, not refused lately, not the preemptor itself.
  std::function<bool(const Workload&)> eligible;
  // Admission Fair Sharing's usage, which orders candidates of one
  // usage-based ClusterQueue; null: not consulted.
  const AdmissionFairSharing* afs = nullptr;
};

// Kueue's SatisfiesPreemptionPolicy: may `w` preempt `v` under `policy`
// (withinClusterQueue or reclaimWithinCohort)?
bool PolicyAllows(WithinClusterQueue policy, const Workload& w,
                  const Workload& v);
bool PolicyAllows(ReclaimWithinCohort policy, const Workload& w,
                  const Workload& v);
// `v` holds quota of some flavor-resource in `frs`.
bool UsesAny(const Workload& v, const std::vector<FlavorResource>& frs);
// Kueue's candidate order: other queues first, (Admission Fair Sharing,
// within a usage-based ClusterQueue) the LocalQueue that used more, lower
// priority, most recently admitted, key.
bool CandidateBefore(const Workload& a, const Workload& b,
                     const std::string& own_queue,
                     const AdmissionFairSharing* afs = nullptr);

struct ClassicalCandidates {
  // Hierarchical-reclaim candidates, then the other queues' candidates,
  // then the own queue's, each in CandidateBefore order.
  std::vector<VictimCandidate> ordered;
  bool none_from_other_queues = true;
  bool none_for_hierarchical_reclaim = true;
};

ClassicalCandidates CollectClassical(const PreemptionAsk& ask);

// Whether `c` still counts against the quota as it is now (candidates
// taken off): a queue, and every cohort between it and the meeting point,
// must still use more than its quota; while the preemptor may borrow, a
// reclaim-without-borrowing candidate never counts.
bool StillCounts(const PreemptionAsk& ask, const VictimCandidate& c,
                 bool preemptor_borrows);

// Kueue's attempts, in order: true when the preemptor may borrow in it.
std::vector<bool> ClassicalAttempts(const PreemptionAsk& ask,
                                    const ClassicalCandidates& candidates);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_CLASSICAL_PREEMPTION_H_
