#include "scheduler/node_state.h"

#include <atomic>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/gpu_fit.h"

namespace gpusched {
namespace {

// Process-wide, so that no two states (of any model) ever share a value.
uint64_t NextGeneration() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

// On a DRA node gpusched's device sets are plans: kube-scheduler may
// allocate a pod's planned devices to another pod's claim before this
// pod's own claim is allocated. The pod still needs as many, so it gets
// the same count of free ones rather than nothing (which would let its
// GPUs look free until its claim arrives). Shares are not served by DRA.
std::optional<GpuAssignment> Replanned(const GpuAssignment& planned,
                                       const GpuInventory& gpus) {
  if (planned.milli_per_gpu != kMilliPerGpu && !planned.gpu_ids.empty()) {
    return std::nullopt;
  }
  GpuRequest request;
  request.gpus = static_cast<int>(planned.gpu_ids.size());
  request.mig = planned.mig;
  GpuPlan plan = PlanGpus(request, gpus);
  if (!plan.verdict.fits()) return std::nullopt;
  return std::move(plan.assignment);
}

}  // namespace

NodeState::NodeState(Node node)
    : node_(std::move(node)), gpus_(GpuInventory::FromNode(node_)) {
  RefreshQuickFacts();
}

void NodeState::RefreshQuickFacts() {
  generation_ = NextGeneration();
  const ResourceList& allocatable = node_.allocatable;
  quick_.cpu_allocatable = allocatable.Get(kCpu);
  quick_.memory_allocatable = allocatable.Get(kMemory);
  quick_.cpu_requested = requested_.Get(kCpu);
  quick_.memory_requested = requested_.Get(kMemory);
  quick_.max_pods = allocatable.Has(kPods) ? allocatable.Get(kPods) : -1;
  quick_.restricted = node_.unschedulable;
  for (const Taint& taint : node_.taints) {
    if (taint.effect == "NoSchedule" || taint.effect == "NoExecute") {
      quick_.restricted = true;
    }
  }
}

const PodAllocation* NodeState::FindPod(std::string_view key) const {
  auto it = pods_.find(key);
  return it == pods_.end() ? nullptr : &it->second;
}

absl::Status NodeState::AddPod(PodAllocation allocation) {
  if (pods_.contains(allocation.pod_key)) {
    return absl::AlreadyExistsError(absl::StrCat(
        "pod ", allocation.pod_key, " is already on node ", name()));
  }
  std::optional<GpuAssignment> claimed = gpus_.TakeClaimedBy(allocation.uid);
  if (claimed.has_value()) allocation.gpus = *std::move(claimed);
  if (absl::Status status = gpus_.Apply(allocation.gpus, allocation.pod_key);
      !status.ok()) {
    // TakeClaimedBy freed only what the claim held, so Apply of exactly
    // those cannot fail; anything else changed nothing.
    return status;
  }
  requested_.Add(allocation.requests);
  std::string key = allocation.pod_key;
  pods_.emplace(std::move(key), std::move(allocation));
  RefreshQuickFacts();
  return absl::OkStatus();
}

bool NodeState::RemovePod(std::string_view key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return false;
  gpus_.Release(it->second.gpus, it->second.pod_key);
  requested_.Subtract(it->second.requests);
  pods_.erase(it);
  RefreshQuickFacts();
  return true;
}

std::string NodeState::ReplaceNode(Node node) {
  node_ = std::move(node);
  gpus_ = GpuInventory::FromNode(node_);
  RefreshQuickFacts();
  std::string dropped;
  for (auto& [key, allocation] : pods_) {
    // A pod whose claims now hold GPUs here holds exactly those (its
    // planned ones were a guess: the DRA allocation is the driver's).
    std::optional<GpuAssignment> claimed = gpus_.TakeClaimedBy(allocation.uid);
    if (claimed.has_value()) allocation.gpus = *std::move(claimed);
    if (gpus_.Apply(allocation.gpus, key).ok()) continue;
    std::optional<GpuAssignment> replanned;
    if (!claimed.has_value() && node_.dra_devices != nullptr) {
      replanned = Replanned(allocation.gpus, gpus_);
    }
    if (replanned.has_value() && gpus_.Apply(*replanned, key).ok()) {
      allocation.gpus = *std::move(replanned);
      continue;
    }
    absl::StrAppend(&dropped, dropped.empty() ? "" : ", ", key);
    allocation.gpus = GpuAssignment{};
  }
  return dropped;
}

}  // namespace gpusched
