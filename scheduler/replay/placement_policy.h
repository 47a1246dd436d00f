#ifndef GPUSCHED_SCHEDULER_REPLAY_PLACEMENT_POLICY_H_
#define GPUSCHED_SCHEDULER_REPLAY_PLACEMENT_POLICY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/replay/replay_cluster.h"

namespace gpusched::replay {

// Where a pod goes: a node it fits and the GPUs it takes there.
struct Choice {
  int node = -1;
  GpuAssignment gpus;
};

// How a replay picks a node for each arriving pod. One instance per replay.
class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  // Called once per arriving pod, before Choose, placed or not: what a live
  // scheduler learns from the pods it is asked about.
  virtual void Observe(const ReplayPod& pod) { (void)pod; }
  // A node the pod fits (ReplayCluster::Fits) and its GPUs; nullopt when
  // it fits none.
  virtual std::optional<Choice> Choose(const ReplayPod& pod,
                                       const ReplayCluster& cluster) = 0;
};

// The policy names trace-replay accepts, in report order.
std::span<const std::string_view> PolicyNames();

// `default` (the live extender's ScoringWeights::Defaults() and scorers),
// or a baseline of the FGD paper: random, bestfit, dotprod, packing.
// `shape_count` is ReplayPods::shape_count() (for score caches); `seed`
// feeds `random`.
absl::StatusOr<std::unique_ptr<PlacementPolicy>> MakePolicy(
    std::string_view name, int shape_count, uint64_t seed);

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_PLACEMENT_POLICY_H_
