// What the admission loop reads off a pod's admission state (the gate,
// label, annotation and pin that api/kube/pod_admission writes), shared by
// its files.
#ifndef GPUSCHED_API_CONTROLLER_ADMISSION_LOOP_INTERNAL_H_
#define GPUSCHED_API_CONTROLLER_ADMISSION_LOOP_INTERNAL_H_

#include <string>

#include "queueing/workload_types.h"
#include "scheduler/k8s_objects.h"

namespace gpusched::loop_internal {

// The pod still carries gpusched's scheduling gate: never admitted.
bool HasOurGate(const Pod& pod);
// The node gpusched admitted the pod on (its label and annotation), or "".
std::string AssignedNode(const Pod& pod);
// The node every required affinity term pins the pod to (matchFields
// metadata.name In [node], what admission writes when it lifts the gate),
// or "".
std::string PinnedNode(const Pod& pod);

}  // namespace gpusched::loop_internal

#endif  // GPUSCHED_API_CONTROLLER_ADMISSION_LOOP_INTERNAL_H_
