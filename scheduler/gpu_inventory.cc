#include "scheduler/gpu_inventory.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

void AddHolder(std::vector<std::string>& holders, std::string_view pod) {
  auto it = std::lower_bound(holders.begin(), holders.end(), pod);
  if (it == holders.end() || *it != pod) holders.emplace(it, pod);
}

void RemoveHolder(std::vector<std::string>& holders, std::string_view pod) {
  auto it = std::lower_bound(holders.begin(), holders.end(), pod);
  if (it != holders.end() && *it == pod) holders.erase(it);
}

}  // namespace

std::string FormatGpuIds(const std::vector<int>& ids) {
  return absl::StrJoin(ids, ",");
}

absl::StatusOr<std::vector<int>> ParseGpuIds(std::string_view std_text) {
  const absl::string_view text = Sv(std_text);
  std::vector<int> ids;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int id = 0;
    if (!absl::SimpleAtoi(part, &id) || id < 0 || id >= kMaxGpusPerNode) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", text, "\": \"", part, "\" is not a GPU index"));
    }
    ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  if (std::adjacent_find(ids.begin(), ids.end()) != ids.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\": a GPU index is repeated"));
  }
  return ids;
}

GpuInventory GpuInventory::FromNode(const Node& node) {
  GpuInventory inventory;
  inventory.labels_ = ReadGpuLabels(node.meta.labels);
  const int replicas = inventory.labels_.replicas;
  // Allocatable counts replicas on shared nodes, not GPUs. GPUs that the
  // device plugin reports in capacity but not in allocatable are unhealthy;
  // which index is unknown, so the highest indices are marked.
  int64_t allocatable = node.allocatable.Get(kNvidiaGpu) / replicas;
  int64_t capacity = node.capacity.Has(kNvidiaGpu)
                         ? node.capacity.Get(kNvidiaGpu) / replicas
                         : allocatable;
  capacity =
      std::clamp<int64_t>(std::max(capacity, allocatable), 0, kMaxGpusPerNode);
  for (int i = 0; i < capacity; ++i) {
    inventory.devices_.push_back(
        GpuDevice{.index = i, .healthy = i < allocatable});
  }
  for (const auto& [name, amount] : node.allocatable.entries()) {
    if (absl::StartsWith(name, Sv(kMigResourcePrefix)) && amount > 0) {
      inventory.mig_pools_.push_back(
          MigPool{.resource = name, .capacity = amount});
    }
  }
  // The device plugin wins where it reports GPUs: kube-scheduler serves
  // nvidia.com/gpu from allocatable there, and from DRA only where the
  // node has none (KEP-5004); the same GPUs are never counted twice.
  if (node.dra_devices != nullptr && inventory.devices_.empty() &&
      inventory.mig_pools_.empty()) {
    inventory.LoadDraDevices(*node.dra_devices);
  }
  inventory.LoadTopology(node);
  inventory.CountFree();
  inventory.set_cache_ = GpuSetCache::For(inventory.topology_);
  return inventory;
}

void GpuInventory::LoadTopology(const Node& node) {
  const int count = static_cast<int>(devices_.size());
  const std::string product = BaseProduct(labels_.product);
  topology_ = GpuTopology::DefaultFor(product, count);
  topology_source_ = absl::StrCat(
      "default for ", product.empty() ? "unknown product" : product);
  if (!node.gpu_topology.has_value()) return;
  const absl::StatusOr<GpuTopology>& parsed = *node.gpu_topology;
  if (!parsed.ok()) {
    topology_error_ = std::string(parsed.status().message());
  } else if (parsed->gpu_count() != count) {
    topology_error_ =
        absl::StrCat("describes ", parsed->gpu_count(),
                     " GPUs but the node offers ", count, " whole GPUs");
  } else {
    topology_ = *parsed;
    topology_source_ = "annotation";
    return;
  }
  topology_source_ =
      absl::StrCat(topology_source_, " (annotation ", kGpuTopologyAnnotation,
                   " rejected: ", topology_error_, ")");
}

const MigPool* GpuInventory::FindMig(std::string_view resource) const {
  for (const MigPool& pool : mig_pools_) {
    if (pool.resource == resource) return &pool;
  }
  return nullptr;
}

int GpuInventory::healthy_devices() const {
  return static_cast<int>(
      std::count_if(devices_.begin(), devices_.end(),
                    [](const GpuDevice& d) { return d.healthy; }));
}

int64_t GpuInventory::total_milli() const {
  return int64_t{healthy_devices()} * kMilliPerGpu;
}

void GpuInventory::CountFree() {
  free_milli_ = 0;
  for (const GpuDevice& d : devices_) {
    if (d.healthy) free_milli_ += d.free_milli;
  }
}

absl::Status GpuInventory::CheckApplicable(
    const GpuAssignment& assignment) const {
  std::vector<int> ids = assignment.gpu_ids;
  std::sort(ids.begin(), ids.end());
  if (auto twice = std::adjacent_find(ids.begin(), ids.end());
      twice != ids.end()) {
    return absl::FailedPreconditionError(
        absl::StrCat("GPU ", *twice, " is listed twice"));
  }
  for (int id : assignment.gpu_ids) {
    if (id < 0 || id >= static_cast<int>(devices_.size())) {
      return absl::FailedPreconditionError(
          absl::StrCat("GPU ", id, " does not exist on this node (",
                       devices_.size(), " GPUs)"));
    }
    if (devices_[id].free_milli < assignment.milli_per_gpu) {
      return absl::FailedPreconditionError(
          absl::StrCat("GPU ", id, " has ", devices_[id].free_milli,
                       " milli free, needs ", assignment.milli_per_gpu));
    }
  }
  for (const auto& [resource, count] : assignment.mig) {
    const MigPool* pool = FindMig(resource);
    if (pool == nullptr || pool->capacity - pool->used < count) {
      return absl::FailedPreconditionError(
          absl::StrCat("not enough free ", resource));
    }
  }
  return absl::OkStatus();
}

absl::Status GpuInventory::Apply(const GpuAssignment& assignment,
                                 std::string_view pod) {
  if (absl::Status status = CheckApplicable(assignment); !status.ok()) {
    return status;
  }
  for (int id : assignment.gpu_ids) {
    devices_[id].free_milli -= assignment.milli_per_gpu;
    AddHolder(devices_[id].holders, pod);
  }
  CountFree();
  for (const auto& [resource, count] : assignment.mig) {
    for (MigPool& pool : mig_pools_) {
      if (pool.resource != resource) continue;
      pool.used += count;
      AddHolder(pool.holders, pod);
    }
  }
  return absl::OkStatus();
}

void GpuInventory::Release(const GpuAssignment& assignment,
                           std::string_view pod) {
  for (int id : assignment.gpu_ids) {
    if (id < 0 || id >= static_cast<int>(devices_.size())) continue;
    devices_[id].free_milli = std::min(
        kMilliPerGpu, devices_[id].free_milli + assignment.milli_per_gpu);
    RemoveHolder(devices_[id].holders, pod);
  }
  CountFree();
  for (const auto& [resource, count] : assignment.mig) {
    for (MigPool& pool : mig_pools_) {
      if (pool.resource != resource) continue;
      pool.used = std::max<int64_t>(0, pool.used - count);
      RemoveHolder(pool.holders, pod);
    }
  }
}

}  // namespace gpusched
