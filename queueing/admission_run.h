#ifndef GPUSCHED_QUEUEING_ADMISSION_RUN_H_
#define GPUSCHED_QUEUEING_ADMISSION_RUN_H_

// One call into the admission cycle, shared by the cycle's .cc files only:
// the inputs it was lent (CycleInputs), the cycle's own state, and the
// steps, one function each. It lives for one call, so it may hold
// references to what the engine lent it.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "queueing/admission_cycle.h"
#include "queueing/admission_outcome.h"
#include "queueing/flavor_fungibility.h"
#include "queueing/gang_placer.h"
#include "queueing/gang_trial.h"
#include "queueing/pending_classes.h"
#include "queueing/workload_explanation.h"

namespace gpusched {

class AdmissionRun {
 public:
  AdmissionRun(AdmissionCycle& cycle, const CycleInputs& in);

  // admission_cycle.cc
  void Schedule(int64_t now);
  // admission_preemption.cc
  void EvictionBlocked(const std::string& victim, const std::string& message,
                       int64_t now);
  PreemptionPreview PreviewPreemption(Workload& w, int64_t now);
  // admission_check_stage.cc
  CheckUpdate ApplyCheckState(const std::string& workload,
                              const std::string& check, CheckState state,
                              std::string message, int64_t now,
                              PodSetUpdate update);
  // admission_timers.cc
  void RollBackRefused(const std::string& workload, const std::string& message,
                       int64_t now);

 private:
  // The store's state changes, with this call's inputs.
  void SetState(Workload& w, Workload::State state) {
    store_.SetState(flavors_, w, state);
  }
  void Release(Workload& w) { store_.Release(*model_, quota_, w); }
  void Emit(int64_t now, EngineEvent::Type type, const Workload& w,
            std::string by, std::string reason) {
    store_.Emit(now, type, w, std::move(by), std::move(reason));
  }

  // admission_passes.cc: the pass over classes and queues.
  bool Ready(const Workload& workload, int64_t now) const;
  std::function<bool(const Workload*, const Workload*)> AfsOrder() const;
  std::map<std::string, std::vector<Workload*>> PendingByQueue();
  std::map<std::string, std::vector<Workload*>> ReadyByQueue(int64_t now);
  std::vector<Workload*> Candidates(int64_t now);
  PassResult AdmitQueued(int64_t now);
  PassResult AdmitBestEffortClasses(int64_t now);
  struct ClassHead {
    int signature = 0;
    int borrow_height = 0;  // QuotaTree::BorrowHeight: lower goes first
    Workload* workload = nullptr;
  };
  std::vector<ClassHead> BestEffortHeadsOf(
      const std::function<bool(const Workload&)>& ready);
  PassResult AdmitStrictFifo(int64_t now);
  PassResult AdmitFairSharing(int64_t now);
  struct PassChanges {
    std::set<std::string> trees;
    bool capacity_freed = false;
  };
  PassChanges ChangesSince(size_t first_event, uint64_t reserved_before) const;
  struct HeadAttempt {
    bool admitted = false;
    bool searched_nodes = false;         // a placement search ran
    std::optional<PassChanges> changes;  // when it emitted events
  };
  HeadAttempt TryClassHead(Workload& workload, int64_t now);

  // admission_held_quota.cc: what a StrictFIFO head that cannot reclaim
  // holds (Kueue's reserveCapacityForUnreclaimablePreempt).
  FrAmounts QuotaToHold(const Workload& workload, const ClusterQueue& cq) const;
  void NoteHeadOutcome(Workload& head, const AdmissionOutcome& outcome);
  void HoldHeadQuota();
  void ReleaseHeadQuota();
  void ReleaseHeldBy(const Workload& head);

  // admission_check_stage.cc: quota reserved while admission checks run.
  std::optional<AdmissionOutcome> ReserveForChecks(Workload& workload,
                                                   const ClusterQueue& cq,
                                                   int64_t now);
  void HoldCheckReservations();
  void ReleaseCheckReservations();
  PassResult AdmitCheckedReady(int64_t now);
  std::optional<AdmissionOutcome> PreemptForReservation(Workload& workload,
                                                        const ClusterQueue& cq,
                                                        int64_t now);
  void GiveBackReservation(Workload& workload);
  void DropCheckedAdmission(Workload& workload);
  void RequeueForRetry(Workload& workload, int64_t now);
  void DeactivateRejected(Workload& workload, int64_t now);

