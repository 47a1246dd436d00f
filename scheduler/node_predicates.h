#ifndef GPUSCHED_SCHEDULER_NODE_PREDICATES_H_
#define GPUSCHED_SCHEDULER_NODE_PREDICATES_H_

#include <span>
#include <string_view>

#include "scheduler/fit_verdict.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"

namespace gpusched {

// The standard kube-scheduler predicates the engine evaluates itself, so
// that a gang plan (and the simulator) never relies on kube-scheduler having
// checked them: unschedulable, nodeSelector, required node affinity,
// taints/tolerations and resource fit for every non-GPU resource.
struct NodePredicate {
  std::string_view name;
  FitVerdict (*check)(const PodView& pod, const NodeState& node);
};

FitVerdict CheckDynamicResources(const PodView& pod, const NodeState& node);

// In evaluation order: the cheap, unresolvable checks first.
std::span<const NodePredicate> NodePredicates();

FitVerdict CheckUnschedulable(const PodView& pod, const NodeState& node);
FitVerdict CheckNodeSelector(const PodView& pod, const NodeState& node);
FitVerdict CheckNodeAffinity(const PodView& pod, const NodeState& node);
FitVerdict CheckTaints(const PodView& pod, const NodeState& node);
FitVerdict CheckResources(const PodView& pod, const NodeState& node);

// Helpers shared with the queueing core (flavor taints/tolerations).
bool Tolerates(const Toleration& toleration, const Taint& taint);
bool MatchesRequirement(const NodeSelectorRequirement& requirement,
                        const StringMap& labels);
// Every key of `wanted` is in `labels` with the same value (a nodeSelector,
// a flavor's nodeLabels).
bool HasLabels(const StringMap& labels, const StringMap& wanted);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_NODE_PREDICATES_H_
