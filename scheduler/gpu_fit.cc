#include "scheduler/gpu_fit.h"

#include <algorithm>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/gpu_set_allocator.h"

namespace gpusched {
namespace {

void AppendGpuList(std::string& out, const std::vector<int>& ids) {
  out += ids.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    absl::StrAppend(&out, ids[i]);
  }
}

// "3 free (GPUs 1,4,6)": built in place, as it is formatted for most
// failing nodes of a filter.
std::string FreeSummary(const std::vector<int>& free_ids) {
  if (free_ids.empty()) return "0 free";
  std::string out;
  out.reserve(16 + 3 * free_ids.size());
  absl::StrAppend(&out, free_ids.size(), " free (");
  AppendGpuList(out, free_ids);
  out += ')';
  return out;
}

std::string HolderSummary(const std::vector<std::string>& holders) {
  if (holders.empty()) return "";
  constexpr size_t kShown = 3;
  std::vector<std::string> shown(
      holders.begin(), holders.begin() + std::min(kShown, holders.size()));
  std::string more =
      holders.size() > kShown
          ? absl::StrCat(" and ", holders.size() - kShown, " more")
          : "";
  return absl::StrCat(" (held by ", absl::StrJoin(shown, ", "), more, ")");
}

std::string NodeGpuDescription(const GpuInventory& inventory) {
  const std::string& product = inventory.labels().product;
  return product.empty() ? "" : absl::StrCat(" ", product);
}

std::vector<int> WholeFreeGpus(const GpuInventory& inventory) {
  std::vector<int> free;
  for (const GpuDevice& d : inventory.devices()) {
    if (d.healthy && d.free_milli == kMilliPerGpu) free.push_back(d.index);
  }
  return free;
}

FitVerdict CheckMigPool(const GpuInventory& inventory,
                        const std::string& resource, int64_t count) {
  const MigPool* pool = inventory.FindMig(resource);
  if (pool == nullptr) {
    std::vector<std::string> offered;
    for (const MigPool& p : inventory.mig_pools()) {
      offered.push_back(p.resource.substr(kMigResourcePrefix.size()));
    }
    return FitVerdict::Infeasible(absl::StrCat(
        "needs ", count, " ", resource, "; node offers ",
        offered.empty()
            ? "no MIG instances"
            : absl::StrCat("MIG profiles ", absl::StrJoin(offered, ", "))));
  }
  if (pool->capacity < count) {
    return FitVerdict::Infeasible(absl::StrCat("needs ", count, " ", resource,
                                               "; node has ", pool->capacity));
  }
  const std::string& state = inventory.labels().mig_config_state;
  if (!state.empty() && state != "success") {
    return FitVerdict::Unavailable(absl::StrCat(
        "needs ", count, " ", resource,
        "; MIG reconfiguration in progress (nvidia.com/mig.config.state=",
        state, ")"));
  }
  const int64_t free = pool->capacity - pool->used;
  if (free < count) {
    return FitVerdict::Unavailable(
        absl::StrCat("needs ", count, " ", resource, "; ", free, " free of ",
                     pool->capacity, HolderSummary(pool->holders)));
  }
  return FitVerdict::Fits();
}

// Devices with at least `milli` free, best fit (least free) first.
std::vector<int> BestFitDevices(const GpuInventory& inventory, int milli) {
  std::vector<int> ids;
  for (const GpuDevice& d : inventory.devices()) {
    if (d.healthy && d.free_milli >= milli) ids.push_back(d.index);
  }
  const auto& devices = inventory.devices();
  std::stable_sort(ids.begin(), ids.end(), [&](int a, int b) {
    return devices[a].free_milli < devices[b].free_milli;
  });
  return ids;
}

GpuPlan PlanShare(const GpuRequest& request, const GpuInventory& inventory) {
  if (!inventory.time_shared()) {
    return {FitVerdict::Infeasible(
        "a GPU share (gpusched.io/gpu-milli) needs a time-sliced or MPS node "
        "(nvidia.com/gpu.replicas > 1); this node's GPUs are not shared")};
  }
  std::vector<int> fitting = BestFitDevices(inventory, request.milli);
  if (fitting.empty()) {
    int largest = 0;
    int largest_id = -1;
    for (const GpuDevice& d : inventory.devices()) {
      if (d.healthy && d.free_milli > largest) {
        largest = d.free_milli;
        largest_id = d.index;
      }
    }
    std::string where =
        largest_id < 0 ? "" : absl::StrCat(" (GPU ", largest_id, ")");
    return {FitVerdict::Unavailable(absl::StrCat(
        "needs ", request.milli,
        " milli-GPU on one GPU; largest free share is ", largest, where))};
  }
  return {FitVerdict::Fits(), GpuAssignment{.gpu_ids = {fitting.front()},
                                            .milli_per_gpu = request.milli}};
}

GpuPlan PlanReplicas(const GpuRequest& request, const GpuInventory& inventory) {
  const int replica = inventory.replica_milli();
  if (inventory.healthy_devices() < request.gpus) {
    return {FitVerdict::Infeasible(
        absl::StrCat("needs ", request.gpus,
                     " nvidia.com/gpu replicas on different GPUs; "
                     "node has ",
                     inventory.healthy_devices(), " GPUs shared ",
                     inventory.replicas(), " ways"))};
  }
  std::vector<int> fitting = BestFitDevices(inventory, replica);
  if (static_cast<int>(fitting.size()) < request.gpus) {
    return {FitVerdict::Unavailable(
        absl::StrCat("needs ", request.gpus, " nvidia.com/gpu replicas (",
                     replica, " milli-GPU each, on different GPUs); ",
                     fitting.size(), " GPUs have a replica free"))};
  }
  fitting.resize(request.gpus);
  std::sort(fitting.begin(), fitting.end());
  return {FitVerdict::Fits(),
          GpuAssignment{.gpu_ids = fitting, .milli_per_gpu = replica}};
}

// Whole GPUs restricted to one NVLink island.
GpuPlan PlanOnIsland(const GpuRequest& request, const GpuInventory& inventory,
                     const std::vector<int>& free) {
  const GpuTopology& topology = inventory.topology();
  std::optional<std::vector<int>> best;
  int64_t best_score = -1;
  std::vector<int> best_island_free;
  size_t largest_island = 0;
  for (const std::vector<int>& island : topology.NvLinkIslands()) {
    largest_island = std::max(largest_island, island.size());
    std::vector<int> island_free;
    std::set_intersection(island.begin(), island.end(), free.begin(),
                          free.end(), std::back_inserter(island_free));
    if (island_free.size() > best_island_free.size() && !best) {
      best_island_free = island_free;
    }
    auto chosen = ChooseGpuSet(topology, island_free, request.gpus);
    if (!chosen) continue;
    int64_t score = topology.SetScore(*chosen);
    if (score > best_score) {
      best_score = score;
      best = std::move(chosen);
    }
  }
  if (best)
    return {FitVerdict::Fits(),
            GpuAssignment{.gpu_ids = *best, .milli_per_gpu = kMilliPerGpu}};
  if (static_cast<int>(largest_island) < request.gpus) {
    return {FitVerdict::Infeasible(absl::StrCat(
        "needs ", request.gpus,
        " nvidia.com/gpu on one NVLink island; the largest island has ",
        largest_island, " GPUs"))};
  }
  return {FitVerdict::Unavailable(absl::StrCat(
      "needs ", request.gpus, " nvidia.com/gpu on one NVLink island; ",
      FreeSummary(best_island_free)))};
}

// ChooseGpuSet through the topology's memo table when it has one.
std::optional<std::vector<int>> ChooseWholeGpus(const GpuInventory& inventory,
                                                const std::vector<int>& free,
                                                int count) {
  const GpuSetCache* cache = inventory.set_cache();
  if (cache == nullptr) return ChooseGpuSet(inventory.topology(), free, count);
  uint32_t free_mask = 0;
  for (int gpu : free) free_mask |= 1u << gpu;
  std::optional<uint32_t> chosen = cache->Choose(free_mask, count);
  if (!chosen) return std::nullopt;
  std::vector<int> ids;
  for (int gpu = 0; gpu < inventory.topology().gpu_count(); ++gpu) {
    if (*chosen & (1u << gpu)) ids.push_back(gpu);
  }
  return ids;
}

GpuPlan PlanWholeGpus(const GpuRequest& request,
                      const GpuInventory& inventory) {
  const int healthy = inventory.healthy_devices();
  if (healthy == 0) {
    return {FitVerdict::Infeasible(absl::StrCat(
        "needs ", request.gpus, " nvidia.com/gpu; node has none"))};
  }
  // Shared nodes count replicas, not GPUs: PlanReplicas says so itself.
  if (inventory.time_shared()) return PlanReplicas(request, inventory);
  if (healthy < request.gpus) {
    return {FitVerdict::Infeasible(
        absl::StrCat("needs ", request.gpus, " nvidia.com/gpu; node has ",
                     healthy, NodeGpuDescription(inventory)))};
  }
  std::vector<int> free = WholeFreeGpus(inventory);
  if (request.require_nvlink) return PlanOnIsland(request, inventory, free);
  auto chosen = ChooseWholeGpus(inventory, free, request.gpus);
  if (!chosen) {
    return {FitVerdict::Unavailable(absl::StrCat(
        "needs ", request.gpus, " nvidia.com/gpu; ", FreeSummary(free)))};
  }
  return {FitVerdict::Fits(),
          GpuAssignment{.gpu_ids = *chosen, .milli_per_gpu = kMilliPerGpu}};
}

}  // namespace

GpuPlan PlanGpus(const GpuRequest& request, const GpuInventory& inventory) {
  for (const auto& [resource, count] : request.mig) {
    FitVerdict verdict = CheckMigPool(inventory, resource, count);
    if (!verdict.fits()) return {std::move(verdict)};
  }
  GpuPlan plan;
  if (request.milli > 0) {
    plan = PlanShare(request, inventory);
  } else if (request.gpus > 0) {
    plan = PlanWholeGpus(request, inventory);
  }
  if (plan.verdict.fits()) plan.assignment.mig = request.mig;
  return plan;
}

}  // namespace gpusched
