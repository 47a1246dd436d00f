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

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "queueing/admission_cycle.h"
#include "queueing/admission_fair_sharing.h"
#include "queueing/engine_types.h"
#include "queueing/gang_timers.h"
#include "queueing/policy.h"
#include "queueing/quota_flavors.h"
#include "queueing/quota_tree.h"
#include "queueing/reason_code.h"
#include "queueing/requeue_state.h"
#include "queueing/workload.h"
#include "queueing/workload_explanation.h"
#include "queueing/workload_store.h"
#include "scheduler/cluster_model.h"
#include "scheduler/scoring.h"

namespace gpusched {

// The queueing core: groups pods into workloads, admits them one
// transaction at a time (quota up the cohort tree, then a placement for
// every member, commit both or neither), preempts whole workloads, and runs
// the gang timers. A single writer: the caller serialises every call and
// passes the time, so the same calls give the same decisions.
//
// A facade: the workloads and their indexes live in a WorkloadStore (every
// object-in call goes there), the scheduling pass in an AdmissionCycle
// (pending classes, strategy passes, try-admit, try-preempt, commit). The
// engine owns the policy and what is derived from it (quota tree, flavor
// index, scoring weights) and the gang timers, and lends them to the
// store and the cycle per call; neither keeps a pointer into the engine.
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
  // A pod that succeeded before a restart (or before its gang was
  // evicted), met after the other members: it counts towards its gang as
  // one that succeeded under the engine's eyes, so the gang is not short
  // of it. Deleting the pod (Delete) takes it off again.
  void AdoptSucceeded(const Pod& pod);
  // The pod (or every pod of the workload) is deleted; a succeeded member's
  // pod no longer counts towards its gang.
  DeleteOutcome Delete(const std::string& key, int64_t now);
  // Members placed on the node lose their placement. When the node is still
  // in the model (the simulator) it is taken out and remembered for NodeUp;
  // a server's watch has removed it already.
  void NodeDown(const std::string& node, int64_t now);
  void NodeUp(const std::string& node, int64_t now);
  // kube-scheduler bound an admitted member to its assigned node.
  void MarkBound(const std::string& pod_key);
  // A live pod watch saw whether the member's pod is Ready (condition Ready
  // True, or Succeeded). Once reported for a workload, its members must be
  // Ready as well as bound for Kueue's PodsReady (waitForPodsReady's
  // timeout and blockAdmission); unreported, bound is ready (simulator).
  void SetMemberReadiness(const std::string& pod_key, bool ready) {
    store_.SetMemberReadiness(pod_key, ready);
  }
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
  // The API server refused a write that carries out `workload`'s
  // admission (`message`, the server's, says why): the admission is
  // withdrawn whole (quota and devices released) and the workload waits
  // for the gang backoff (AdmissionRefused), since the cause may stay. The
  // caller writes nothing for the refused member, whose gate never lifted.
  void AdmissionRefused(const std::string& workload, const std::string& message,
                        int64_t now);
  // `flavor`'s PodGroup list keeps failing (`error`; "" when it lists
  // again): its gangs wait with the error as their reason
  // (PodGroupAPIUnavailable); every other workload is admitted as usual.
  void SetPodGroupApiFailing(PodGroup::Flavor flavor, std::string error) {
    store_.SetGroupApiFailing(flavor, std::move(error));
  }
  // The workload a pod belongs to, if the engine knows the pod.
  const Workload* FindWorkloadOfPod(const std::string& pod_key) const;
  // Replaces the policy (hot reload): a new quota tree, with admitted
  // workloads charged again; queues that vanished leave their workloads
  // admitted but uncharged until they finish.
  absl::Status UpdatePolicy(Policy policy);

  // An admission check of `workload` has a new state, as its controller
  // (gpusched's ProvisioningRequest watch, or a scenario event) says:
  // Ready on every check admits it at the next Schedule; Retry gives its
  // quota back and requeues it after the check's backoff; Rejected, or
  // Retry past backoffLimitCount, deactivates it (admission_checks.h). A
  // Ready check's `update` goes on the pods when the workload is admitted.
  CheckUpdate SetCheckState(const std::string& workload,
                            const std::string& check, CheckState state,
                            std::string message, int64_t now,
                            PodSetUpdate update = {}) {
    return cycle_.SetCheckState(ForCycle(), workload, check, state,
                                std::move(message), now, std::move(update));
  }

