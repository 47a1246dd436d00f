#include "scheduler/gpu_map.h"

#include <algorithm>
#include <string_view>

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

}  // namespace

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
                         .used_milli = kMilliPerGpu - d.free_milli});
  }
  for (const MigPool& pool : inventory.mig_pools()) {
    node.mig.push_back(
        {.profile = pool.resource.substr(kMigResourcePrefix.size()),
         .capacity = pool.capacity,
         .used = pool.used});
  }
  AddHolds(state, node);
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
