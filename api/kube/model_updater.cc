#include "api/kube/model_updater.h"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>

#include "scheduler/cluster_model.h"
#include "scheduler/pod_view.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube::internal {
namespace {

void LogWarnings(const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    spdlog::warn("kube sync: {}", warning);
  }
}

std::set<std::string, std::less<>> ModelNodeNames(
    const ExtenderService& service) {
  return service.Read([](const ClusterModel& model) {
    std::set<std::string, std::less<>> names;
    for (const NodeState* node : model.SortedNodes()) {
      names.insert(node->name());
    }
    return names;
  });
}

// The UIDs of the pods the model holds, but for those named in `kept`.
std::set<std::string, std::less<>> ModelPodUids(
    const ExtenderService& service,
    const std::set<std::string, std::less<>>& kept) {
  return service.Read([&](const ClusterModel& model) {
    std::set<std::string, std::less<>> uids;
    for (const NodeState* node : model.SortedNodes()) {
      for (const auto& [key, allocation] : node->pods()) {
        if (!kept.contains(key)) uids.insert(allocation.uid);
      }
    }
    return uids;
  });
}

// The pod asks for whole GPUs or a share, and its record holds none.
bool HeldShort(const ExtenderService& service, const Pod& pod) {
  const GpuRequest& wants = PodView::Of(pod).gpu;
  if (wants.gpus == 0 && wants.milli == 0) return false;
  return service.Read([&](const ClusterModel& model) {
    const PlacedPod* placed = model.FindPodByUid(pod.meta.uid);
    if (placed == nullptr) return false;
    const NodeState* node = model.FindNode(placed->node);
    const PodAllocation* held =
        node == nullptr ? nullptr : node->FindPod(placed->pod_key);
    return held != nullptr && held->gpus.gpu_ids.empty();
  });
}

}  // namespace

void ModelUpdater::ReplaceNodes(std::vector<Node> nodes,
                                const std::vector<std::string>& undecodable) {
  std::set<std::string, std::less<>> listed(undecodable.begin(),
                                            undecodable.end());
  for (const Node& node : nodes) listed.insert(node.meta.name);
  LogWarnings(service_.UpsertNodes(std::move(nodes)));
  for (const std::string& name : ModelNodeNames(service_)) {
    if (!listed.contains(name)) service_.RemoveNode(name);
  }
  std::lock_guard lock(mu_);
  for (const std::string& name : listed) {
    AdoptOrphansLocked(name);
    PlaceShortAgainLocked(name);
  }
}

void ModelUpdater::ApplyNode(WatchEventType type, Node node) {
  if (type == WatchEventType::kDeleted) {
    service_.RemoveNode(node.meta.name);
    return;
  }
  const std::string name = node.meta.name;
  std::vector<Node> one;
  one.push_back(std::move(node));
  LogWarnings(service_.UpsertNodes(std::move(one)));
  std::lock_guard lock(mu_);
  AdoptOrphansLocked(name);
  PlaceShortAgainLocked(name);
}

void ModelUpdater::ReplacePods(const std::vector<Pod>& pods,
                               const std::vector<std::string>& undecodable) {
  std::set<std::string, std::less<>> listed;
  for (const Pod& pod : pods) {
    listed.insert(pod.meta.uid);
    ApplyPod(WatchEventType::kModified, pod);
  }
  const std::set<std::string, std::less<>> kept(undecodable.begin(),
                                                undecodable.end());
  for (const std::string& uid : ModelPodUids(service_, kept)) {
    if (!listed.contains(uid)) service_.RemovePod(uid);
  }
  for (const std::string& uid : service_.DetachedPodUids()) {
    if (!listed.contains(uid)) service_.RemovePod(uid);
  }
  std::lock_guard lock(mu_);
  std::erase_if(orphans_, [&](const auto& entry) {
    return !listed.contains(entry.first);
  });
  std::erase_if(
      short_, [&](const auto& entry) { return !listed.contains(entry.first); });
}

