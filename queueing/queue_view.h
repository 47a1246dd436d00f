// The queues as one pass left them: the read model that every surface
// (the visibility API, `kubectl gpusched`, the queue metrics, the
// dashboard) reads. Built by the admission loop after each pass from the
// engine (BuildQueueView) and published as an immutable snapshot, so a
// reader never takes the engine's lock and every reader of one snapshot
// sees the same queues, positions and reason codes.
//
// Positions count from 0, as Kueue's visibility API counts them
// (positionInClusterQueue); text for people may say "1st".
#ifndef GPUSCHED_QUEUEING_QUEUE_VIEW_H_
#define GPUSCHED_QUEUEING_QUEUE_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "queueing/admission_fair_sharing.h"
#include "queueing/quota_tree.h"
#include "queueing/reason_code.h"
#include "queueing/workload.h"

namespace gpusched {

class QueueingEngine;

// One flavor-resource of a ClusterQueue or a cohort.
struct QuotaUsage {
  FlavorResource fr;
  // A ClusterQueue's nominal quota; a cohort's own plus its children's.
  int64_t nominal = 0;
  // What admitted workloads hold: the ClusterQueue's own, or everything
  // below the cohort.
  int64_t used = 0;
  // Used beyond nominal: taken from the cohort.
  int64_t borrowed = 0;
  // Of the unused nominal quota it may lend (lendingLimit caps it), the
  // part the cohort's borrowers are using now, split among the lenders in
  // proportion to what each leaves unused (rounded down).
  int64_t lent = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
  friend bool operator==(const QuotaUsage&, const QuotaUsage&) = default;
};

// Kueue's split of pending workloads: active ones have not been found
// unadmittable yet (not looked at, or preempting for their room);
// inadmissible ones were looked at and cannot be admitted now.
enum class PendingStatus { kActive, kInadmissible };
std::string_view PendingStatusName(PendingStatus status);

struct PendingWorkload {
  std::string key;  // "namespace/name" of the PodGroup, or of the pod
  std::string namespace_name;
  std::string name;
  WorkloadRef::Kind kind = WorkloadRef::Kind::kSinglePod;
  std::string local_queue;
  std::string cluster_queue;
  int32_t priority = 0;
  int64_t created_ms = 0;
  int64_t pending_since_ms = 0;
  size_t position_in_cluster_queue = 0;  // from 0
  size_t position_in_local_queue = 0;    // from 0
  PendingStatus status = PendingStatus::kActive;
  ReasonCode code = ReasonCode::kNone;
  std::string message;    // the reason's sentence, without the position
  int members = 0;        // pods that exist
  int min_member = 1;     // pods the gang needs
  ResourceList requests;  // of the members admission would place
  // Quota held while its admission checks run (Kueue's quota reservation:
  // reserving, not pending, in Kueue's status); empty otherwise.
  FrAmounts reserved;
  friend bool operator==(const PendingWorkload&,
                         const PendingWorkload&) = default;
};

struct AdmittedWorkload {
  std::string key;
  std::string namespace_name;
  std::string name;
  WorkloadRef::Kind kind = WorkloadRef::Kind::kSinglePod;
  std::string local_queue;
  std::string cluster_queue;
  int32_t priority = 0;
  int64_t admitted_at_ms = 0;
  int placed = 0;  // members placed on nodes
  int bound = 0;   // of them, bound
  FrAmounts charged;
  // The placed members' pod keys, sorted: what the GPU map colours by
  // queue (a node's holders are pods, a queue admits workloads).
  std::vector<std::string> members;
  friend bool operator==(const AdmittedWorkload&,
                         const AdmittedWorkload&) = default;
};

struct ClusterQueueView {
  std::string name;
  std::string cohort;                      // empty: none
  std::vector<QuotaUsage> quota;           // by flavor, then resource
  std::vector<PendingWorkload> pending;    // in admission order
  std::vector<AdmittedWorkload> admitted;  // by key
  // With fair sharing: Kueue's weighted share (QuotaTree::WeightedShare).
  std::optional<int64_t> weighted_share;
  size_t PendingWith(PendingStatus status) const;
  friend bool operator==(const ClusterQueueView&,
                         const ClusterQueueView&) = default;
};

struct LocalQueueView {
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;
  size_t pending = 0;    // reserving ones included
  size_t reserving = 0;  // pending that hold quota for admission checks
  size_t admitted = 0;
  // With Admission Fair Sharing configured: its decayed usage.
  std::optional<AfsQueueUsage> admission_fair_sharing;
  friend bool operator==(const LocalQueueView&,
                         const LocalQueueView&) = default;
};

struct CohortView {
  std::string name;
  std::string parent;  // empty: a root
  std::vector<QuotaUsage> quota;
  friend bool operator==(const CohortView&, const CohortView&) = default;
};

struct QueueView {
  int64_t built_at_ms = 0;  // the engine's clock at the pass
  uint64_t pass = 0;        // the loop's pass that built it
  std::vector<ClusterQueueView> cluster_queues;  // by name
  std::vector<LocalQueueView> local_queues;      // by namespace, then name
  std::vector<CohortView> cohorts;               // by name

  const ClusterQueueView* FindClusterQueue(std::string_view name) const;
  const LocalQueueView* FindLocalQueue(std::string_view namespace_name,
                                       std::string_view name) const;
  const CohortView* FindCohort(std::string_view name) const;
  // The pending workload of that key ("namespace/name"), or nullptr.
  const PendingWorkload* FindPending(std::string_view key) const;
  // A LocalQueue's pending workloads in admission order.
  std::vector<const PendingWorkload*> PendingOf(
      std::string_view namespace_name, std::string_view local_queue) const;
  friend bool operator==(const QueueView&, const QueueView&) = default;
};

// The engine's queues now. `pass` and `now` are recorded as given.
QueueView BuildQueueView(const QueueingEngine& engine, uint64_t pass,
                         int64_t now);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_QUEUE_VIEW_H_
