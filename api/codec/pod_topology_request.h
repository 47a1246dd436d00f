#ifndef GPUSCHED_API_CODEC_POD_TOPOLOGY_REQUEST_H_
#define GPUSCHED_API_CODEC_POD_TOPOLOGY_REQUEST_H_

// A pod's topology annotations into PodAdmissionState's topology fields:
// gpusched's own (gpusched.io/topology-required, -preferred) and Kueue's
// (kueue.x-k8s.io/podset-*-topology, podset-slice-size,
// podset-group-name), which mean the same levels. Kueue v0.19.2's rules
// (pkg/controller/jobframework/tas_validation.go, as its pod webhook
// applies them; v0.17.0's are the same) decide what is invalid: at most one
// of required, preferred and unconstrained; unconstrained a boolean; a
// slice level and a slice size of at least 1 only together; a group name
// that is no number, only with required or preferred and never with
// slices. gpusched adds: a slice size that does not divide a Kueue pod
// group's total count (or a single pod's 1), and a Kueue and a gpusched
// annotation that name different levels. Kueue's webhook refuses such a
// pod; gpusched's pod exists already when it reads it, so its workload
// waits with the reason (topology_invalid), naming the annotation.

#include "scheduler/k8s_objects.h"

namespace gpusched {

// Sets state's topology fields from meta's annotations; reads
// state.group_kind and state.declared_count (DecodeGroup runs first).
void DecodeTopologyRequest(const ObjectMeta& meta, PodAdmissionState& state);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_POD_TOPOLOGY_REQUEST_H_
