// The DRA part of `explain`: a workload's claims as its first member with
// claims asks them, and an admitted workload's devices by their DRA names.
#include <string>
#include <utility>
#include <vector>

#include "queueing/workload.h"
#include "queueing/workload_explanation.h"

namespace gpusched {
namespace {

const Pod* FirstWithClaims(const Workload& w) {
  for (const auto& [key, pod] : w.pods) {
    if (HasDraClaims(pod)) return &pod;
  }
  return nullptr;
}

// Each placed member on a node with DRA devices: what its claims were
// allocated there, else what gpusched planned.
std::vector<DraMemberDevices> MemberDevices(const Workload& w,
                                            const ClusterModel& model) {
  std::vector<DraMemberDevices> out;
  for (const auto& [key, placement] : w.placements) {
    const NodeState* node = model.FindNode(placement.node);
    auto pod = w.pods.find(key);
    if (node == nullptr || pod == w.pods.end() ||
        node->node().dra_devices == nullptr) {
      continue;
    }
    DraMemberDevices devices =
        DraDevicesOfPod(*node->node().dra_devices, pod->second.meta.uid);
    devices.pod = key;
    devices.node = placement.node;
    if (devices.allocated.empty()) {
      devices.planned = node->gpus().DraNamesOf(placement.gpus.gpu_ids);
    }
    if (!devices.allocated.empty() || !devices.planned.empty()) {
      out.push_back(std::move(devices));
    }
  }
  return out;
}

}  // namespace

std::optional<DraExplanation> ExplainWorkloadDra(
    const Workload& w, const ClusterModel& model, const DraLookup& lookup,
    const std::vector<DeviceClassMapping>& mappings, DraDemand& demand) {
  const Pod* pod = FirstWithClaims(w);
  // An nvidia.com/gpu request served by DRA has no claim of its own until
  // kube-scheduler makes one, yet its GPUs have DRA names.
  std::vector<DraMemberDevices> members;
  if (w.admitted()) members = MemberDevices(w, model);
  if (pod == nullptr && members.empty()) return std::nullopt;
  DraExplanation out;
  if (pod != nullptr) {
    DraPodClaims claims = ClaimsForExplain(*pod, lookup, mappings);
    out = ExplainDraDemand(*pod, claims.demand, claims.charge);
    demand = std::move(claims.demand);
  }
  out.members = std::move(members);
  return out;
}

}  // namespace gpusched