void ModelUpdater::ApplyPod(WatchEventType type, const Pod& pod) {
  if (type == WatchEventType::kDeleted || IsTerminal(pod)) {
    Forget(pod.meta.uid);
    return;
  }
  if (pod.node_name.empty()) return;  // pending: holds nothing yet
  std::lock_guard lock(mu_);
  PlaceLocked(pod);
}

// Reads the devices outside the model's lock (a pass over thousands of
// nodes would hold binds up), then upserts only the nodes that changed.
// A pass over every node costs ~130 ms at 5,000 DGX nodes
// (bench/dra_bench.cc BM_DraRefreshPass), so a claim's change reads only
// its node (DraDeviceSource::only).
void ModelUpdater::RefreshDraDevices(const DraDeviceSource& dra) {
  const std::vector<std::string>& published = dra.published;
  using Held = std::pair<std::string, std::shared_ptr<const DraNodeDevices>>;
  std::vector<Held> held = service_.Read([&](const ClusterModel& model) {
    std::vector<Held> out;
    for (const NodeState* node : model.SortedNodes()) {
      const Node& object = node->node();
      if (!dra.all && !dra.only.contains(object.meta.name)) continue;
      if (object.dra_devices == nullptr &&
          !std::binary_search(published.begin(), published.end(),
                              object.meta.name)) {
        continue;  // no devices then, none now
      }
      out.emplace_back(object.meta.name, object.dra_devices);
    }
    return out;
  });
  for (auto& [name, before] : held) {
    std::shared_ptr<const DraNodeDevices> now = dra.devices_of(name);
    if (SameDraDevices(before, now)) continue;
    LogWarnings(service_.SetDraDevices(name, std::move(now)));
    std::lock_guard lock(mu_);
    AdoptOrphansLocked(name);
    PlaceShortAgainLocked(name);
  }
}

size_t ModelUpdater::orphan_count() const {
  std::lock_guard lock(mu_);
  return orphans_.size();
}

void ModelUpdater::Forget(const std::string& uid) {
  service_.RemovePod(uid);
  std::lock_guard lock(mu_);
  orphans_.erase(uid);
  short_.erase(uid);
}

// A pod already placed bound on its node is skipped (an earlier event placed
// it). One placed but only assumed there (our own bind, perhaps in doubt),
// or placed on another node, is settled by the service: the API server's
// word wins.
void ModelUpdater::PlaceLocked(const Pod& pod) {
  enum class Known { kNo, kBoundHere, kOther };
  auto [node_known, known] = service_.Read([&](const ClusterModel& model) {
    const PlacedPod* placed = model.FindPodByUid(pod.meta.uid);
    Known state = placed == nullptr ? Known::kNo
                  : placed->bound && placed->node == pod.node_name
                      ? Known::kBoundHere
                      : Known::kOther;
    return std::pair(model.FindNode(pod.node_name) != nullptr, state);
  });
  if (known == Known::kBoundHere) {
    orphans_.erase(pod.meta.uid);
    return;
  }
  if (!node_known) {
    orphans_.insert_or_assign(pod.meta.uid, pod);
    return;
  }
  orphans_.erase(pod.meta.uid);
  if (known == Known::kOther) {
    LogWarnings(service_.ObserveBound(pod));
    return;
  }
  LogWarnings(service_.AddRunningPods({pod}));
  if (HeldShort(service_, pod)) short_.insert_or_assign(pod.meta.uid, pod);
}

void ModelUpdater::AdoptOrphansLocked(std::string_view node) {
  std::vector<Pod> adopt;
  for (const auto& [uid, pod] : orphans_) {
    if (pod.node_name == node) adopt.push_back(pod);
  }
  for (const Pod& pod : adopt) PlaceLocked(pod);
}

void ModelUpdater::PlaceShortAgainLocked(std::string_view node) {
  std::vector<Pod> again;
  for (const auto& [uid, pod] : short_) {
    if (pod.node_name == node) again.push_back(pod);
  }
  for (const Pod& pod : again) {
    service_.RemovePod(pod.meta.uid);
    LogWarnings(service_.AddRunningPods({pod}));
    if (!HeldShort(service_, pod)) short_.erase(pod.meta.uid);
  }
}

}  // namespace gpusched::kube::internal
