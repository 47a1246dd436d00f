// What Kueue keeps of a workload's requeues in its Workload object
// (status.requeueState, spec.active=false, the Evicted condition's time),
// which gpusched keeps in memory on the Workload and, live, in a ConfigMap
// (api/kube/requeue_state_store.h) so that a restart or a failover loses
// none of it: how often waitForPodsReady rolled it back (the count
// backoffLimitCount limits), until when it backs off (after a
// PodsReadyTimeout or an admission check's Retry), whether it was
// deactivated (RequeuingLimitExceeded, or a Rejected check), and the time
// it queues from under requeuingStrategy.timestamp: Eviction.
#ifndef GPUSCHED_QUEUEING_REQUEUE_STATE_H_
#define GPUSCHED_QUEUEING_REQUEUE_STATE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "queueing/policy.h"
#include "queueing/reason_code.h"
#include "queueing/workload.h"

namespace gpusched {

class WorkloadStore;
class QuotaFlavors;

struct RequeueRecord {
  std::string workload;  // "ns/name"
  int count = 0;         // requeueState.count
  // requeueState.requeueAt, in ms since the epoch; 0: not backing off.
  int64_t requeue_at_ms = 0;
  // When it queues from (its creation, or its last eviction under the
  // Eviction timestamp), ms since the epoch.
  int64_t queued_from_ms = 0;
  bool deactivated = false;
  // Why it backs off or is inactive: kPodsReadyTimeout,
  // kRequeuingLimitExceeded or kAdmissionCheck, with its sentence.
  ReasonCode code = ReasonCode::kNone;
  std::string message;

  bool operator==(const RequeueRecord&) const = default;
};

// The records of every workload that has something to keep (a count, a
// backoff after a rollback or a check's Retry, a deactivation), by key.
std::vector<RequeueRecord> RequeueRecordsOf(
    const std::map<std::string, Workload>& workloads);

// The engine's requeue state beyond its live workloads. A workload whose
// pods are all gone is forgotten, but a job controller replaces evicted
// pods: Kueue's Workload (owned by its pods, held by their finalizers)
// outlives that gap with its requeueState, so here the count and backoff
// of a forgotten workload are kept for kKeepMs and given to the workload
// its next pod makes. A deactivated one is not kept: a new pod activates
// it afresh anyway.
class RequeueKeeper {
 public:
  static constexpr int64_t kKeepMs = 10 * 60 * 1000;

  // The finished workloads without pods the store just forgot.
  void KeepForgotten(const std::vector<Workload>& forgotten, int64_t now);
  // A pod was added: a new workload of its (count 0, pending) takes what
  // was kept of it.
  void NotePod(WorkloadStore& store, const QuotaFlavors& flavors,
               const std::string& pod_key, RequeuingTimestamp timestamp);
  // The live workloads' records and those kept.
  std::vector<RequeueRecord> Records(
      const std::map<std::string, Workload>& workloads) const;
  // Sets every live workload's requeue state from `records`, as the
  // replica that decided saved them: a workload without a record has none
  // (its count 0, active, no requeue backoff), an admitted one takes only
  // its count. A record of a workload the store does not hold is kept as
  // a forgotten one's, unless deactivated.
  void Restore(WorkloadStore& store, const QuotaFlavors& flavors,
               const std::vector<RequeueRecord>& records,
               RequeuingTimestamp timestamp, int64_t now);

 private:
  struct Kept {
    RequeueRecord record;
    int64_t since_ms = 0;
  };
  void Expire(int64_t now);

  std::map<std::string, Kept> kept_;
};

// The reason codes a record carries, by name ("PodsReadyTimeout"); kNone
// for any other name.
ReasonCode RequeueCodeOfName(std::string_view name);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_REQUEUE_STATE_H_
