// Adoption: admissions made before a restart, rebuilt from the pods as the
// cluster has them (bound, or labelled admitted on a node), so that the
// first pass after a restart sees every queue charged for what already
// runs and admits nothing twice.
//
// Steps (Adopt): 1. a pod the engine already holds on the node changes
// nothing (a bound one is marked bound); 2. its devices on the node, held
// once in the model; 3. it joins its workload as AddPod would; 4. its
// placement, its queue's charge and the workload's admission are recorded.
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/workload_store.h"
#include "scheduler/gpu_fit.h"
#include "scheduler/node_predicates.h"
#include "scheduler/pod_view.h"

namespace gpusched {
namespace {

// Per resource group, the node's flavor is the first of the queue's whose
// node labels the node carries. A node that matches none (the policy
// changed since the admission) is charged to the group's first flavor:
// the pod takes its queue's quota wherever it runs.
FrAmounts ChargeOnNode(const Policy& policy, const QuotaFlavors& flavors,
                       const Workload& w, const Pod& pod,
                       const NodeState& node) {
  FrAmounts charge;
  const ClusterQueue* cq = flavors.ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) return charge;  // outside queues: nothing to charge
  const ResourceList requests = EffectiveRequests(pod);
  for (const ResourceGroup& g : cq->resource_groups) {
    if (g.flavors.empty()) continue;
    const FlavorQuotas* chosen = &g.flavors.front();
    for (const FlavorQuotas& f : g.flavors) {
      const ResourceFlavor* flavor = FindFlavor(policy, f.flavor);
      if (flavor == nullptr ||
          HasLabels(node.node().meta.labels, flavor->node_labels)) {
        chosen = &f;
        break;
      }
    }
    for (const std::string& r : g.covered_resources) {
      if (requests.Get(r) > 0) charge[{chosen->flavor, r}] += requests.Get(r);
    }
  }
  return charge;
}

}  // namespace

Adoption WorkloadStore::Adopt(const StoreInputs& in, const Pod& pod,
                              const std::string& node, bool bound,
                              int64_t now) {
  const std::string key = pod.Key();
  if (auto of = workload_of_pod_.find(key); of != workload_of_pod_.end()) {
    Workload& known = workloads_[of->second];
    if (auto placed = known.placements.find(key);
        placed != known.placements.end()) {
      if (placed->second.node != node) {
        return {Adoption::Outcome::kPlacedElsewhere,
                absl::StrCat("held on node ", placed->second.node)};
      }
      if (bound) known.bound.insert(key);
      Recharge(in, known, key, pod);
      return {Adoption::Outcome::kAlreadyPlaced, ""};
    }
  }
  if (in.model.FindNode(node) == nullptr) {
    return {Adoption::Outcome::kNodeUnknown,
            absl::StrCat("node ", node, " is not known to gpusched")};
  }
  std::string reason;
  std::optional<GpuAssignment> gpus =
      HoldOnNode(in.model, pod, node, bound, &reason);
  if (!gpus) return {Adoption::Outcome::kDoesNotFit, std::move(reason)};
  AddPod(in, pod, now);
  RecordAdoption(in, workloads_[workload_of_pod_[key]], key,
                 Placement{node, *std::move(gpus)}, bound, now);
  return {};
}

void WorkloadStore::AdoptSucceeded(const Pod& pod) {
  auto it = workloads_.find(WorkloadOf(pod).key);
  if (it == workloads_.end() || !it->second.is_gang ||
      it->second.state == Workload::State::kFinished ||
      it->second.pods.contains(pod.Key())) {
    return;
  }
  it->second.signature_id = -1;
  NoteSucceeded(it->second, pod.Key());
}

// A bound pod's devices are the ones the cluster sync recorded from its
// gpusched.io/gpu-ids before the loop heard of the pod: they are read, not
// placed a second time (Place refuses a UID twice anyway). A pod the model
// holds on another node moves: the node it runs on, or was admitted to,
// wins, as in ExtenderService::ObserveBound.
std::optional<GpuAssignment> WorkloadStore::HoldOnNode(ClusterModel& model,
                                                       const Pod& pod,
                                                       const std::string& node,
                                                       bool bound,
                                                       std::string* reason) {
  const std::string uid = PodUid(pod);
  if (const PlacedPod* placed = model.FindPodByUid(uid);
      placed != nullptr && placed->node != node) {
    model.RemovePod(uid);
  }
  Pod on = pod;
  on.node_name = node;
  absl::Status held = absl::OkStatus();
  if (model.FindPodByUid(uid) != nullptr) {
    if (bound) model.MarkBound(uid);
  } else if (bound) {
    held = model.AddRunningPod(on);
  } else {
    GpuPlan plan = PlanGpus(PodView::Of(on).gpu, model.FindNode(node)->gpus());
    if (!plan.verdict.fits()) {
      *reason = absl::StrCat("node ", node, ": ", plan.verdict.reason());
      return std::nullopt;
    }
    held = model.Place(on, node, std::move(plan.assignment), false);
  }
  if (!held.ok()) {
    *reason = std::string(held.message());
    return std::nullopt;
  }
  const PodAllocation* allocation = model.FindNode(node)->FindPod(pod.Key());
  return allocation == nullptr ? GpuAssignment{} : allocation->gpus;
}

