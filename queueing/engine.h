#ifndef GPUSCHED_QUEUEING_ENGINE_H_
#define GPUSCHED_QUEUEING_ENGINE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/admission_outcome.h"
#include "queueing/gang_placer.h"
#include "queueing/gang_timers.h"
#include "queueing/gang_trial.h"
#include "queueing/pending_classes.h"
#include "queueing/placement_stage.h"
#include "queueing/policy.h"
#include "queueing/preemption_planner.h"
#include "queueing/quota_flavors.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"
#include "scheduler/cluster_model.h"
#include "scheduler/scoring.h"

namespace gpusched {

struct EngineEvent {
  enum class Type { kAdmitted, kAdopted, kPreempted, kFinished, kTimedOut,
                    kEvicted };
  int64_t at_ms = 0;
  Type type = Type::kAdmitted;
  std::string workload;
  std::string by;
  std::string reason;
};

// "Admitted", "Adopted", ...: the simulator's report spells them so.
std::string_view EngineEventName(EngineEvent::Type type);

struct EngineOptions {
  bool requeue_preempted = true;
  // The simulator binds admitted members at once; the extender waits for
  // kube-scheduler's bind, and rolls back gangs not bound in time.
  bool bind_on_admission = false;
  // How long a workload whose eviction a disruption budget refused is left
  // alone by preemption (EvictionBlocked).
  RefusalBackoff eviction_refusal_backoff;
};

// What Adopt made of a pod found already running or admitted.
struct Adoption {
  enum class Outcome {
    kAdopted,          // placed on its node, its queue charged
    kAlreadyPlaced,    // the engine holds it there already: nothing changed
    kPlacedElsewhere,  // the engine holds it on another node: left as it is
    kNodeUnknown,      // its node is not in the model: not adopted
    kDoesNotFit,       // not bound, and its node cannot hold it now
  };
  Outcome outcome = Outcome::kAdopted;
  std::string reason;  // why not adopted
};

// What Finish made of the key it was given.
enum class FinishOutcome {
  kUnknownKey,        // neither a workload nor a pod the engine holds
  kMemberFinished,    // the pod left; its workload still has pods
  kWorkloadFinished,  // no pods are left: the workload is over
};

// What Delete made of the key it was given.
enum class DeleteOutcome {
  kUnknownKey,       // neither a workload nor a pod the engine holds
  kMemberDeleted,    // the pod left; its workload lives on (other pods, or
                     // a PodGroup that still declares it waits for new ones)
  kWorkloadDeleted,  // the workload is over: deleted by its key, or its
                     // last pod went
};

// The queueing core: groups pods into workloads, admits them one
// transaction at a time (quota up the cohort tree, then a placement for
// every member, commit both or neither), preempts whole workloads, and runs
// the gang timers. A single writer: the caller serialises every call and
// passes the time, so the same calls give the same decisions.
//
// It owns the workloads and orchestrates the stages, each with its own
// state: ordering and classes (PendingClasses), quota and flavor
// (QuotaFlavors), gang placement (GangPlacementStage, with trials that
// undo themselves), preemption (PreemptionPlanner) and gang timers
// (GangTimers).
class QueueingEngine {
 public:
  static absl::StatusOr<std::unique_ptr<QueueingEngine>> Create(
      Policy policy, ClusterModel* model, EngineOptions options = {});

