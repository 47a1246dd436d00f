// WorkloadStore: objects in, workloads and their indexes out. Adoption is
// in workload_store_adoption.cc, the pending queries in
// workload_store_pending.cc.
#include "queueing/workload_store.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/gang_trial.h"

namespace gpusched {
namespace {

// The ClusterQueue LocalQueue `ns`/`name` points to; "" when there is no
// such LocalQueue.
std::string ClusterQueueOf(const Policy& policy, const std::string& ns,
                           const std::string& name) {
  std::string cluster_queue;
  for (const LocalQueue& lq : policy.local_queues) {
    if (lq.namespace_name == ns && lq.name == name) {
      cluster_queue = lq.cluster_queue;
    }
  }
  return cluster_queue;
}

int32_t PriorityOf(const Policy& policy, const Pod& pod,
                   const PodGroup* group) {
  auto find_class = [&](const std::string& name) -> std::optional<int32_t> {
    for (const WorkloadPriorityClass& pc : policy.priority_classes) {
      if (pc.name == name) return pc.value;
    }
    return std::nullopt;
  };
  if (const std::string& name = pod.admission.priority_class; !name.empty()) {
    if (auto value = find_class(name)) return *value;
  }
  if (group != nullptr && !group->priority_class_name.empty()) {
    if (auto value = find_class(group->priority_class_name)) return *value;
  }
  return pod.priority.value_or(0);
}

// A native PodGroup's queue label names its members' queue: the group is
// the workload kube-scheduler gangs, created once, while its pods may come
// from templates that never carried the label. Otherwise the pods' label
// says it, and Volcano's spec.queue stands in for a pod without one.
std::string LocalQueueOf(const Pod& first, const PodGroup* group) {
  if (group != nullptr && group->flavor == PodGroup::Flavor::kNative &&
      !group->queue.empty()) {
    return group->queue;
  }
  const std::optional<std::string>& queue = first.admission.queue_name;
  if (queue.has_value()) return *queue;
  return group != nullptr ? group->queue : "";
}

std::optional<PodGroup::Flavor> GroupFlavorOf(WorkloadRef::Kind kind) {
  switch (kind) {
    case WorkloadRef::Kind::kVolcanoGroup:
      return PodGroup::Flavor::kVolcano;
    case WorkloadRef::Kind::kCoschedulingGroup:
      return PodGroup::Flavor::kCoscheduling;
    case WorkloadRef::Kind::kNativeGroup:
      return PodGroup::Flavor::kNative;
    default:
      return std::nullopt;
  }
}

// A running gang short of minMember gets its grace from now.
void NoteIfBelowMin(GangTimers& timers, const Workload& w, int64_t now) {
  if (w.admitted() && w.is_gang &&
      static_cast<int>(w.placements.size() + w.succeeded.size()) <
          w.min_member) {
    timers.NoteBelowMin(w.key, now);
  }
}

}  // namespace

void WorkloadStore::SetState(const QuotaFlavors& flavors, Workload& w,
                             Workload::State state) {
  // Succeeded members stay counted through an eviction: only the rest
  // run again.
  if (state == Workload::State::kPending) {
    w.run_started_ms = -1;  // a new run starts at its next admission
  }
  w.state = state;
  w.signature_id = -1;  // MembersToAdmit depends on the state
  if (state == Workload::State::kFinished) {
    live_.erase(w.key);
  } else {
    live_[w.key] = &w;
  }
  if (state == Workload::State::kAdmitted) {
    admitted_[w.key] = &w;
  } else {
    admitted_.erase(w.key);
  }
  IndexAdmitted(w);
  IndexOutside(w);
  classes_.Reindex(w, flavors);
}

void WorkloadStore::IndexOutside(Workload& w) {
  if (w.state != Workload::State::kFinished && !IsQueued(w) &&
      w.local_queue.empty()) {
    outside_[w.key] = &w;
  } else {
    outside_.erase(w.key);
  }
}

void WorkloadStore::IndexAdmitted(Workload& w) {
  const std::string& queue = w.admitted() ? w.cluster_queue : std::string();
  if (w.indexed_admitted_queue == queue) return;
  if (!w.indexed_admitted_queue.empty()) {
    auto it = admitted_by_queue_.find(w.indexed_admitted_queue);
    if (it != admitted_by_queue_.end()) {
      it->second.erase(w.key);
      if (it->second.empty()) admitted_by_queue_.erase(it);
    }
  }
  if (!queue.empty()) admitted_by_queue_[queue][w.key] = &w;
  w.indexed_admitted_queue = queue;
}

void WorkloadStore::RebuildIndexes(const QuotaFlavors& flavors) {
  live_.clear();
  admitted_.clear();
  admitted_by_queue_.clear();
  outside_.clear();
  for (auto& [key, w] : workloads_) {
    w.indexed_admitted_queue.clear();
    SetState(flavors, w, w.state);
  }
}

Workload& WorkloadStore::WorkloadFor(const Pod& pod, int64_t now) {
  WorkloadRef ref = WorkloadOf(pod);
  auto [it, inserted] = workloads_.try_emplace(ref.key);
  Workload& w = it->second;
  if (inserted) {
    w.key = ref.key;
    live_[w.key] = &w;
    w.namespace_name = ref.key.substr(0, ref.key.find('/'));
    w.is_gang = ref.kind != WorkloadRef::Kind::kSinglePod;
    w.group_flavor = GroupFlavorOf(ref.kind);
    w.declared_by_podgroup = w.group_flavor.has_value();
    w.created_ms = pod.meta.creation_unix_seconds > 0
                       ? pod.meta.creation_unix_seconds * 1000
                       : now;
    w.pending_since_ms = now;
  }
  if (ref.kind == WorkloadRef::Kind::kKueueGroup && ref.declared_count > 0) {
    w.min_member = ref.declared_count;
  }
  return w;
}

namespace {

// A workload deactivated by RequeuingLimitExceeded got a new member pod
// (its job was recreated or edited): it queues again with a fresh count, as
// Kueue resets requeueState when a workload is activated again.
void Reactivate(Workload& w, int64_t now) {
  w.deactivated = false;
  w.requeue_count = 0;
  w.backoff_until_ms = 0;
  w.pending_since_ms = now;
}

}  // namespace

void WorkloadStore::AddPod(const StoreInputs& in, const Pod& pod, int64_t now) {
  Workload& w = WorkloadFor(pod, now);
  if (w.state == Workload::State::kFinished) {
    // A new run of the same name.
    SetState(in.flavors, w, Workload::State::kPending);
    w.pending_since_ms = now;
  }
  if (w.placements.contains(pod.Key()) && w.pods.contains(pod.Key())) {
    Recharge(in, w, pod.Key(), pod);
  }
  if (w.deactivated && !w.pods.contains(pod.Key())) Reactivate(w, now);
  w.pods[pod.Key()] = pod;
  workload_of_pod_[pod.Key()] = w.key;
  Resolve(in, w);
}

void WorkloadStore::AddPodGroup(const StoreInputs& in, const PodGroup& group,
                                int64_t now) {
  groups_[group.Key()] = group;
  if (auto it = workloads_.find(group.Key()); it != workloads_.end()) {
    Workload& w = it->second;
    Resolve(in, w);
    // A gang adopted after a restart before its PodGroup arrived learns its
    // minMember only now; short of it, it gets a running gang's grace.
    NoteIfBelowMin(in.timers, w, now);
  }
}

namespace {

// The gang's topology request is its first member's; a gang is placed as
// one unit, so a member that asks for another one holds it back.
void ResolveTopology(Workload& w) {
  const PodAdmissionState& first = w.pods.begin()->second.admission;
  w.topology_required = first.topology_required;
  w.topology_preferred = first.topology_preferred;
  w.topology_slice_level = first.topology_slice_level;
  w.topology_slice_size = first.topology_slice_size;
  w.topology_invalid.clear();
  for (const auto& [key, pod] : w.pods) {
    const PodAdmissionState& a = pod.admission;
    if (!a.topology_invalid.empty()) {
      w.topology_invalid = absl::StrCat("pod ", key, ": ", a.topology_invalid);
      return;
    }
    if (a.topology_required != first.topology_required ||
        a.topology_preferred != first.topology_preferred ||
        a.topology_slice_level != first.topology_slice_level ||
        a.topology_slice_size != first.topology_slice_size) {
      w.topology_invalid =
          absl::StrCat("pod ", key, " asks for another topology than pod ",
                       w.pods.begin()->first, "; a gang is placed as one unit");
      return;
    }
  }
}

}  // namespace

void WorkloadStore::Resolve(const StoreInputs& in, Workload& w) {
  w.signature_id = -1;
  if (w.pods.empty()) return;
  const Pod& first = w.pods.begin()->second;
  const PodGroup* group = nullptr;
  if (auto it = groups_.find(w.key); it != groups_.end() && w.is_gang) {
    group = &it->second;
    w.min_member = std::max(1, group->min_member);
    w.min_resources = group->min_resources;
    if (group->schedule_timeout_seconds) {
      w.schedule_timeout_ms = *group->schedule_timeout_seconds * 1000;
    }
  }
  w.podgroup_missing = w.declared_by_podgroup && group == nullptr;
  w.priority = PriorityOf(in.policy, first, group);
  w.local_queue = LocalQueueOf(first, group);
  w.cluster_queue = ClusterQueueOf(in.policy, w.namespace_name, w.local_queue);
  if (!w.local_queue.empty() && w.cluster_queue.empty()) {
    w.Explain({ReasonCode::kNoMatchingFlavor,
               absl::StrCat("LocalQueue ", w.namespace_name, "/", w.local_queue,
                            " does not exist")});
  }
  ResolveTopology(w);
  IndexAdmitted(w);
  IndexOutside(w);
  classes_.Reindex(w, in.flavors);
}

void WorkloadStore::ResolveAgain(const StoreInputs& in) {
  for (auto& [key, w] : workloads_) {
    Resolve(in, w);
    if (w.admitted() && in.quota.HasClusterQueue(w.cluster_queue)) {
      in.quota.AddUsage(w.cluster_queue, w.charged);
    }
  }
}

void WorkloadStore::DropPlacedMember(ClusterModel& model, Workload& w,
                                     const std::string& pod) {
  auto placed = w.placements.find(pod);
  if (placed == w.placements.end()) return;
  model.RemovePod(PodUid(w.pods[pod]));
  // `pod` may be the very key erased last (a caller may pass a reference
  // into the workload's own maps), so it is read before that erasure.
  w.bound.erase(pod);
  w.placements.erase(placed);
}

// `pod` is taken by value: callers pass names that live in w.pods, which
// this erases (Delete("ns/name") with a reference to the map's own key).
void WorkloadStore::ForgetMember(const StoreInputs& in, Workload& w,
                                 std::string pod) {
  DropPlacedMember(in.model, w, pod);
  w.ready.erase(pod);
  w.pods.erase(pod);
  w.signature_id = -1;
  classes_.Reindex(w, in.flavors);
  workload_of_pod_.erase(pod);
}

// A gang with no pods left but members that succeeded: it holds nothing
// and waits, pending, for pods to make it whole again.
void WorkloadStore::WaitForReplacements(const StoreInputs& in, Workload& w) {
  Release(in.model, in.quota, w);
  in.timers.Forget(w.key);
  w.admitted_at_ms = -1;
  SetState(in.flavors, w, Workload::State::kPending);
}

void WorkloadStore::NoteSucceeded(Workload& w, const std::string& pod) {
  w.succeeded.insert(pod);
  workload_of_succeeded_[pod] = w.key;
}

void WorkloadStore::ForgetSucceeded(Workload& w) {
  for (const std::string& pod : w.succeeded) workload_of_succeeded_.erase(pod);
  w.succeeded.clear();
}

DeleteOutcome WorkloadStore::DeleteSucceeded(const StoreInputs& in,
                                             const std::string& pod) {
  auto it = workload_of_succeeded_.find(pod);
  if (it == workload_of_succeeded_.end()) return DeleteOutcome::kUnknownKey;
  auto found = workloads_.find(it->second);
  workload_of_succeeded_.erase(it);
  if (found == workloads_.end()) return DeleteOutcome::kUnknownKey;
  Workload& w = found->second;
  w.succeeded.erase(pod);
  w.signature_id = -1;
  if (!w.pods.empty() || !w.succeeded.empty() || w.admitted() ||
      groups_.contains(w.key)) {
    return DeleteOutcome::kMemberDeleted;
  }
  SetState(in.flavors, w, Workload::State::kFinished);
  w.Explain({ReasonCode::kNone, "deleted"});
  return DeleteOutcome::kWorkloadDeleted;
}

void WorkloadStore::Release(ClusterModel& model, QuotaTree& quota,
                            Workload& w) {
  if (!w.admitted()) return;
  TakeOff(model, quota, w);
  w.bound.clear();
  w.pods_ready_once = false;
}

void WorkloadStore::WithdrawPlacements(const StoreInputs& in,
                                       const std::string& key,
                                       const std::vector<std::string>& pods) {
  auto it = workloads_.find(key);
  if (it == workloads_.end() || !it->second.admitted()) return;
  Workload& w = it->second;
  for (const std::string& pod : pods) DropPlacedMember(in.model, w, pod);
  if (!w.placements.empty()) return;
  Release(in.model, in.quota, w);
  in.timers.Forget(w.key);
  w.admitted_at_ms = -1;
  SetState(in.flavors, w, Workload::State::kPending);
  w.Explain({ReasonCode::kInsufficientGpus,
             "the devices it was given were taken meanwhile; planning again"});
  // Never published: nobody is to hear of the admission.
  std::erase_if(events_, [&](const EngineEvent& e) {
    return e.type == EngineEvent::Type::kAdmitted && e.workload == key;
  });
}

FinishOutcome WorkloadStore::Finish(const StoreInputs& in,
                                    const std::string& key, int64_t now) {
  std::vector<std::string> pods;
  std::string workload_key;
  if (auto it = workloads_.find(key); it != workloads_.end()) {
    workload_key = key;
    for (const auto& [pod, unused] : it->second.pods) pods.push_back(pod);
  } else if (auto p = workload_of_pod_.find(key); p != workload_of_pod_.end()) {
    workload_key = p->second;
    pods.push_back(key);
  } else {
    return FinishOutcome::kUnknownKey;
  }
  Workload& w = workloads_[workload_key];
  // A member that succeeded counts whether or not its gang still holds
  // its admission: one evicted as the member finished (its Succeeded
  // update racing the eviction) still has it done.
  for (const std::string& pod : pods) {
    if (w.is_gang) NoteSucceeded(w, pod);
    ForgetMember(in, w, pod);
  }
  if (!w.pods.empty()) return FinishOutcome::kMemberFinished;
  // Members failed or were evicted before the rest succeeded: the gang
  // waits for their replacements, as a Kueue pod group does.
  if (w.is_gang && static_cast<int>(w.succeeded.size()) < w.min_member) {
    WaitForReplacements(in, w);
    return FinishOutcome::kMemberFinished;
  }
  if (w.admitted()) in.quota.RemoveUsage(w.cluster_queue, w.charged);
  w.charged.clear();
  // Done: a new run of the same name counts from nothing.
  ForgetSucceeded(w);
  SetState(in.flavors, w, Workload::State::kFinished);
  w.Explain({ReasonCode::kNone, "all pods succeeded"});
  Emit(now, EngineEvent::Type::kFinished, w, "", w.reason);
  return FinishOutcome::kWorkloadFinished;
}

DeleteOutcome WorkloadStore::Delete(const StoreInputs& in,
                                    const std::string& key, int64_t now) {
  if (auto it = workloads_.find(key); it != workloads_.end()) {
    Workload& w = it->second;
    Release(in.model, in.quota, w);
    for (const auto& [pod, unused] : w.pods) workload_of_pod_.erase(pod);
    w.pods.clear();
    ForgetSucceeded(w);
    w.signature_id = -1;
    classes_.Reindex(w, in.flavors);
    SetState(in.flavors, w, Workload::State::kFinished);
    w.Explain({ReasonCode::kNone, "deleted"});
    return DeleteOutcome::kWorkloadDeleted;
  }
  auto p = workload_of_pod_.find(key);
  if (p == workload_of_pod_.end()) return DeleteSucceeded(in, key);
  Workload& w = workloads_[p->second];
  ForgetMember(in, w, key);
  NoteIfBelowMin(in.timers, w, now);
  // A workload left without pods is over, unless a PodGroup still declares
  // it and it has not run, or members that succeeded are still there: then
  // it waits for its pods and says so. One made by pods alone is forgotten
  // (ForgetFinished), as Kueue's pod-group Workload goes with its pods,
  // rather than kept for ever as "0 of N".
  if (!w.pods.empty() || (!w.admitted() && groups_.contains(w.key))) {
    return DeleteOutcome::kMemberDeleted;
  }
  if (!w.succeeded.empty()) {
    WaitForReplacements(in, w);
    return DeleteOutcome::kMemberDeleted;
  }
  Release(in.model, in.quota, w);
  SetState(in.flavors, w, Workload::State::kFinished);
  w.Explain({ReasonCode::kNone, "deleted"});
  return DeleteOutcome::kWorkloadDeleted;
}

void WorkloadStore::NodeDown(const StoreInputs& in, const std::string& node,
                             int64_t now) {
  const NodeState* state = in.model.FindNode(node);
  // Admitted workloads lose the members that ran there.
  for (auto& [key, admitted] : admitted_) {
    Workload& w = *admitted;
    std::vector<std::string> lost;
    for (const auto& [pod, placement] : w.placements) {
      if (placement.node == node) lost.push_back(pod);
    }
    for (const std::string& pod : lost) DropPlacedMember(in.model, w, pod);
    if (lost.empty()) continue;
    if (!w.is_gang || static_cast<int>(w.placements.size() +
                                       w.succeeded.size()) < w.min_member) {
      in.timers.NoteBelowMin(w.key, now);
    }
  }
  if (state == nullptr) return;
  down_nodes_[node] = state->node();
  in.model.RemoveNode(node);
}

void WorkloadStore::NodeUp(ClusterModel& model, const std::string& node) {
  auto it = down_nodes_.find(node);
  if (it == down_nodes_.end()) return;
  model.UpsertNode(it->second);
  down_nodes_.erase(it);
}

void WorkloadStore::PostponeAdmissions(int64_t ms) {
  for (auto& [key, w] : admitted_) {
    if (w->admitted_at_ms >= 0) w->admitted_at_ms += ms;
  }
}

namespace {

// Kueue's PodsReady turns true once; losing it later is not the
// admission's timeout (Workload::pods_ready_once).
void LatchPodsReady(Workload& w) {
  if (w.admitted() && w.PodsReady()) w.pods_ready_once = true;
}

}  // namespace

void WorkloadStore::MarkBound(const std::string& pod_key) {
  auto it = workload_of_pod_.find(pod_key);
  if (it == workload_of_pod_.end()) return;
  Workload& w = workloads_[it->second];
  if (w.placements.contains(pod_key)) w.bound.insert(pod_key);
  LatchPodsReady(w);
}

void WorkloadStore::SetMemberReadiness(const std::string& pod_key, bool ready) {
  auto it = workload_of_pod_.find(pod_key);
  if (it == workload_of_pod_.end()) return;
  Workload& w = workloads_[it->second];
  w.readiness_reported = true;
  if (ready) {
    w.ready.insert(pod_key);
  } else {
    w.ready.erase(pod_key);
  }
  LatchPodsReady(w);
}

std::vector<Workload> WorkloadStore::ForgetFinished() {
  std::vector<Workload> forgotten;
  for (auto it = workloads_.begin(); it != workloads_.end();) {
    const Workload& w = it->second;
    // Finished workloads are in no index (SetState, Reindex), so erasing
    // one leaves no dangling pointer.
    if (w.state == Workload::State::kFinished && w.pods.empty()) {
      auto next = std::next(it);
      forgotten.push_back(std::move(workloads_.extract(it).mapped()));
      it = next;
    } else {
      ++it;
    }
  }
  return forgotten;
}

void WorkloadStore::Emit(int64_t now, EngineEvent::Type type, const Workload& w,
                         std::string by, std::string reason) {
  events_.push_back(
      EngineEvent{now, type, w.key, std::move(by), std::move(reason)});
}

const PodGroup* WorkloadStore::FindPodGroup(const std::string& key) const {
  auto it = groups_.find(key);
  return it == groups_.end() ? nullptr : &it->second;
}

const Workload* WorkloadStore::FindWorkloadOfPod(
    const std::string& pod_key) const {
  auto it = workload_of_pod_.find(pod_key);
  if (it == workload_of_pod_.end()) return nullptr;
  auto w = workloads_.find(it->second);
  return w == workloads_.end() ? nullptr : &w->second;
}

std::string_view EngineEventName(EngineEvent::Type type) {
  switch (type) {
    case EngineEvent::Type::kAdmitted:
      return "Admitted";
    case EngineEvent::Type::kAdopted:
      return "Adopted";
    case EngineEvent::Type::kPreempted:
      return "Preempted";
    case EngineEvent::Type::kFinished:
      return "Finished";
    case EngineEvent::Type::kTimedOut:
      return "TimedOut";
    case EngineEvent::Type::kEvicted:
      return "Evicted";
    case EngineEvent::Type::kQuotaReserved:
      return "QuotaReserved";
  }
  return "";
}

}  // namespace gpusched
