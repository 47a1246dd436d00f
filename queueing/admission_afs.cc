// The admission cycle's part of Admission Fair Sharing
// (admission_fair_sharing.h): the samples due before a pass, the entry
// penalty at an admission, and the admitted quota the samples decay
// towards, read from the admitted workloads.
#include "queueing/admission_run.h"

namespace gpusched {

std::map<std::string, ConsumedResources> AdmissionRun::AfsAdmitted(
    const std::string* only_local_queue) const {
  std::map<std::string, ConsumedResources> by_local_queue;
  for (const auto& [key, w] : admitted_) {
    if (!IsQueued(*w)) continue;
    std::string local_queue = LocalQueueKeyOf(*w);
    if (only_local_queue != nullptr && local_queue != *only_local_queue) {
      continue;
    }
    ConsumedResources& into = by_local_queue[std::move(local_queue)];
    for (const auto& [resource, amount] : FlattenToKueueUnits(w->charged)) {
      into[resource] += amount;
    }
  }
  return by_local_queue;
}

void AdmissionRun::CatchUpAfs(int64_t now) {
  if (afs_.enabled()) afs_.CatchUp(now);
}

void AdmissionRun::NoteAfsAdmitted() {
  if (afs_.enabled()) afs_.NoteAdmitted(AfsAdmitted(nullptr));
}

// Kueue charges the penalty once per quota reservation, and only in a
// ClusterQueue that orders by usage (v0.19.2's shouldApplyEntryPenalty;
// v0.17.0 pushed it in every ClusterQueue).
void AdmissionRun::SettleAfs(const Workload& w, const FrAmounts& charged,
                             int64_t now) {
  if (!IsQueued(w) || !afs_.Orders(w.cluster_queue)) return;
  const std::string local_queue = LocalQueueKeyOf(w);
  std::map<std::string, ConsumedResources> admitted = AfsAdmitted(&local_queue);
  afs_.Settle(local_queue, w.key, admitted[local_queue],
              FlattenToKueueUnits(charged), now);
}

// Kueue pushes the penalty when the scheduler reserves the quota
// (v0.19.2 pkg/scheduler/scheduler.go assumeWorkload), and settles it when
// the workload turns Admitted (workload_controller.go
// reconcileAfsPenaltiesOnUpdate): with admission checks, those are apart.
void AdmissionRun::PushAfsPenalty(const Workload& w,
                                  const FrAmounts& reserved) {
  if (!IsQueued(w) || !afs_.Orders(w.cluster_queue)) return;
  afs_.PushPenalty(LocalQueueKeyOf(w), w.key, FlattenToKueueUnits(reserved));
}

}  // namespace gpusched