  void AddPod(const Pod& pod, int64_t now);
  void AddPodGroup(const PodGroup& group, int64_t now);
  // Rebuilds an admission that happened before a restart: `pod` runs on
  // `node` (bound) or was admitted there (gpusched.io/admitted). It joins
  // its workload as AddPod would, keeps `node` with its devices (a bound
  // pod's as the model already holds them, else the devices are taken
  // now), and its queue is charged for the flavor of that node even past
  // the quota: the pod exists, so nothing new is admitted in that queue
  // until usage falls below. Its workload is admitted from its first
  // adopted member on; a gang adopted short of minMember stays admitted and
  // takes the stale-gang grace (and unbound members the bind timeout) as a
  // running gang that lost members would. A pod the engine holds on `node`
  // already is only marked bound, so a relist charges nothing twice.
  Adoption Adopt(const Pod& pod, const std::string& node, bool bound,
                 int64_t now);
  // The pod (or every pod of the workload) succeeded and leaves.
  FinishOutcome Finish(const std::string& key, int64_t now);
  // A pod that succeeded before a restart, met after its running gang
  // members were adopted: it counts towards its admitted gang as one that
  // succeeded under the engine's eyes, so the gang is not short of it.
  void AdoptSucceeded(const Pod& pod);
  // The pod (or every pod of the workload) is deleted.
  DeleteOutcome Delete(const std::string& key, int64_t now);
  // Members placed on the node lose their placement. When the node is still
  // in the model (the simulator) it is taken out and remembered for NodeUp;
  // a server's watch has removed it already.
  void NodeDown(const std::string& node, int64_t now);
  void NodeUp(const std::string& node, int64_t now);
  // kube-scheduler bound an admitted member to its assigned node.
  void MarkBound(const std::string& pod_key);
  // The caller could not publish the placements the last Schedule gave
  // `pods` (members of `workload`): it planned on a copy of the cluster and
  // another scheduler took those devices meanwhile. They are taken back as
  // if never made, with nothing to write (no event, no backoff); a
  // workload left with no placement is pending again and plans anew.
  void WithdrawPlacements(const std::string& workload,
                          const std::vector<std::string>& pods);
  // Nothing was decided for `ms` (a live loop waited for a relist, during
  // which nothing could bind or come back): the deadlines that take work
  // back, the bind timeout and the stale-gang grace, move on by as much.
  void PostponeEvictions(int64_t ms);
  // The API server refused to evict a member of `workload`, preempted
  // before: a PodDisruptionBudget allows no disruption now (`message`, the
  // server's, names it). The workload is no preemption victim for a
  // back-off that doubles with each refusal; the preemptor it was evicted
  // for, if admitted on its capacity with no member bound yet, plans again
  // and waits (Preempting) or takes other victims. The caller re-adopts
  // the pods that still run.
  void EvictionBlocked(const std::string& workload, const std::string& message,
                       int64_t now);
  // The workload a pod belongs to, if the engine knows the pod.
  const Workload* FindWorkloadOfPod(const std::string& pod_key) const;
  // Replaces the policy (hot reload): a new quota tree, with admitted
  // workloads charged again; queues that vanished leave their workloads
  // admitted but uncharged until they finish.
  absl::Status UpdatePolicy(Policy policy);

  // Runs admission passes until one admits nothing, and the timers due.
  void Schedule(int64_t now);
  // The next time a timer (backoff, timeout, grace, starvation) is due.
  std::optional<int64_t> NextWakeup(int64_t now) const;

  const std::map<std::string, Workload>& workloads() const {
    return workloads_;
  }
  const std::vector<EngineEvent>& events() const { return events_; }
  // Hands over the events so far and forgets them, so a long-running
  // server's event list stays bounded (the simulator keeps them all for
  // its report). Call between passes, never inside Schedule.
  std::vector<EngineEvent> TakeEvents();
  // Forgets finished workloads whose pods are all gone (a server's history
  // would grow without bound); returns how many.
  size_t ForgetFinished();
  const QuotaTree& quota() const { return quota_; }
  // Which running gangs are below minMember and in their grace
  // (invariants.h reads it).
  const GangTimers& timers() const { return timers_; }
  const Policy& policy() const { return policy_; }
  // Pending workloads of a ClusterQueue in admission order (for "position
  // 3 of 7").
  std::vector<const Workload*> PendingOrder(const std::string& cq) const;
  // Pending positions in their queues: workload -> (position, total),
  // for every pending queued workload at once (reports).
  std::map<const Workload*, std::pair<size_t, size_t>> PendingPositions() const;
  // Why a workload waits, with its position in its queue:
  // "queue team-a: needs 16 nvidia.com/gpu of flavor h100; 4 free of
  // nominal 8, cohort has 0 to lend; position 3 of 7".
  std::string PendingReason(const Workload& workload) const;
  std::string PendingReason(const Workload& workload, size_t position,
                            size_t total) const;
  // PendingReason's code: why the workload waits, as one word (kNone when
  // it does not wait).
  ReasonCode PendingCode(const Workload& workload) const;
  // The PodGroup the engine knows by that key ("ns/name"), or nullptr.
  const PodGroup* FindPodGroup(const std::string& key) const;

 private:
  QueueingEngine(Policy policy, QuotaTree quota, ClusterModel* model,
                 EngineOptions options);

  // engine.cc: objects in, workloads out.
  Workload& WorkloadFor(const Pod& pod, int64_t now);
  void Resolve(Workload& workload);
  int32_t PriorityOf(const Pod& pod, const PodGroup* group) const;
  // A member left an admitted workload (deleted, or its node went away).
  void DropPlacedMember(Workload& workload, const std::string& pod);
  void Emit(int64_t now, EngineEvent::Type type, const Workload& workload,
            std::string by, std::string reason);
  // Every state change goes through here so the indexes below stay true.
  void SetState(Workload& workload, Workload::State state);
  void RebuildIndexes();
  // Keep admitted_by_queue_ and outside_ true after the state or queue
  // changed.
  void IndexAdmitted(Workload& workload);
  void IndexOutside(Workload& workload);
  // Forgets every signature and what was remembered by them.
  void ResetSignatures();

