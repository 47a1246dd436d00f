#include "scheduler/node_fit.h"

#include <bit>

#include "scheduler/gpu_fit.h"
#include "scheduler/node_predicates.h"

namespace gpusched {
namespace {

// NodeUnschedulable, NodeSelector, TaintToleration and NodeAffinity pass:
// the node is not restricted, the selector matches, there is no affinity.
// (DynamicResources is checked beside them: it is cheap to skip and has
// no quick form.)
bool QuickPredicatesPass(const PodView& pod, const NodeState& node) {
  if (node.quick().restricted || !pod.pod->required_affinity_terms.empty()) {
    return false;
  }
  return HasLabels(node.node().meta.labels, pod.pod->node_selector);
}

// NodeResourcesFit passes: only cpu and memory are asked for (besides GPUs)
// and both, and a pod slot, are free.
bool QuickResourcesFit(const PodView& pod, const NodeState& node) {
  const NodeState::QuickFacts& quick = node.quick();
  if (quick.max_pods >= 0 && node.pod_count() + 1 > quick.max_pods) {
    return false;
  }
  for (const auto& [name, want] : pod.requests.entries()) {
    if (want <= 0 || name == kPods || IsGpuResource(name)) continue;
    if (name == kCpu) {
      if (want > quick.cpu_allocatable - quick.cpu_requested) return false;
    } else if (name == kMemory) {
      if (want > quick.memory_allocatable - quick.memory_requested) {
        return false;
      }
    } else {
      return false;
    }
  }
  return true;
}

// PlanGpus fits: MIG pools with room, and whole GPUs on a plain node where
// any `gpus` free devices do (ChooseGpuSet only fails for too few).
bool QuickGpusFit(const GpuRequest& request, const GpuInventory& inventory) {
  for (const auto& [resource, count] : request.mig) {
    const MigPool* pool = inventory.FindMig(resource);
    if (pool == nullptr || pool->capacity < count ||
        pool->capacity - pool->used < count) {
      return false;
    }
    const std::string& state = inventory.labels().mig_config_state;
    if (!state.empty() && state != "success") return false;
  }
  if (request.milli > 0) return false;
  if (request.gpus <= 0) return true;
  if (inventory.time_shared() || request.require_nvlink) return false;
  int healthy = 0;
  int free = 0;
  for (const GpuDevice& d : inventory.devices()) {
    healthy += d.healthy ? 1 : 0;
    free += d.healthy && d.free_milli == kMilliPerGpu ? 1 : 0;
  }
  return healthy >= request.gpus && free >= request.gpus;
}

}  // namespace

FitVerdict CheckPodOnNode(const PodView& pod, const NodeState& node) {
  if (!pod.invalid_reason.empty() || !QuickPredicatesPass(pod, node) ||
      !QuickResourcesFit(pod, node)) {
    return FitPodOnNode(pod, node).verdict;
  }
  if (FitVerdict dra = CheckDynamicResources(pod, node); !dra.fits()) {
    return dra;
  }
  // Every predicate passes, so the GPU plan alone decides.
  if (QuickGpusFit(pod.gpu, node.gpus())) return FitVerdict::Fits();
  return PlanGpus(pod.gpu, node.gpus()).verdict;
}

FitVerdict CheckPodOnNode(const PodView& pod, const NodeState& node,
                          GpuVerdictMemo& memo) {
  const GpuRequest& request = pod.gpu;
  const GpuInventory& gpus = node.gpus();
  // Only plain whole-GPU plans: their verdict is a function of the key.
  if (!pod.invalid_reason.empty() || request.gpus <= 0 || request.milli > 0 ||
      !request.mig.empty() || request.require_nvlink || gpus.time_shared() ||
      gpus.devices().size() > 64 || !QuickPredicatesPass(pod, node) ||
      !QuickResourcesFit(pod, node)) {
    return CheckPodOnNode(pod, node);
  }
  if (FitVerdict dra = CheckDynamicResources(pod, node); !dra.fits()) {
    return dra;
  }
  GpuVerdictMemo::Key key{.product = gpus.labels().product};
  for (const GpuDevice& d : gpus.devices()) {
    if (d.index < 0 || d.index >= 64) return CheckPodOnNode(pod, node);
    if (d.healthy) key.healthy_mask |= uint64_t{1} << d.index;
    if (d.healthy && d.free_milli == kMilliPerGpu) {
      key.free_mask |= uint64_t{1} << d.index;
    }
  }
  if (std::popcount(key.free_mask) >= request.gpus) return FitVerdict::Fits();
  auto [it, inserted] = memo.verdicts.try_emplace(key, FitVerdict::Fits());
  if (inserted) it->second = PlanGpus(request, gpus).verdict;
  return it->second;
}

NodeFit FitPodOnNode(const PodView& pod, const NodeState& node) {
  if (!pod.invalid_reason.empty()) {
    return {FitVerdict::Infeasible(pod.invalid_reason)};
  }
  // The quick checks prove that every predicate passes; the GPU plan decides.
  const bool predicates_pass =
      QuickPredicatesPass(pod, node) && QuickResourcesFit(pod, node);
  for (const NodePredicate& predicate : NodePredicates()) {
    if (predicates_pass) break;
    FitVerdict verdict = predicate.check(pod, node);
    if (!verdict.fits()) return {std::move(verdict)};
  }
  if (predicates_pass) {
    if (FitVerdict dra = CheckDynamicResources(pod, node); !dra.fits()) {
      return {std::move(dra)};
    }
  }
  GpuPlan plan = PlanGpus(pod.gpu, node.gpus());
  return {std::move(plan.verdict), std::move(plan.assignment)};
}

}  // namespace gpusched
