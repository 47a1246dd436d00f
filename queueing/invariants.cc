#include "queueing/invariants.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/engine.h"

namespace gpusched {
namespace {

std::string Describe(const FlavorResource& fr) {
  return absl::StrCat(fr.flavor, "/", fr.resource);
}

void Append(std::vector<std::string>& to, std::vector<std::string> more) {
  for (std::string& each : more) to.push_back(std::move(each));
}

// What the pods' assignments take of one node's devices.
struct DeviceUse {
  std::map<int, int64_t> milli;                     // by GPU index
  std::map<int, std::vector<std::string>> holders;  // by GPU index, sorted
  std::map<std::string, int64_t> mig;               // by MIG resource
  std::map<std::string, std::vector<std::string>> mig_holders;
};

DeviceUse UseOf(const std::string& node,
                const std::map<std::string, PodAllocation, std::less<>>& pods,
                std::vector<std::string>& violations) {
  DeviceUse use;
  for (const auto& [key, pod] : pods) {
    std::set<int> seen;
    for (int id : pod.gpus.gpu_ids) {
      if (!seen.insert(id).second) {
        violations.push_back(absl::StrCat("node ", node, ": pod ", key,
                                          " holds GPU ", id, " twice"));
      }
      use.milli[id] += pod.gpus.milli_per_gpu;
      use.holders[id].push_back(key);
    }
    for (const auto& [resource, count] : pod.gpus.mig) {
      use.mig[resource] += count;
      use.mig_holders[resource].push_back(key);
    }
  }
  return use;
}

// A GPU a DRA claim holds while no pod of the model uses it, or that MIG
// partitions spent (gpu_inventory_dra.cc): the inventory's own hold.
bool HeldByDraOnly(const GpuDevice& device) {
  return !device.dra_name.empty() && device.free_milli == 0 &&
         device.holders.size() == 1 &&
         (device.holders[0].starts_with("claim ") ||
          device.holders[0].starts_with("partitioned "));
}

void CheckGpus(const std::string& node, const GpuInventory& gpus,
               const DeviceUse& use, std::vector<std::string>& violations) {
  for (const auto& [id, milli] : use.milli) {
    const std::string holders = absl::StrJoin(use.holders.at(id), ", ");
    if (id < 0 || id >= static_cast<int>(gpus.devices().size())) {
      violations.push_back(absl::StrCat("node ", node, ": GPU ", id,
                                        " does not exist, held by ", holders));
    } else if (milli > kMilliPerGpu) {
      violations.push_back(absl::StrCat("node ", node, ": GPU ", id,
                                        " held twice: ", milli,
                                        " milli taken by ", holders));
    }
  }
  for (const GpuDevice& device : gpus.devices()) {
    auto taken = use.milli.find(device.index);
    const int64_t milli = taken == use.milli.end() ? 0 : taken->second;
    std::vector<std::string> expected;
    if (auto h = use.holders.find(device.index); h != use.holders.end()) {
      expected = h->second;
    }
    if (milli == 0 && HeldByDraOnly(device)) continue;
    if (device.free_milli != kMilliPerGpu - milli ||
        device.holders != expected) {
      violations.push_back(
          absl::StrCat("node ", node, ": GPU ", device.index, " records ",
                       device.free_milli, " milli free held by [",
                       absl::StrJoin(device.holders, ", "), "], its pods take ",
                       milli, " by [", absl::StrJoin(expected, ", "), "]"));
    }
  }
}

// A MIG pool of a node whose devices a DRA driver publishes.
bool ServedByDra(const GpuInventory& gpus, const MigPool& pool) {
  return std::any_of(gpus.devices().begin(), gpus.devices().end(),
                     [](const GpuDevice& d) { return !d.dra_name.empty(); }) ||
         std::any_of(
             pool.holders.begin(), pool.holders.end(),
             [](const std::string& h) { return h.starts_with("claim "); });
}

void CheckMig(const std::string& node, const GpuInventory& gpus,
              const DeviceUse& use, std::vector<std::string>& violations) {
  for (const auto& [resource, count] : use.mig) {
    const MigPool* pool = gpus.FindMig(resource);
    const int64_t capacity = pool == nullptr ? 0 : pool->capacity;
    if (count > capacity) {
      violations.push_back(absl::StrCat(
          "node ", node, ": ", count, " ", resource, " held of ", capacity,
          " by ", absl::StrJoin(use.mig_holders.at(resource), ", ")));
    }
  }
  for (const MigPool& pool : gpus.mig_pools()) {
    auto taken = use.mig.find(pool.resource);
    const int64_t count = taken == use.mig.end() ? 0 : taken->second;
    // DRA claims (and partitions' spent counters) hold instances no pod of
    // the model takes: there, used may exceed the pods' count.
    const bool matches =
        ServedByDra(gpus, pool) ? pool.used >= count : pool.used == count;
    if (!matches || pool.used > pool.capacity) {
      violations.push_back(absl::StrCat(
          "node ", node, ": ", pool.resource, " records ", pool.used,
          " used of ", pool.capacity, ", its pods take ", count));
    }
  }
}

}  // namespace

std::vector<std::string> NodeDeviceViolations(
    const std::string& node, const GpuInventory& gpus,
    const std::map<std::string, PodAllocation, std::less<>>& pods) {
  std::vector<std::string> violations;
  const DeviceUse use = UseOf(node, pods, violations);
  CheckGpus(node, gpus, use, violations);
  CheckMig(node, gpus, use, violations);
  return violations;
}

std::vector<std::string> DeviceViolations(const ClusterModel& model) {
  std::vector<std::string> violations;
  size_t pods = 0;
  for (const NodeState* node : model.SortedNodes()) {
    Append(violations,
           NodeDeviceViolations(node->name(), node->gpus(), node->pods()));
    pods += node->pods().size();
    for (const auto& [key, pod] : node->pods()) {
      const PlacedPod* placed = model.FindPodByUid(pod.uid);
      if (placed == nullptr || placed->node != node->name()) {
        violations.push_back(absl::StrCat(
            "pod ", key, " is on node ", node->name(), " but indexed on ",
            placed == nullptr ? "no node" : placed->node));
      }
    }
  }
  if (pods != model.pod_count()) {
    violations.push_back(absl::StrCat(model.pod_count(),
                                      " pods indexed, the nodes hold ", pods));
  }
  return violations;
}

std::vector<std::string> QueueUsageViolations(
    const QuotaTree& quota, const std::map<std::string, Workload>& workloads) {
  std::vector<std::string> violations = quota.UsageMismatches();
  std::map<std::string, FrAmounts> charged;  // by ClusterQueue
  for (const auto& [key, w] : workloads) {
    if (!w.admitted() || !quota.HasClusterQueue(w.cluster_queue)) continue;
    for (const auto& [fr, amount] : w.charged) {
      charged[w.cluster_queue][fr] += amount;
    }
  }
  for (const std::string& cq : quota.ClusterQueueNames()) {
    const FrAmounts& sum = charged[cq];
    std::set<FlavorResource> resources;
    for (const auto& [fr, amount] : sum) resources.insert(fr);
    for (const auto& [fr, amount] : quota.UsageOf(cq)) resources.insert(fr);
    for (const FlavorResource& fr : resources) {
      auto it = sum.find(fr);
      const int64_t expected = it == sum.end() ? 0 : it->second;
      if (quota.Usage(cq, fr) != expected) {
        violations.push_back(absl::StrCat(
            "queue ", cq, " uses ", quota.Usage(cq, fr), " of ", Describe(fr),
            " but its admitted workloads are charged ", expected));
      }
    }
  }
  return violations;
}

std::vector<std::string> GangViolations(
    const std::map<std::string, Workload>& workloads, const GangTimers& timers,
    const SchedulerConfig& config, std::optional<int64_t> now) {
  std::vector<std::string> violations;
  for (const auto& [key, w] : workloads) {
    if (!w.admitted()) continue;
    const int placed =
        static_cast<int>(w.placements.size() + w.succeeded.size());
    if (placed >= w.min_member) continue;
    const std::optional<int64_t> grace_ends = timers.GraceEnds(config, w);
    if (grace_ends.has_value() && (!now.has_value() || *now < *grace_ends)) {
      continue;
    }
    violations.push_back(absl::StrCat(
        "workload ", key, " is admitted with ", w.placements.size(),
        " placements (", w.succeeded.size(), " succeeded) of minMember ",
        w.min_member,
        grace_ends.has_value()
            ? absl::StrCat(", its grace ended at ", *grace_ends, " ms")
            : ", and no grace counts"));
  }
  return violations;
}

std::vector<std::string> PlacementViolations(
    const std::map<std::string, Workload>& workloads, const ClusterModel& model,
    bool engine_owns_model) {
  std::vector<std::string> violations;
  std::map<std::string, std::string> placed_by;  // pod -> workload
  for (const auto& [key, w] : workloads) {
    for (const auto& [pod, placement] : w.placements) {
      auto [it, first] = placed_by.emplace(pod, key);
      if (!first) {
        violations.push_back(absl::StrCat("pod ", pod, " is placed by ",
                                          it->second, " and by ", key));
      }
      auto member = w.pods.find(pod);
      const PlacedPod* in_model =
          member == w.pods.end() ? nullptr
                                 : model.FindPodByUid(PodUid(member->second));
      const bool may_be_gone = !engine_owns_model && w.bound.contains(pod);
      if (in_model == nullptr ? !may_be_gone
                              : in_model->node != placement.node) {
        violations.push_back(
            absl::StrCat("workload ", key, " places ", pod, " on ",
                         placement.node, " but the model has it on ",
                         in_model == nullptr ? "no node" : in_model->node));
      }
    }
  }
  return violations;
}

QuotaExcess QuotaOverLimits(const QuotaTree& quota) {
  QuotaExcess excess;
  for (const QuotaTree::Overrun& over : quota.Overruns()) {
    excess[{over.node, over.fr}] = over.usage - over.limit;
  }
  return excess;
}

std::vector<std::string> QuotaLimitViolations(const QuotaTree& quota,
                                              const QuotaExcess* allowed) {
  std::vector<std::string> violations;
  for (const QuotaTree::Overrun& over : quota.Overruns()) {
    int64_t allowed_excess = 0;
    if (allowed != nullptr) {
      auto it = allowed->find({over.node, over.fr});
      if (it != allowed->end()) allowed_excess = it->second;
    }
    if (over.usage - over.limit <= allowed_excess) continue;
    violations.push_back(absl::StrCat(
        over.node, " uses ", over.usage, " of ", Describe(over.fr),
        ", over its limit of ", over.limit,
        allowed_excess > 0 ? absl::StrCat(" by more than the ", allowed_excess,
                                          " it was over before")
                           : ""));
  }
  return violations;
}

absl::Status CheckInvariants(const QueueingEngine& engine,
                             const ClusterModel& model,
                             const InvariantContext& context) {
  std::vector<std::string> violations = DeviceViolations(model);
  Append(violations, QueueUsageViolations(engine.quota(), engine.workloads()));
  Append(violations, GangViolations(engine.workloads(), engine.timers(),
                                    engine.policy().config, context.now));
  Append(violations, PlacementViolations(engine.workloads(), model,
                                         context.engine_owns_model));
  Append(violations,
         QuotaLimitViolations(engine.quota(), context.allowed_excess));
  if (violations.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrCat("invariant violated: ", absl::StrJoin(violations, "; ")));
}

void DieOnViolation(const absl::Status& status) {
  if (status.ok()) return;
  std::fprintf(stderr, "gpusched: %s\n", std::string(status.message()).c_str());
  std::abort();
}

}  // namespace gpusched
