#ifndef GPUSCHED_QUEUEING_ENGINE_H_
#define GPUSCHED_QUEUEING_ENGINE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "queueing/gang_placer.h"
#include "queueing/policy.h"
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

// The queueing core: groups pods into workloads, admits them one
// transaction at a time (quota up the cohort tree, then a placement for
// every member, commit both or neither), preempts whole workloads, and runs
// the gang timers. A single writer: the caller serialises every call and
// passes the time, so the same calls give the same decisions.
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
  bool Finish(const std::string& key, int64_t now);
  // The pod (or every pod of the workload) is deleted.
  bool Delete(const std::string& key, int64_t now);
  // Members placed on the node lose their placement. When the node is still
  // in the model (the simulator) it is taken out and remembered for NodeUp;
  // a server's watch has removed it already.
  void NodeDown(const std::string& node, int64_t now);
  void NodeUp(const std::string& node, int64_t now);
  // kube-scheduler bound an admitted member to its assigned node.
  void MarkBound(const std::string& pod_key);
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

  struct Attempt;
  Workload& WorkloadFor(const Pod& pod, int64_t now);
  void Resolve(Workload& workload);
  bool Ready(const Workload& workload, int64_t now) const;
  std::map<std::string, std::vector<Workload*>> PendingByQueue();
  std::map<std::string, std::vector<Workload*>> ReadyByQueue(int64_t now);
  bool AdmitExtraMembers(int64_t now);
  FrAmounts FirstFlavorDemand(const Workload& workload) const;
  // The workload's interned admission signature (see AdmissionSignature),
  // computed once per change of its pods, queue or state.
  int SignatureId(Workload& workload);
  // Keeps pending_by_signature_ true after the workload changed.
  void Reindex(Workload& workload);
  void ResetSignatures();
  bool AdmitBestEffortClasses(int64_t now);
  struct PassChanges {
    std::set<std::string> trees;
    bool capacity_freed = false;
  };
  PassChanges ChangesSince(size_t first_event, uint64_t reserved_before) const;
  const WaitReason* SharedFailure(const Workload& workload) const;
  std::string ReasonOf(const Workload& workload) const;
  std::vector<Workload*> Candidates(int64_t now);
  bool AdmitQueued(int64_t now);
  bool TryAdmit(Workload& workload, int64_t now);
  bool TryPlaceOutsideQueues(Workload& workload, int64_t now);
  std::optional<Attempt> Fit(Workload& workload, WaitReason* why);
  // Fit's quota check of one flavor: true when it fits; else `why` says so
  // (when empty).
  bool QuotaFits(const Workload& workload, const ClusterQueue& cq,
                 const ResourceGroup& group, const std::string& flavor,
                 const FrAmounts& demand, WaitReason* why) const;
  GangPlacement PlaceOrRecall(Workload& workload,
                              const GangPlacementRequest& request,
                              const std::vector<std::string>& flavors);
  bool TryPreempt(Workload& workload, int64_t now);
  bool FitsWithoutAll(Workload& workload,
                      const std::vector<Workload*>& candidates);
  // A necessary condition for FitsWithoutAll, from counts alone: the GPU
  // capacity the candidates would free plus an upper bound on what is
  // free elsewhere can hold the largest member and the whole demand.
  bool CouldFitWithFreed(const Workload& workload,
                         const std::vector<Workload*>& candidates);
  // Forgets what depended on free capacity (remembered placement failures,
  // the capacity bound) when events since the last call freed some.
  void NoteFreedCapacity();
  // The ClusterQueues of the tree that borrow now.
  const std::vector<const std::string*>& BorrowingQueuesOf(
      const std::string& root);
  void Commit(Workload& workload, Attempt attempt, int64_t now);
  // Adopt's steps: the pod's devices on `node` in the model, held once;
  // the quota the pod takes on that node's flavor; the bookkeeping.
  std::optional<GpuAssignment> HoldOnNode(const Pod& pod,
                                          const std::string& node, bool bound,
                                          std::string* reason);
  FrAmounts ChargeOnNode(const Workload& workload, const Pod& pod,
                         const NodeState& node) const;
  void RecordAdoption(Workload& workload, const std::string& pod_key,
                      Placement placement, bool bound, int64_t now);
  void Release(Workload& workload);
  // Takes an admitted workload's pods off their nodes and its quota back,
  // keeping what it held so Restore can put it back exactly (trial
  // preemption).
  struct Held {
    std::map<std::string, Placement> placements;
    FrAmounts charged;
  };
  Held Unplace(Workload& workload);
  void Restore(Workload& workload, Held held);
  void Undo(const Attempt& attempt, const Workload& workload);
  void Evict(Workload& workload, int64_t now, EngineEvent::Type type,
             const std::string& by, const std::string& reason);
  void RunTimers(int64_t now);
  void ReplanLostPlacements(int64_t now);
  void Emit(int64_t now, EngineEvent::Type type, const Workload& workload,
            std::string by, std::string reason);
  // Every state change goes through here so the indexes below stay true.
  void SetState(Workload& workload, Workload::State state);
  void RebuildIndexes();
  // Keep admitted_by_queue_ and outside_ true after the state or queue
  // changed.
  void IndexAdmitted(Workload& workload);
  void IndexOutside(Workload& workload);
  // Preemption candidates by Kueue's rules, in no particular order.
  std::vector<Workload*> PreemptionCandidates(const Workload& workload,
                                              const ClusterQueue& cq,
                                              bool borrows, int64_t now);
  bool SameCohortTree(const std::string& cq_a, const std::string& cq_b) const;
  // The root of the ClusterQueue's cohort tree; the queue itself when it
  // has no cohort.
  const std::string& TreeOf(const std::string& cluster_queue) const;
  // The policy's ClusterQueue of that name, or nullptr.
  const ClusterQueue* ClusterQueueNamed(const std::string& name) const;
  int32_t PriorityOf(const Pod& pod, const PodGroup* group) const;
  std::vector<std::string> NodesReservedFor(const Workload& workload) const;

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
  std::map<std::string, std::map<std::string, Workload*>> admitted_by_queue_;
  // Live workloads outside queues (no queue-name label), by key.
  std::map<std::string, Workload*> outside_;
  std::map<std::string, std::string> root_of_queue_;  // ClusterQueue -> root
  absl::flat_hash_map<std::string, const ClusterQueue*> cluster_queue_by_name_;
  // The ClusterQueues of each cohort tree, by root.
  std::map<std::string, std::vector<std::string>> queues_of_root_;
  struct BorrowingQueues {
    bool valid = false;
    uint64_t usage_version = 0;
    std::vector<const std::string*> queues;  // into queues_of_root_
  };
  std::map<std::string, BorrowingQueues> borrowing_by_root_;
  // Upper bounds on free GPU milli over all nodes (largest on one node,
  // sum), taken since capacity was last freed: admissions only lower the
  // true values, so the bounds hold until then.
  struct CapacityBound {
    bool valid = false;
    bool time_shared = false;  // replica shares: milli bounds do not apply
    int64_t max_free = 0;
    int64_t total_free = 0;
  };
  CapacityBound capacity_bound_;
  std::map<std::string, int> signature_ids_;
  // Pending queued workloads with pods, per signature, in queue order
  // (-priority, creation, key): the heads are all admission needs to see.
  using OrderKey = std::tuple<int32_t, int64_t, std::string>;
  std::map<int, std::map<OrderKey, Workload*>> pending_by_signature_;
  std::vector<std::string> signature_queue_;      // by signature id
  std::vector<std::string> signature_placement_;  // PlacementSignature
  // Placements that failed since capacity was last freed in this
  // Schedule call, by placement signature and flavors: queues with the
  // same shapes share one failed search of the nodes. Not used for
  // preemption trials, which search a changed cluster.
  // (key -> (workload that failed, why)).
  std::map<std::string, std::pair<std::string, WaitReason>>
      placement_failures_;
  size_t placement_failures_events_ = 0;
  uint64_t placement_failures_reserved_ = 0;  // reservation_changes_ then
  bool in_preemption_trial_ = false;
  // Placement searches so far: an attempt that never searched failed on
  // quota alone, so capacity freed elsewhere cannot change its verdict.
  int64_t placement_searches_ = 0;
  // The model's nodes by name, kept while no node comes or goes.
  const std::vector<const NodeState*>* SortedNodes();
  std::vector<const NodeState*> sorted_nodes_;
  uint64_t sorted_nodes_generation_ = UINT64_MAX;
  // SortedNodes() filtered by a flavor's node labels, per label set, kept
  // while no node comes, goes or changes its labels.
  const std::vector<const NodeState*>* NodesWithLabels(
      const StringMap& labels);
  std::map<std::string, std::vector<const NodeState*>> nodes_with_labels_;
  // Member verdicts and scores per node generation, for every search.
  NodeScoreMemo* ScoreMemo();
  // Bounded: a server sees ever new shapes (names in annotations).
  NodeScoreMemo score_memo_{size_t{1} << 20};
  uint64_t score_memo_model_version_ = 0;
  uint64_t nodes_with_labels_generation_ = UINT64_MAX;
  // The latest failure per signature: (attempt stamp, reason).
  std::map<int, std::pair<int64_t, WaitReason>> signature_failure_;
  int64_t attempt_counter_ = 0;
  std::vector<FrAmounts> signature_demand_;  // by signature id
  std::map<std::string, PodGroup> groups_;
  std::map<std::string, std::string> workload_of_pod_;  // ns/pod -> workload
  std::map<std::string, Node> down_nodes_;
  std::map<std::string, int64_t>
      below_min_since_;                   // running gangs short of minMember
  std::set<std::string> reserved_nodes_;  // held for a starving workload
  // Counts every change of reserved_nodes_: a lifted reservation frees
  // capacity for everyone else.
  uint64_t reservation_changes_ = 0;
  std::string reserved_for_;
  std::vector<EngineEvent> events_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ENGINE_H_
