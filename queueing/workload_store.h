// The workloads the engine holds, and every index over them. Pods and
// PodGroups come in here (AddPod, AddPodGroup, Adopt, Finish, Delete, node
// events) and are grouped into workloads; every change of a workload's
// state or queue goes through the store (SetState), so the indexes (live,
// admitted, admitted per queue, outside queues, pending classes, pod ->
// workload) stay true. The store decides nothing about admission: the
// admission cycle reads its indexes and changes state through it.
#ifndef GPUSCHED_QUEUEING_WORKLOAD_STORE_H_
#define GPUSCHED_QUEUEING_WORKLOAD_STORE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "queueing/engine_types.h"
#include "queueing/gang_timers.h"
#include "queueing/pending_classes.h"
#include "queueing/policy.h"
#include "queueing/preemption_planner.h"
#include "queueing/quota_flavors.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"
#include "scheduler/cluster_model.h"

namespace gpusched {

// What the store's operations read and change besides the workloads,
// lent per call by the engine that owns them: the policy workloads are
// resolved against, the quota tree charged and given back, the model
// members are held in, the gang timers told of gangs that fall short.
struct StoreInputs {
  const Policy& policy;
  const QuotaFlavors& flavors;
  QuotaTree& quota;
  ClusterModel& model;
  GangTimers& timers;
  const EngineOptions& options;
};

// True when the workload is in a ClusterQueue ("team-a"), false outside
// queues or while its LocalQueue is unresolved.
inline bool IsQueued(const Workload& w) { return !w.cluster_queue.empty(); }

class WorkloadStore {
 public:
  // Workloads by key, for walks whose order must not depend on pointers.
  using Index = std::map<std::string, Workload*>;

  // Objects in: engine.h says what each does.
  void AddPod(const StoreInputs& in, const Pod& pod, int64_t now);
  void AddPodGroup(const StoreInputs& in, const PodGroup& group, int64_t now);
  Adoption Adopt(const StoreInputs& in, const Pod& pod, const std::string& node,
                 bool bound, int64_t now);
  void AdoptSucceeded(const Pod& pod);
  FinishOutcome Finish(const StoreInputs& in, const std::string& key,
                       int64_t now);
  DeleteOutcome Delete(const StoreInputs& in, const std::string& key,
                       int64_t now);
  void NodeDown(const StoreInputs& in, const std::string& node, int64_t now);
  void NodeUp(ClusterModel& model, const std::string& node);
  void MarkBound(const std::string& pod_key);
  // A live pod watch saw the member's Ready condition (or Succeeded).
  void SetMemberReadiness(const std::string& pod_key, bool ready);
  // engine.h says what: the placements of `pods` taken back unpublished.
  void WithdrawPlacements(const StoreInputs& in, const std::string& key,
                          const std::vector<std::string>& pods);
  // Admitted workloads' bind deadlines move on by `ms`.
  void PostponeAdmissions(int64_t ms);
  // A new policy and quota tree: every workload is resolved again, and the
  // admitted ones in a queue the tree still has are charged to it.
  void ResolveAgain(const StoreInputs& in);
  // Forgets every signature (a new policy, or too many shapes); the caller
  // rebuilds the indexes next.
  void ForgetSignatures() { classes_.Reset(workloads_); }
  void RebuildIndexes(const QuotaFlavors& flavors);
  // Forgets finished workloads whose pods are all gone; returns them.
  std::vector<Workload> ForgetFinished();

  // What the admission cycle changes through the store.
  void SetState(const QuotaFlavors& flavors, Workload& w,
                Workload::State state);
  // Takes an admitted workload's members off the model and its charge off
  // the quota tree; nothing for a workload not admitted.
  void Release(ClusterModel& model, QuotaTree& quota, Workload& w);
  void Emit(int64_t now, EngineEvent::Type type, const Workload& w,
            std::string by, std::string reason);
  std::vector<EngineEvent> TakeEvents() { return std::exchange(events_, {}); }

  // Reads.
  std::map<std::string, Workload>& workloads() { return workloads_; }
  const std::map<std::string, Workload>& workloads() const {
    return workloads_;
  }
  // Pending and admitted workloads (finished ones only wait for the report).
  const Index& live() const { return live_; }
  // The admitted ones (preemption candidates).
  const Index& admitted() const { return admitted_; }
  // Admitted workloads per ClusterQueue: preemption looks only at its own
  // queue and the queues of its cohort tree.
  const AdmittedByQueue& admitted_by_queue() const {
    return admitted_by_queue_;
  }
  // Live workloads outside queues (no queue-name label).
  const Index& outside() const { return outside_; }
  const std::vector<EngineEvent>& events() const { return events_; }
  PendingClasses& classes() { return classes_; }
  const PodGroup* FindPodGroup(const std::string& key) const;
  const Workload* FindWorkloadOfPod(const std::string& pod_key) const;

