// Ordering and equivalence classes, the stage that says what admission
// looks at next. Pending queued workloads are indexed by admission
// signature (Kueue's scheduling equivalence hashing, KEP-9694): equal
// signatures get equal verdicts against the same cluster state, so a pass
// looks only at the head of each class, and a failed head speaks for its
// class until something changes.
#ifndef GPUSCHED_QUEUEING_PENDING_CLASSES_H_
#define GPUSCHED_QUEUEING_PENDING_CLASSES_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "queueing/quota_flavors.h"
#include "queueing/reason_code.h"
#include "queueing/workload.h"

namespace gpusched {

// The order within a ClusterQueue: priority, then creation, then name.
bool QueueOrder(const Workload* a, const Workload* b);

class PendingClasses {
 public:
  // (-priority, creation, key): queue order as a map key.
  using OrderKey = std::tuple<int32_t, int64_t, std::string>;

  // Signatures read the first-flavor demand from the QuotaFlavors each
  // call names.
  PendingClasses() = default;

  // Forgets every signature (a new policy, or too many shapes).
  void Reset(std::map<std::string, Workload>& workloads);
  // The workload's interned admission signature, computed once per change
  // of its pods, queue or state.
  int SignatureId(Workload& w, const QuotaFlavors& flavors);
  // Keeps the index true after the workload changed.
  void Reindex(Workload& w, const QuotaFlavors& flavors);
  // A newer failure of an equal workload, which speaks for this one.
  const WaitReason* SharedFailure(const Workload& w) const;

  // The first member of the class after `after` (from the head when null)
  // that is `ready`, or nullptr.
  Workload* ReadyFrom(int signature, const OrderKey* after,
                      const std::function<bool(const Workload&)>& ready) const;
  // The classes with pending members, by signature.
  std::vector<int> Signatures() const;
  size_t signature_count() const { return ids_.size(); }
  const std::string& queue_of(int signature) const { return queue_[signature]; }
  const FrAmounts& demand_of(int signature) const { return demand_[signature]; }
  const std::string& placement_of(int signature) const {
    return placement_[signature];
  }

  // Stamps the workload with a new attempt before admission looks at it.
  void StampAttempt(Workload& w) { w.attempt_stamp = ++attempts_; }
  // The class's head failed with `why` in the latest attempt.
  void RecordFailure(int signature, Workload& w, WaitReason why);

 private:
  std::map<std::string, int> ids_;
  std::map<int, std::map<OrderKey, Workload*>> pending_;
  std::vector<std::string> queue_;      // by signature id
  std::vector<std::string> placement_;  // PlacementSignature
  std::vector<FrAmounts> demand_;       // first-flavor demand
  // The latest failure per signature: (attempt stamp, reason).
  std::map<int, std::pair<int64_t, WaitReason>> failure_;
  int64_t attempts_ = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_PENDING_CLASSES_H_
