#include "scheduler/gpu_map.h"

#include <algorithm>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "scheduler/dra_describe.h"
#include "scheduler/gpu_labels.h"
#include "scheduler/resource_list.h"

namespace gpusched {
namespace {

// The labels a person reads a GPU map with; the rest of a node's labels
// (often a hundred from NFD) stay out of the snapshot.
constexpr std::string_view kMapLabels[] = {
    "nvidia.com/gpu.product",      "nvidia.com/gpu.memory",
    "nvidia.com/gpu.count",        "nvidia.com/mig.strategy",
    "nvidia.com/mig.config.state", "nvidia.com/gpu.sharing-strategy",
    "nvidia.com/gpu.replicas",
};

// Set by the node lifecycle controller when the kubelet stops reporting.
constexpr std::string_view kNotReadyTaints[] = {
    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"};

bool NotReady(const Node& node) {
  return std::any_of(
      node.taints.begin(), node.taints.end(), [](const Taint& t) {
        return std::find(std::begin(kNotReadyTaints), std::end(kNotReadyTaints),
                         t.key) != std::end(kNotReadyTaints);
      });
}

size_t PodIndex(const std::vector<std::string>& pods, std::string_view key) {
  return std::lower_bound(pods.begin(), pods.end(), key) - pods.begin();
}

// What each pod holds on the node, as holds on its devices and pools.
void AddHolds(const NodeState& state, GpuMapNode& node) {
  for (const auto& [key, allocation] : state.pods()) {
    const GpuAssignment& gpus = allocation.gpus;
    if (gpus.empty()) continue;
    const size_t pod = PodIndex(node.pods, key);
    for (int id : gpus.gpu_ids) {
      if (id < 0 || static_cast<size_t>(id) >= node.gpus.size()) continue;
      node.gpus[id].holders.push_back({pod, gpus.milli_per_gpu});
    }
    for (const auto& [resource, count] : gpus.mig) {
      const std::string_view profile =
          std::string_view(resource).substr(kMigResourcePrefix.size());
      for (GpuMapMigPool& pool : node.mig) {
        if (pool.profile == profile) pool.holders.push_back({pod, count});
      }
    }
  }
}

constexpr std::string_view kNvidiaDriver = "gpu.nvidia.com";

// The device plugin reports GPUs or MIG instances: they win over DRA's.
bool DevicePluginReportsGpus(const Node& node) {
  if (node.capacity.Get(kNvidiaGpu) > 0 ||
      node.allocatable.Get(kNvidiaGpu) > 0) {
    return true;
  }
  for (const auto& [name, amount] : node.allocatable.entries()) {
    if (amount > 0 && name.starts_with(kMigResourcePrefix)) return true;
  }
  return false;
}

// Names each GPU and MIG pool by the devices NVIDIA's driver published for
// it, and lists the node's tainted devices and uncounted pools.
void AddDraDevices(const DraNodeDevices& dra, GpuMapNode& node) {
  node.dra_problems = dra.problems;
  for (const DraDeviceState& state : dra.devices) {
    if (state.tainted()) {
      node.dra_tainted.push_back(
          absl::StrCat(state.device.name, " ", BlockingTaints(state.device)));
    }
    if (node.gpu_source != GpuSource::kDra || state.driver != kNvidiaDriver) {
      continue;
    }
    for (GpuMapDevice& gpu : node.gpus) {
      if (gpu.dra_name != state.device.name) continue;
      gpu.claim = state.claim;
      for (const DeviceTaint& taint : state.device.taints) {
        gpu.taints.push_back(FormatDeviceTaint(taint));
      }
    }
    const std::string profile = DriverTextAttribute(state, "profile");
    if (DriverTextAttribute(state, "type") != "mig" || state.tainted()) {
      continue;
    }
    for (GpuMapMigPool& pool : node.mig) {
      if (pool.profile == profile)
        pool.dra_devices.push_back(state.device.name);
    }
  }
}

}  // namespace

GpuSource GpuSourceOf(const NodeState& state) {
  const GpuInventory& gpus = state.gpus();
  if (gpus.devices().empty() && gpus.mig_pools().empty()) {
    return GpuSource::kNone;
  }
  return state.node().dra_devices != nullptr &&
                 !DevicePluginReportsGpus(state.node())
             ? GpuSource::kDra
             : GpuSource::kDevicePlugin;
}

std::string_view GpuSourceName(GpuSource source) {
  switch (source) {
    case GpuSource::kDevicePlugin:
      return "DevicePlugin";
    case GpuSource::kDra:
      return "DRA";
    case GpuSource::kNone:
      break;
  }
  return "";
}

GpuMapNode MapNode(const NodeState& state) {
  const GpuInventory& inventory = state.gpus();
  GpuMapNode node{.name = state.name(),
                  .product = BaseProduct(inventory.labels().product),
                  .memory_mib = inventory.labels().memory_mib,
                  .replicas = inventory.replicas(),
                  .unschedulable = state.node().unschedulable,
                  .not_ready = NotReady(state.node())};
  for (std::string_view label : kMapLabels) {
    auto it = state.node().meta.labels.find(label);
    if (it != state.node().meta.labels.end()) node.labels.push_back(*it);
  }
  for (const auto& [key, allocation] : state.pods()) {
    if (!allocation.gpus.empty()) node.pods.push_back(key);  // map: sorted
  }
  for (const GpuDevice& d : inventory.devices()) {
    node.gpus.push_back({.index = d.index,
                         .healthy = d.healthy,
                         .used_milli = kMilliPerGpu - d.free_milli,
                         .dra_name = d.dra_name});
  }
  for (const MigPool& pool : inventory.mig_pools()) {
    node.mig.push_back(
        {.profile = pool.resource.substr(kMigResourcePrefix.size()),
         .capacity = pool.capacity,
         .used = pool.used});
  }
  AddHolds(state, node);
  node.gpu_source = GpuSourceOf(state);
  if (const DraNodeDevices* dra = state.node().dra_devices.get()) {
    AddDraDevices(*dra, node);
  }
  return node;
}

// Steps: 1. per node, keep the previous entry when its generation is the
// same, else map it anew; 2. drop the entries of nodes gone; 3. a new
// snapshot only when something changed.
std::shared_ptr<const GpuMap> GpuMapBuilder::Build(const ClusterModel& model,
                                                   int64_t now_ms) {
  auto map = std::make_shared<GpuMap>();
  map->built_at_ms = now_ms;
  bool changed = last_ == nullptr || model.node_count() != kept_.size();
  for (const NodeState* state : model.SortedNodes()) {
    Kept& kept = kept_[state->name()];
    if (kept.node == nullptr || kept.generation != state->generation()) {
      kept = {.generation = state->generation(),
              .node = std::make_shared<const GpuMapNode>(MapNode(*state))};
      changed = true;
    }
    map->nodes.push_back(kept.node);
  }
  if (!changed) return last_;
  if (kept_.size() != map->nodes.size()) {
    absl::erase_if(kept_, [&](const auto& entry) {
      return model.FindNode(entry.first) == nullptr;
    });
  }
  map->generation = last_ == nullptr ? 1 : last_->generation + 1;
  last_ = std::move(map);
  return last_;
}

}  // namespace gpusched
