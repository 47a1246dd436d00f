// Kueue's Admission Fair Sharing (KEP-4136): inside a ClusterQueue whose
// admissionScope.admissionMode is UsageBasedAdmissionFairSharing, pending
// workloads go first by their LocalQueue's decayed usage, lowest first,
// then by the usual queue order. Semantics of Kueue v0.19.2
// (pkg/util/admissionfairsharing, pkg/cache/queue/afs/usage_ledger.go,
// pkg/controller/core/localqueue_controller.go and workload_controller.go):
//
//   alpha(t)  = 1 - 0.5^(t / usageHalfLifeTime)   (0 when the half-life is 0)
//   sample    : every usageSamplingInterval after a LocalQueue's last update
//               (taken when the next pass runs, as of when it was due),
//               consumed = consumed * (1 - alpha(elapsed))
//                          + admitted * alpha(elapsed)
//               (half-life 0: consumed = {} at every sample)
//   admission : consumed = the same decay up to now, plus the entry penalty
//               alpha(usageSamplingInterval) * the workload's quota
//   usage     : sum over resources of resourceWeights[r] (default 1) *
//               consumed[r], divided by the LocalQueue's fairSharing.weight
//               (+infinity for a weight of 0)
//
// Amounts are in Kueue's units (cpu in cores), as LocalQueue
// status.fairSharing.admissionFairSharingStatus.consumedResources writes
// them. Kueue pushes the penalty when it reserves quota and folds it in when
// the workload is Admitted. gpusched reserves and admits in one step, so the
// two happen together, except for a workload whose admission checks run in
// between: its penalty is pending from its reservation (PushPenalty), counts
// in its LocalQueue's usage, and is folded in when it is admitted.
#ifndef GPUSCHED_QUEUEING_ADMISSION_FAIR_SHARING_H_
#define GPUSCHED_QUEUEING_ADMISSION_FAIR_SHARING_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "queueing/policy.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"

namespace gpusched {

// Resource name -> amount in Kueue's units.
using ConsumedResources = std::map<std::string, double>;

// One LocalQueue's decayed usage, as its status keeps it.
struct AfsQueueUsage {
  ConsumedResources consumed;
  int64_t last_update_ms = 0;
  bool operator==(const AfsQueueUsage&) const = default;
};

// alpha(t) of the decay for `elapsed_ms` under `half_life_ms`.
double AfsAlpha(int64_t elapsed_ms, int64_t half_life_ms);

// Quota amounts over all flavors, per resource, in Kueue's units.
ConsumedResources FlattenToKueueUnits(const FrAmounts& amounts);

// "namespace/name" of a workload's LocalQueue.
std::string LocalQueueKeyOf(const Workload& w);

// The per-LocalQueue usage ledger and the order it gives. A value the api
// layer can read (usages) and seed (Restore), since Kueue keeps the usage
// across restarts in LocalQueue status.
class AdmissionFairSharing {
 public:
  // Takes the configuration, the LocalQueues' weights and which
  // ClusterQueues order by usage, and the usage the policy says its
  // LocalQueues' status kept (Restore); forgets LocalQueues the policy
  // dropped.
  void Configure(const Policy& policy);
  bool enabled() const { return config_.has_value(); }
  // The ClusterQueue orders its pending workloads by usage.
  bool Orders(const std::string& cluster_queue) const {
    return usage_based_.contains(cluster_queue);
  }

  // Seeds a LocalQueue with the usage its status kept. Kueue v0.19.2 seeds
  // only a LocalQueue it has no entry for, and restarts its decay clock at
  // that moment (the status's lastUpdate is not read back).
  void Restore(const std::string& local_queue, ConsumedResources consumed);
  // Takes the samples Kueue would have taken up to `now` (a LocalQueue
  // new to the ledger starts its clock at `now`).
  void CatchUp(int64_t now);
  // Each LocalQueue's admitted quota as a pass left it: what the samples
  // up to the next pass decay towards.
  void NoteAdmitted(std::map<std::string, ConsumedResources> admitted) {
    admitted_ = std::move(admitted);
  }
  // A workload of `local_queue` was admitted with `charged` (its quota);
  // `admitted` is the LocalQueue's admitted quota counting it. The penalty
  // folded in is the one `workload` pushed at its reservation, if it did,
  // else the one `charged` gives (reserved and admitted at once).
  void Settle(const std::string& local_queue, const std::string& workload,
              const ConsumedResources& admitted,
              const ConsumedResources& charged, int64_t now);
  // A workload of `local_queue` reserved `charged` while its admission
  // checks run: its penalty is pending until Settle, replacing one it
  // pushed at an earlier reservation (Kueue's PushPenalty).
  void PushPenalty(const std::string& local_queue, const std::string& workload,
                   const ConsumedResources& charged);
  // The workload's pending penalty, if any, is dropped: it was deactivated
  // or deleted before being admitted (Kueue's SubPenalty). A workload
  // requeued by a Retry keeps it, as Kueue does.
  void DropPenalty(const std::string& workload);

  // The LocalQueue's weighted usage, the number the order compares.
  double Usage(const std::string& local_queue) const;
  // Within a usage-based ClusterQueue: lower usage first, then
  // QueueOrder. Elsewhere QueueOrder.
  bool Before(const Workload* a, const Workload* b) const;
  const std::map<std::string, AfsQueueUsage>& usages() const { return usages_; }

 private:
  AfsQueueUsage& EntryAt(const std::string& local_queue, int64_t now);
  void Decay(AfsQueueUsage& entry, const ConsumedResources& admitted,
             int64_t now) const;
  double PenaltyFactor() const;

  std::optional<AdmissionFairSharingConfig> config_;
  std::set<std::string> usage_based_;
  std::map<std::string, int64_t> weight_milli_;  // by LocalQueue key
  std::map<std::string, AfsQueueUsage> usages_;
  std::map<std::string, ConsumedResources> restored_;  // not yet sampled
  std::map<std::string, ConsumedResources> admitted_;  // by LocalQueue
  // LocalQueue -> workload key -> penalty pushed at a reservation.
  std::map<std::string, std::map<std::string, ConsumedResources>> pending_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ADMISSION_FAIR_SHARING_H_
