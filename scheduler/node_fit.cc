#include "scheduler/node_fit.h"

#include "scheduler/gpu_fit.h"
#include "scheduler/node_predicates.h"

namespace gpusched {

NodeFit FitPodOnNode(const PodView& pod, const NodeState& node) {
  if (!pod.invalid_reason.empty()) {
    return {FitVerdict::Infeasible(pod.invalid_reason)};
  }
  for (const NodePredicate& predicate : NodePredicates()) {
    FitVerdict verdict = predicate.check(pod, node);
    if (!verdict.fits()) return {std::move(verdict)};
  }
  GpuPlan plan = PlanGpus(pod.gpu, node.gpus());
  return {std::move(plan.verdict), std::move(plan.assignment)};
}

}  // namespace gpusched