  // admission_flavor_search.cc: one admission transaction, over the
  // flavors flavorFungibility lets it try (flavor_fungibility.h).
  AdmissionOutcome TryAdmit(Workload& workload, int64_t now);
  struct FlavorWalk;
  AdmissionOutcome SearchFlavors(Workload& workload, const ClusterQueue& cq,
                                 const ResourceGroup& group, int64_t now);
  bool JudgePreemption(Workload& workload, const ClusterQueue& cq,
                       const ResourceGroup& group, size_t index, int64_t now,
                       FlavorWalk& walk);
  FlavorVerdict PreemptionVerdict(const Workload& workload,
                                  const ClusterQueue& cq,
                                  const std::string& flavor,
                                  const PreemptionPlan& plan);
  AdmissionOutcome AdmitChosen(Workload& workload, const ResourceGroup& group,
                               int64_t now, FlavorWalk& walk);

  // admission_cycle.cc: placement and commit.
  bool TryPlaceOutsideQueues(Workload& workload, int64_t now);
  PassResult AdmitOutsideQueues(int64_t now);
  PassResult AdmitExtraMembers(int64_t now);
  void ReplanLostPlacements(int64_t now);
  void ExplainIncompleteGangs(int64_t now);
  void ExplainHolds();
  // A placement for every member on the first flavors whose quota fits
  // (with `only_flavor`, that flavor in the group that lists it), held in
  // the model while the trial lives; else why not, and whether the quota
  // fitted (then it was the placement that failed).
  struct FitResult {
    std::optional<PlacementTrial> trial;
    WaitReason why;
    bool quota_fits = false;
  };
  FitResult Fit(Workload& workload, const std::string* only_flavor = nullptr);
  GangPlacementRequest RequestFor(const Workload& workload,
                                  std::vector<const Pod*> members);
  GangPlacement PlaceOrRecall(Workload& workload,
                              const GangPlacementRequest& request,
                              const std::vector<std::string>& flavors);
  void Commit(Workload& workload, PlacementTrial trial, int64_t now);
  // A queued workload's fit: committed, unless blockAdmission holds every
  // admission (then the trial is dropped and the workload waits).
  AdmissionOutcome AdmitFit(Workload& workload, PlacementTrial trial,
                            int64_t now);
  // waitForPodsReady.blockAdmission (Kueue's waitForPodsReadyIfNeeded):
  // why no queued workload may be admitted now, if one admitted earlier
  // has members not bound yet.
  std::optional<WaitReason> BlockedUntilPodsReady() const;
  // Forgets what depended on free capacity (remembered placement failures,
  // the capacity bound) when events since the last call freed some.
  void NoteFreedCapacity();

  // admission_preemption.cc: carries out the planner's plan.
  AdmissionOutcome TryPreempt(Workload& workload, int64_t now);
  PreemptionPlan PlanPreemption(Workload& workload, int64_t now,
                                const std::string* only_flavor = nullptr);
  PreemptionPlan PlanPreemptionWith(Workload& workload, int64_t now,
                                    const PreemptionPlanner::Trials& trials,
                                    const std::string* only_flavor = nullptr);
  AdmissionOutcome EvictThenAdmit(Workload& workload,
                                  const PreemptionPlan& plan, int64_t now,
                                  const std::string* only_flavor = nullptr);
  bool CouldFitWithFreed(const Workload& workload,
                         const std::vector<Workload*>& candidates);
  void Evict(Workload& workload, int64_t now, EngineEvent::Type type,
             const std::string& by, const std::string& reason);

  // admission_afs.cc: Admission Fair Sharing's samples and penalties.
  // Admitted quota per LocalQueue (only that one when named).
  std::map<std::string, ConsumedResources> AfsAdmitted(
      const std::string* only_local_queue) const;
  void CatchUpAfs(int64_t now);
  void NoteAfsAdmitted();
  void SettleAfs(const Workload& workload, const FrAmounts& charged,
                 int64_t now);
  // The entry penalty of a reservation whose admission checks run.
  void PushAfsPenalty(const Workload& workload, const FrAmounts& reserved);

  // admission_timers.cc: carries out what the timers decided.
  void RunTimers(int64_t now);
  std::vector<std::string> NodesReservedFor(const Workload& workload) const;

  // Lent for this call.
  const Policy& policy_;
  QuotaTree& quota_;
  QuotaFlavors& flavors_;
  ClusterModel* model_;
  const ScoringWeights& weights_;
  const EngineOptions& options_;
  GangTimers& timers_;
  WorkloadStore& store_;
  // The store's workloads and indexes.
  std::map<std::string, Workload>& workloads_;
  const WorkloadStore::Index& live_;
  const WorkloadStore::Index& admitted_;
  const WorkloadStore::Index& outside_;
  const std::vector<EngineEvent>& events_;
  PendingClasses& classes_;
  // The cycle's own state.
  GangPlacementStage& placement_;
  PreemptionPlanner& planner_;
  std::map<std::string, AdmissionCycle::HeldQuota>& held_by_head_;
  std::set<std::string>& reserving_;
  AdmissionFairSharing& afs_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ADMISSION_RUN_H_
