// A pass plans on the loop's replica of the extender's model, without the
// extender's lock; this is where what it changed there is published to the
// extender's model, under the exclusive lock, pod by pod and each workload
// whole or not at all. And what the writer could not carry out (a refused
// eviction, a refused admission) comes back here.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/controller/admission_loop.h"

namespace gpusched {
namespace {

DetachedPod DetachedFrom(const ClusterModel& model, const PlacedPod& placed) {
  const PodAllocation* allocation =
      model.FindNode(placed.node)->FindPod(placed.pod_key);
  return {.allocation = *allocation, .bound = placed.bound};
}

}  // namespace

// The replica's word for the pod wins, except over a pod the cluster shows
// bound: the extender's model follows the cluster there (ObserveBound), as
// the engine always let it. A placement the extender's model cannot take
// (its devices or node went meanwhile) is refused.
AdmissionLoop::PodPublish AdmissionLoop::PublishPod(
    ClusterModel& service, const std::string& uid) const {
  const PlacedPod* mine = replica_.FindPodByUid(uid);
  const DetachedPod wanted = DetachedFrom(replica_, *mine);
  const PlacedPod* theirs = service.FindPodByUid(uid);
  std::optional<std::pair<std::string, DetachedPod>> before;
  if (theirs != nullptr) {
    DetachedPod held = DetachedFrom(service, *theirs);
    if (theirs->node == mine->node &&
        held.allocation.gpus == wanted.allocation.gpus) {
      if (mine->bound) service.MarkBound(uid);
      return {};
    }
    if (theirs->bound) return {};
    before.emplace(theirs->node, std::move(held));
    service.RemovePod(uid);
  }
  if (service.Attach(mine->node, wanted).ok()) {
    return {.published = true, .before = std::move(before)};
  }
  if (before) (void)service.Attach(before->first, before->second);
  return {.refused = !mine->bound};
}

// All or nothing: on the first member refused, the members this call
// placed are taken off again (and moved ones put back). Returns the pods
// whose placement the engine must withdraw; empty when all went through.
std::vector<std::string> AdmissionLoop::PublishWorkload(
    ClusterModel& service, const std::vector<PlacedMember>& pods) const {
  std::vector<std::pair<const PlacedMember*, PodPublish>> placed;
  bool refused = false;
  for (const PlacedMember& pod : pods) {
    PodPublish outcome = PublishPod(service, pod.uid);
    if (outcome.refused) {
      refused = true;
      break;
    }
    if (outcome.published) placed.emplace_back(&pod, std::move(outcome));
  }
  if (!refused) return {};
  for (auto it = placed.rbegin(); it != placed.rend(); ++it) {
    service.RemovePod(it->first->uid);
    if (it->second.before) {
      (void)service.Attach(it->second.before->first, it->second.before->second);
    }
  }
  // Every member the replica holds unlike the extender's model now.
  std::vector<std::string> withdrawn;
  for (const PlacedMember& pod : pods) {
    const PlacedPod* mine = replica_.FindPodByUid(pod.uid);
    const PlacedPod* theirs = service.FindPodByUid(pod.uid);
    if (!mine->bound && (theirs == nullptr || theirs->node != mine->node)) {
      withdrawn.push_back(pod.key);
    }
  }
  return withdrawn;
}

// A pod kube-scheduler bound while the pass planned on a replica that saw
// it unbound (the pass revoked it, say for its bind timeout) runs on its
// devices now: the extender's model keeps them until the pod is gone (the
// revocation's eviction, then the pod watch), or they would be offered
// twice.
void AdmissionLoop::TakeOff(ClusterModel& service, const std::string& uid,
                            bool was_bound) {
  const PlacedPod* theirs = service.FindPodByUid(uid);
  if (theirs != nullptr && theirs->bound && !was_bound) return;
  service.RemovePod(uid);
}

// Removals go first: devices a pass freed (a preempted victim's) may be
// what it admitted another workload on.
void AdmissionLoop::CommitPass() {
  std::vector<std::pair<std::string, bool>> removed;  // uid, was bound
  std::map<std::string, std::vector<PlacedMember>> by_workload;
  for (auto& [uid, changed] : replica_.TakeChangedPods()) {
    const std::string& key = changed.pod_key;
    if (replica_.FindPodByUid(uid) == nullptr) {
      removed.emplace_back(uid, changed.was_bound);
      continue;
    }
    const Workload* w = engine_->FindWorkloadOfPod(key);
    // A pod of no workload stands alone ("/" never starts a workload key).
    by_workload[w != nullptr ? w->key : "/" + key].push_back({uid, key});
  }
  std::map<std::string, std::vector<std::string>> refused;
  if (!removed.empty() || !by_workload.empty()) {
    service_->Write([&](ClusterModel& service) {
      for (const auto& [uid, was_bound] : removed) {
        TakeOff(service, uid, was_bound);
      }
      for (const auto& [workload, pods] : by_workload) {
        std::vector<std::string> withdrawn = PublishWorkload(service, pods);
        if (!withdrawn.empty()) refused[workload] = std::move(withdrawn);
      }
    });
  }
  for (const auto& [workload, pods] : refused) {
    engine_->WithdrawPlacements(workload, pods);
  }
  if (refused.empty()) return;
  // The next pass plans again, on a replica synced after this commit.
  std::lock_guard lock(inbox_mu_);
  pass_requested_ = true;
  ++refused_commits_;
}

// The engine let the member go when it was preempted, but it still runs
// on its node: the engine learns the refusal first (a preemptor admitted
// on its capacity plans again), then takes the pod back where it runs.
void AdmissionLoop::ApplyRefusal(const EvictionRefusal& refusal, int64_t now) {
  engine_->EvictionBlocked(refusal.workload, refusal.message, now);
  const std::string key =
      absl::StrCat(refusal.pod.pod_namespace, "/", refusal.pod.pod_name);
  const Workload* w = engine_->FindWorkloadOfPod(key);
  if (w == nullptr) return;
  auto pod = w->pods.find(key);
  if (pod == w->pods.end() || PodUid(pod->second) != refusal.pod.uid ||
      pod->second.node_name.empty()) {
    return;  // another incarnation, or not running: nothing to keep
  }
  const Pod running = pod->second;
  AdoptBound(running, now);
}

// Only the admission the refusal was about: a member since taken back, or
// another incarnation of the pod, keeps what it has now.
void AdmissionLoop::ApplyAdmissionRefused(const AdmissionRefusal& refusal,
                                          int64_t now) {
  const std::string key =
      absl::StrCat(refusal.pod.pod_namespace, "/", refusal.pod.pod_name);
  const Workload* w = engine_->FindWorkloadOfPod(key);
  if (w == nullptr || w->key != refusal.workload) return;
  auto placed = w->placements.find(key);
  auto pod = w->pods.find(key);
  if (placed == w->placements.end() || placed->second.node != refusal.node ||
      pod == w->pods.end() || PodUid(pod->second) != refusal.pod.uid) {
    return;
  }
  refused_.insert(key);
  engine_->AdmissionRefused(
      w->key,
      absl::StrCat("the API server refused to admit pod ", key, " on node ",
                   refusal.node, ": ", refusal.message),
      now);
}

}  // namespace gpusched
