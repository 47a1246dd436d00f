#ifndef GPUSCHED_SCHEDULER_NODE_FIT_H_
#define GPUSCHED_SCHEDULER_NODE_FIT_H_

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "scheduler/fit_verdict.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"

namespace gpusched {

// A pod on a node: the verdict and, when it fits, the devices it would get.
struct NodeFit {
  FitVerdict verdict = FitVerdict::Fits();
  GpuAssignment assignment;
};

// Steps: 1. a malformed pod fails everywhere (unresolvable); 2. the standard
// predicates in NodePredicates() order; 3. the GPU plan. The first failure
// is the verdict.
NodeFit FitPodOnNode(const PodView& pod, const NodeState& node);

// FitPodOnNode(pod, node).verdict, for callers that need only the verdict
// (filter): the common case of a plain pod that fits is proven by a quick
// check on cached amounts and free-GPU counts, without choosing devices or
// formatting anything; every other case takes FitPodOnNode itself, so the
// verdicts and reasons are the same by construction.
FitVerdict CheckPodOnNode(const PodView& pod, const NodeState& node);

// Whole-GPU verdicts of one pod remembered by everything they depend on
// (healthy and free GPUs, product), so that the failing nodes of one filter
// call share the formatting of their reasons. For one pod and one model
// snapshot only: create it per request, under the model's lock.
class GpuVerdictMemo {
 public:
  struct Key {
    uint64_t healthy_mask = 0;
    uint64_t free_mask = 0;
    std::string_view product;  // points into the node; lives with the lock
    friend bool operator==(const Key&, const Key&) = default;
    template <typename H>
    friend H AbslHashValue(H h, const Key& k) {
      return H::combine(std::move(h), k.healthy_mask, k.free_mask, k.product);
    }
  };
  absl::flat_hash_map<Key, FitVerdict> verdicts;
};

// CheckPodOnNode with `memo` for the failing whole-GPU plans.
FitVerdict CheckPodOnNode(const PodView& pod, const NodeState& node,
                          GpuVerdictMemo& memo);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_NODE_FIT_H_
