#ifndef GPUSCHED_SCHEDULER_FIT_SIGNATURE_H_
#define GPUSCHED_SCHEDULER_FIT_SIGNATURE_H_

#include <string>

#include "scheduler/pod_view.h"

namespace gpusched {

// Everything about a pod that a filter verdict reads: the malformed-pod
// reason, effective requests, GPU request, nodeSelector, required node
// affinity and tolerations (NodePredicates() and PlanGpus read nothing
// else of the pod). Two pods with equal signatures get the same verdict and
// reason on every node, so verdicts can be remembered per signature. A
// predicate that starts reading another pod field must add it here.
std::string FitSignature(const PodView& pod);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_FIT_SIGNATURE_H_