// A held member whose claims were resolved since (the DRA lists arrived
// after it was adopted): its queue's charge follows, so no quota stays
// held short. Only the difference moves, under the flavor its node gives;
// a charge never goes below zero.
void WorkloadStore::Recharge(const StoreInputs& in, Workload& w,
                             const std::string& key, const Pod& pod) {
  Pod& held = w.pods.at(key);
  if (held.claim_requests == pod.claim_requests) return;
  const NodeState* node = in.model.FindNode(w.placements.at(key).node);
  if (node == nullptr || !w.admitted()) return;
  const FrAmounts before = ChargeOnNode(in.policy, in.flavors, w, held, *node);
  held.claim_requests = pod.claim_requests;
  held.claim_hold = pod.claim_hold;
  held.dra_demand = pod.dra_demand;
  FrAmounts after = ChargeOnNode(in.policy, in.flavors, w, held, *node);
  FrAmounts added, removed;
  for (const auto& [fr, amount] : before) after[fr] -= amount;
  for (const auto& [fr, delta] : after) {
    if (delta > 0) added[fr] = delta;
    if (delta < 0) removed[fr] = std::min(-delta, w.charged[fr]);
  }
  in.quota.AddUsage(w.cluster_queue, added);
  in.quota.RemoveUsage(w.cluster_queue, removed);
  for (const auto& [fr, amount] : added) w.charged[fr] += amount;
  for (const auto& [fr, amount] : removed) w.charged[fr] -= amount;
  std::erase_if(w.charged, [](const auto& each) { return each.second == 0; });
}

namespace {

// A running member's start (status.startTime, else now) is when the
// workload's run began at the latest: the earliest of them is kept.
void NoteRunStart(Workload& w, const Pod& pod, bool bound, int64_t now) {
  if (w.admitted() && w.run_started_ms < 0) return;  // admitted here: its own
  const int64_t start = bound && pod.start_unix_seconds > 0
                            ? std::min(pod.start_unix_seconds * 1000, now)
                            : now;
  w.run_started_ms =
      w.run_started_ms < 0 ? start : std::min(w.run_started_ms, start);
}

}  // namespace

// The charge goes in even past the queue's quota (Fit then finds nothing
// available there). A workload's charge is held exactly while it is
// admitted, as Finish and Release expect.
void WorkloadStore::RecordAdoption(const StoreInputs& in, Workload& w,
                                   const std::string& pod_key,
                                   Placement placement, bool bound,
                                   int64_t now) {
  const FrAmounts charge =
      ChargeOnNode(in.policy, in.flavors, w, w.pods.at(pod_key),
                   *in.model.FindNode(placement.node));
  const std::string node = placement.node;
  w.placements[pod_key] = std::move(placement);
  if (bound || in.options.bind_on_admission) w.bound.insert(pod_key);
  in.quota.AddUsage(w.cluster_queue, charge);
  for (const auto& [fr, amount] : charge) w.charged[fr] += amount;
  NoteRunStart(w, w.pods.at(pod_key), bound, now);
  if (!w.admitted()) {
    SetState(in.flavors, w, Workload::State::kAdmitted);
    // The bind timeout counts from the restart: when the first admission
    // happened is not known (the run's start is, NoteRunStart).
    w.admitted_at_ms = now;
    w.failed_attempts = 0;
    w.backoff_until_ms = 0;
    w.Explain({});
    Emit(now, EngineEvent::Type::kAdopted, w, "",
         absl::StrCat("admitted before a restart; ", pod_key, " on node ",
                      node));
  }
  // Members still missing get the grace of a running gang that lost some.
  if (w.is_gang && static_cast<int>(w.placements.size() + w.succeeded.size()) <
                       w.min_member) {
    in.timers.NoteBelowMin(w.key, now);
  }
}

}  // namespace gpusched
