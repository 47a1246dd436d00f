#ifndef GPUSCHED_SCHEDULER_NODE_FIT_H_
#define GPUSCHED_SCHEDULER_NODE_FIT_H_

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

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_NODE_FIT_H_