  // A request of `check` of `workload` for attempt `attempt` exists (made
  // before a restart, or by the replica before this one): the check was
  // retried at least attempt - 1 times, as the retryCount Kueue keeps in
  // the Workload's status says. Its next request is that one.
  void NoteCheckAttempt(const std::string& workload, const std::string& check,
                        int attempt);

  // Runs admission passes until one admits nothing, and the timers due.
  void Schedule(int64_t now);
  // The dry run of explain: what preempting for the pending workload `key`
  // would do now, planned as a pass would plan it, nothing evicted; none
  // when it is not pending. The plan's trials change caches, so explain
  // runs it on a copy (PreviewPreemptionOnCopy), never the live engine.
  std::optional<PreemptionPreview> PreviewPreemption(const std::string& key,
                                                     int64_t now);
  // The next time a timer (backoff, timeout, grace, starvation) is due.
  std::optional<int64_t> NextWakeup(int64_t now) const;

  const std::map<std::string, Workload>& workloads() const {
    return store_.workloads();
  }
  const std::vector<EngineEvent>& events() const { return store_.events(); }
  // Hands over the events so far and forgets them, so a long-running
  // server's event list stays bounded (the simulator keeps them all for
  // its report). Call between passes, never inside Schedule.
  std::vector<EngineEvent> TakeEvents();
  // Forgets finished workloads whose pods are all gone (a server's history
  // would grow without bound), keeping their requeue counts a while for
  // the pods that replace them; returns how many.
  size_t ForgetFinished(int64_t now);
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
  // Why the workload waits, without its position.
  std::string WaitingSentence(const Workload& workload) const {
    return store_.WaitingSentence(workload);
  }
  // PendingReason's code: why the workload waits, as one word (kNone when
  // it does not wait).
  ReasonCode PendingCode(const Workload& workload) const;
  // Admission Fair Sharing's decayed usage per LocalQueue ("ns/name"), as
  // the last pass left it: what LocalQueue status reports.
  const std::map<std::string, AfsQueueUsage>& AfsUsages() const {
    return afs_.usages();
  }
  // The weighted usage that orders the LocalQueue's workloads.
  double AfsUsage(const std::string& local_queue) const {
    return afs_.Usage(local_queue);
  }
  // Seeds a LocalQueue's usage from what its status kept (a restart or a
  // failover); the next pass starts its decay clock. Before the first
  // Schedule; a LocalQueue the engine already samples keeps its own.
  void RestoreAfsUsage(const std::string& local_queue,
                       ConsumedResources consumed) {
    afs_.Restore(local_queue, std::move(consumed));
  }
  // Sets the workloads' requeue state from what the deciding replica kept
  // (queueing/requeue_state.h): after a restart once every pod is listed,
  // and on a standby each time it reads them. Between passes.
  void RestoreRequeueStates(const std::vector<RequeueRecord>& records,
                            int64_t now) {
    requeues_.Restore(store_, flavors_, records,
                      policy_.config.requeuing_timestamp, now);
  }
  // What the above restores: every workload's, and those kept of
  // workloads whose pods were all gone (RequeueKeeper), by key.
  std::vector<RequeueRecord> RequeueRecords() const {
    return requeues_.Records(store_.workloads());
  }
  // The PodGroup the engine knows by that key ("ns/name"), or nullptr.
  const PodGroup* FindPodGroup(const std::string& key) const;

 private:
  QueueingEngine(Policy policy, QuotaTree quota, ClusterModel* model,
                 EngineOptions options);

  // What the store and the cycle are lent for one call.
  StoreInputs ForStore() {
    return {policy_, flavors_, quota_, *model_, timers_, options_};
  }
  CycleInputs ForCycle() {
    return {policy_,  quota_,  flavors_, *model_, weights_,
            options_, timers_, store_,   afs_};
  }

  Policy policy_;
  QuotaTree quota_;
  ClusterModel* model_;
  EngineOptions options_;
  ScoringWeights weights_;
  // Indexes policy_'s queues and cohort trees: rebuilt whenever policy_
  // and quota_ are replaced.
  QuotaFlavors flavors_;
  GangTimers timers_;
  // Admission Fair Sharing's usage per LocalQueue; configured from policy_.
  AdmissionFairSharing afs_;
  WorkloadStore store_;
  AdmissionCycle cycle_;
  RequeueKeeper requeues_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ENGINE_H_