  // engine_classes.cc: the pass over classes and queues.
  bool Ready(const Workload& workload, int64_t now) const;
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
    bool searched_nodes = false;        // a placement search ran
    std::optional<PassChanges> changes;  // when it emitted events
  };
  HeadAttempt TryClassHead(Workload& workload, int64_t now);
  std::string ReasonOf(const Workload& workload) const;

  // engine_held_quota.cc: what a StrictFIFO head that cannot reclaim
  // holds (Kueue's reserveCapacityForUnreclaimablePreempt).
  FrAmounts QuotaToHold(const Workload& workload, const ClusterQueue& cq) const;
  void NoteHeadOutcome(Workload& head, const AdmissionOutcome& outcome);
  void HoldHeadQuota();
  void ReleaseHeadQuota();
  void ReleaseHeldBy(const Workload& head);

  // engine_admission.cc: one admission transaction.
  AdmissionOutcome TryAdmit(Workload& workload, int64_t now);
  bool TryPlaceOutsideQueues(Workload& workload, int64_t now);
  PassResult AdmitOutsideQueues(int64_t now);
  PassResult AdmitExtraMembers(int64_t now);
  void ReplanLostPlacements(int64_t now);
  void ExplainIncompleteGangs(int64_t now);
  // A placement for every member on the first flavors whose quota fits,
  // held in the model while the trial lives; else why not.
  struct FitResult {
    std::optional<PlacementTrial> trial;
    WaitReason why;
  };
  FitResult Fit(Workload& workload);
  GangPlacementRequest RequestFor(const Workload& workload,
                                  std::vector<const Pod*> members);
  GangPlacement PlaceOrRecall(Workload& workload,
                              const GangPlacementRequest& request,
                              const std::vector<std::string>& flavors);
  void Commit(Workload& workload, PlacementTrial trial, int64_t now);
  // Forgets what depended on free capacity (remembered placement failures,
  // the capacity bound) when events since the last call freed some.
  void NoteFreedCapacity();

  // engine_preemption.cc: carries out the planner's plan.
  AdmissionOutcome TryPreempt(Workload& workload, int64_t now);
  PreemptionPlan PlanPreemption(Workload& workload, int64_t now);
  AdmissionOutcome EvictThenAdmit(Workload& workload,
                                  const PreemptionPlan& plan, int64_t now);
  bool CouldFitWithFreed(const Workload& workload,
                         const std::vector<Workload*>& candidates);
  void Release(Workload& workload);
  void Evict(Workload& workload, int64_t now, EngineEvent::Type type,
             const std::string& by, const std::string& reason);

  // engine_timers.cc: carries out what the timers decided.
  void RunTimers(int64_t now);
  std::vector<std::string> NodesReservedFor(const Workload& workload) const;

  // engine_adoption.cc: Adopt's steps: the pod's devices on `node` in the
  // model, held once; the quota the pod takes on that node's flavor; the
  // bookkeeping.
  std::optional<GpuAssignment> HoldOnNode(const Pod& pod,
                                          const std::string& node, bool bound,
                                          std::string* reason);
  FrAmounts ChargeOnNode(const Workload& workload, const Pod& pod,
                         const NodeState& node) const;
  void RecordAdoption(Workload& workload, const std::string& pod_key,
                      Placement placement, bool bound, int64_t now);

  Policy policy_;
  QuotaTree quota_;
  ClusterModel* model_;
  EngineOptions options_;
  ScoringWeights weights_;
  std::map<std::string, Workload> workloads_;
  // Indexes into workloads_, by key so walks stay deterministic: pending
  // and admitted workloads (finished ones only wait for the report), and
  // the admitted ones (preemption candidates).
  std::map<std::string, Workload*> live_;
  std::map<std::string, Workload*> admitted_;
  // Admitted workloads per ClusterQueue, by key: preemption looks only at
  // its own queue and the queues of its cohort tree.
  PreemptionPlanner::AdmittedByQueue admitted_by_queue_;
  // Live workloads outside queues (no queue-name label), by key.
  std::map<std::string, Workload*> outside_;
  std::map<std::string, PodGroup> groups_;
  std::map<std::string, std::string> workload_of_pod_;  // ns/pod -> workload
  std::map<std::string, Node> down_nodes_;
  std::vector<EngineEvent> events_;
  // Quota held by the head of a StrictFIFO ClusterQueue, by queue; charged
  // to the quota tree only during an admission pass.
  struct HeldQuota {
    std::string head;
    FrAmounts amounts;
  };
  std::map<std::string, HeldQuota> held_by_head_;

  // The stages, each with its own state (see their headers).
  QuotaFlavors flavors_{&policy_, &quota_};
  PendingClasses classes_{&flavors_};
  GangPlacementStage placement_{model_, &weights_};
  PreemptionPlanner planner_{&policy_, &quota_, &flavors_, model_,
                             &admitted_by_queue_};
  GangTimers timers_{&policy_.config};
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ENGINE_H_
