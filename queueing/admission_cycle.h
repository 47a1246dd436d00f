// The admission cycle: one Schedule call takes back what the timers and
// lost placements say must go, then runs admission passes until one admits
// nothing. A pass goes over the pending classes and the queueing
// strategies (admission_passes.cc); each attempt is one transaction,
// quota then a placement for every member, committed both or neither
// (admission_cycle.cc), else preemption (admission_preemption.cc).
//
// It keeps only what must outlive a call (the placement stage's caches,
// the planner's refusals, quota held for StrictFIFO heads); the workloads
// and everything else come per call in CycleInputs.
#ifndef GPUSCHED_QUEUEING_ADMISSION_CYCLE_H_
#define GPUSCHED_QUEUEING_ADMISSION_CYCLE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "queueing/admission_fair_sharing.h"
#include "queueing/engine_types.h"
#include "queueing/gang_timers.h"
#include "queueing/placement_stage.h"
#include "queueing/policy.h"
#include "queueing/preemption_planner.h"
#include "queueing/quota_flavors.h"
#include "queueing/quota_tree.h"
#include "queueing/workload_explanation.h"
#include "queueing/workload_store.h"
#include "scheduler/cluster_model.h"
#include "scheduler/scoring.h"

namespace gpusched {

// What a cycle reads and changes, lent per call by the engine.
struct CycleInputs {
  const Policy& policy;
  QuotaTree& quota;
  QuotaFlavors& flavors;
  ClusterModel& model;
  const ScoringWeights& weights;
  const EngineOptions& options;
  GangTimers& timers;
  WorkloadStore& store;
  AdmissionFairSharing& afs;
};

class AdmissionCycle {
 public:
  // Lost placements re-planned, timers carried out, then admission passes
  // until one admits nothing (see QueueingEngine::Schedule).
  void Schedule(const CycleInputs& in, int64_t now);
  // See QueueingEngine::EvictionBlocked.
  void EvictionBlocked(const CycleInputs& in, const std::string& victim,
                       const std::string& message, int64_t now);
  // See QueueingEngine::AdmissionRefused.
  void AdmissionRefused(const CycleInputs& in, const std::string& workload,
                        const std::string& message, int64_t now);
  // See QueueingEngine::SetCheckState.
  CheckUpdate SetCheckState(const CycleInputs& in, const std::string& workload,
                            const std::string& check, CheckState state,
                            std::string message, int64_t now,
                            PodSetUpdate update);
  // See QueueingEngine::PreviewPreemption.
  PreemptionPreview PreviewPreemption(const CycleInputs& in, Workload& w,
                                      int64_t now);
  // When a victim whose eviction was refused may be tried again.
  std::optional<int64_t> NextRefusalExpiry(int64_t now) const {
    return planner_.NextRefusalExpiry(now);
  }
  // The workload is gone: its refusals and preemptor are forgotten.
  void Forget(const std::string& key) { planner_.Forget(key); }
  // Placement failures were remembered by signatures that are gone.
  void ForgetFailures() { placement_.ForgetFailures(); }
  // The store's events were handed over: the placement stage counts
  // events from the start of the new list.
  void EventsTaken() {
    placement_.set_facts_since({0, placement_.facts_since().reservations});
  }

 private:
  friend class AdmissionRun;

  // Quota held by the head of a StrictFIFO ClusterQueue, by queue; charged
  // to the quota tree only during an admission pass.
  struct HeldQuota {
    std::string head;
    FrAmounts amounts;
  };

  GangPlacementStage placement_;
  PreemptionPlanner planner_;
  std::map<std::string, HeldQuota> held_by_head_;
  // Workloads holding a CheckReservation (admission_check_stage.cc).
  std::set<std::string> reserving_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ADMISSION_CYCLE_H_