  // A PodGroup API whose list keeps failing (`error`; "" once it lists
  // again): the gangs it declares wait, the rest of the cluster does not.
  void SetGroupApiFailing(PodGroup::Flavor flavor, std::string error) {
    if (error.empty()) {
      failing_group_apis_.erase(flavor);
    } else {
      failing_group_apis_[flavor] = std::move(error);
    }
  }
  // Why the gang's PodGroup API cannot be read, or null.
  const std::string* GroupApiFailure(const Workload& w) const {
    if (!w.group_flavor) return nullptr;
    auto it = failing_group_apis_.find(*w.group_flavor);
    return it == failing_group_apis_.end() ? nullptr : &it->second;
  }

  // The order within a ClusterQueue positions are given in (QueueOrder
  // unless set: Admission Fair Sharing orders by usage first).
  void SetQueueOrder(
      std::function<bool(const Workload*, const Workload*)> queue_order) {
    queue_order_ = std::move(queue_order);
  }
  // Pending workloads in queue order, and why they wait
  // (workload_store_pending.cc); engine.h says what each returns.
  std::vector<const Workload*> PendingOrder(const std::string& cq) const;
  std::map<const Workload*, std::pair<size_t, size_t>> PendingPositions() const;
  std::string PendingReason(const Workload& w) const;
  // Why the workload waits, without its position (a class's shared
  // failure speaks for it).
  std::string WaitingSentence(const Workload& w) const { return ReasonOf(w); }
  std::string PendingReason(const Workload& w, size_t position,
                            size_t total) const;
  ReasonCode PendingCode(const Workload& w) const;

 private:
  std::function<bool(const Workload*, const Workload*)> queue_order_ =
      QueueOrder;
  Workload& WorkloadFor(const Pod& pod, int64_t now);
  // Fills what the workload's pods and PodGroup say: queue, priority,
  // minMember, timeouts, topology.
  void Resolve(const StoreInputs& in, Workload& w);
  // A member left an admitted workload (deleted, or its node went away).
  void DropPlacedMember(ClusterModel& model, Workload& w,
                        const std::string& pod);
  // Keep admitted_by_queue_ and outside_ true after the state or queue
  // changed.
  void IndexAdmitted(Workload& w);
  void IndexOutside(Workload& w);
  // The pod left its workload (finished or deleted).
  void ForgetMember(const StoreInputs& in, Workload& w, std::string pod);
  void WaitForReplacements(const StoreInputs& in, Workload& w);
  // Succeeded members, whose pods stay in the API until deleted.
  void NoteSucceeded(Workload& w, const std::string& pod);
  void ForgetSucceeded(Workload& w);
  // A succeeded member's pod is deleted: its gang no longer counts it.
  DeleteOutcome DeleteSucceeded(const StoreInputs& in, const std::string& pod);
  std::string ReasonOf(const Workload& w) const;

  // workload_store_adoption.cc: Adopt's steps: the pod's devices on `node`
  // in the model, held once; the quota the pod takes on that node's
  // flavor; the bookkeeping.
  std::optional<GpuAssignment> HoldOnNode(ClusterModel& model, const Pod& pod,
                                          const std::string& node, bool bound,
                                          std::string* reason);
  void RecordAdoption(const StoreInputs& in, Workload& w,
                      const std::string& pod_key, Placement placement,
                      bool bound, int64_t now);
  void Recharge(const StoreInputs& in, Workload& w, const std::string& key,
                const Pod& pod);

  std::map<PodGroup::Flavor, std::string> failing_group_apis_;
  std::map<std::string, Workload> workloads_;
  // Indexes into workloads_, by key so walks stay deterministic.
  Index live_;
  Index admitted_;
  AdmittedByQueue admitted_by_queue_;
  Index outside_;
  // Pending queued workloads by admission signature.
  PendingClasses classes_;
  std::map<std::string, PodGroup> groups_;
  std::map<std::string, std::string> workload_of_pod_;  // ns/pod -> workload
  // Succeeded members still counted by their workload (Workload::succeeded).
  std::map<std::string, std::string> workload_of_succeeded_;
  std::map<std::string, Node> down_nodes_;
  std::vector<EngineEvent> events_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_WORKLOAD_STORE_H_
