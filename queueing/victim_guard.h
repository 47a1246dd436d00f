// What kube-scheduler's own preemption may take from the queueing core.
//
// kube-scheduler preempts for pods outside the queues on its own, one node
// at a time, and asks gpusched (the preempt verb) which of the victims it
// proposes on a node may go. The core's rules:
//  1. Whole workloads only: a member of a workload the core admitted may go
//     only if every admitted member of that workload is proposed on the same
//     node. A gang spread over nodes is never a victim of kube-scheduler.
//  2. Guarantees hold: a queued workload may go only if its ClusterQueue
//     then still uses at least its nominal quota in every flavor-resource
//     the workload is charged for; only borrowed capacity is taken. When a
//     queue's proposed workloads together would take more than it borrows,
//     the lowest priority go first (then by key) while they fit in it.
//  3. A pod the core knows but has not admitted (it runs, yet its workload
//     is not settled) stays: the core cannot say what its loss would break.
//
// The state is built by the admission loop at the end of each pass, under
// the model lock, and published with its other verdicts; reviews read it
// from any thread without waiting for a pass.
#ifndef GPUSCHED_QUEUEING_VICTIM_GUARD_H_
#define GPUSCHED_QUEUEING_VICTIM_GUARD_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "queueing/quota_tree.h"
#include "scheduler/admission_gate.h"

namespace gpusched {

class QueueingEngine;

class VictimGuard {
 public:
  // Reads the engine's workloads and quota; call with the model locked.
  static VictimGuard Of(const QueueingEngine& engine);

  VictimReview Review(std::span<const std::string> victim_uids) const;

 private:
  struct Guarded {
    std::string key;
    bool admitted = false;
    bool is_gang = false;
    int32_t priority = 0;
    std::vector<std::string> member_uids;  // admitted (placed) members
    std::string cluster_queue;             // "" outside queues
    FrAmounts charged;
  };
  // The proposed victims of one workload.
  struct Proposed {
    const Guarded* workload = nullptr;
    std::vector<std::string> uids;
  };

  // Rule 1 and 3: the reason `proposed` must stay, or "".
  static std::string WholeWorkloadReason(const Proposed& proposed,
                                         std::span<const std::string> uids);
  // Rule 2 over the whole workloads proposed: the reason each must stay,
  // or "" (same order as `proposed`).
  std::vector<std::string> GuaranteeReasons(
      const std::vector<const Proposed*>& proposed) const;

  absl::flat_hash_map<std::string, Guarded> workloads_;  // by key
  absl::flat_hash_map<std::string, std::string> workload_of_uid_;
  // Per ClusterQueue with admitted workloads: what it uses beyond nominal.
  absl::flat_hash_map<std::string, FrAmounts> borrowed_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_VICTIM_GUARD_H_
