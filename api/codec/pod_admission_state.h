#ifndef GPUSCHED_API_CODEC_POD_ADMISSION_STATE_H_
#define GPUSCHED_API_CODEC_POD_ADMISSION_STATE_H_

// A pod's labels, annotations, scheduling gates, required node affinity and
// native PodGroup into the domain's PodAdmissionState
// (scheduler/k8s_objects.h): which queue, priority class, gang and topology it
// asks for, and whether gpusched's admission gated, marked or pinned it. The
// keys live here, with the one reader of them; api/kube/pod_admission writes
// the admission's label, annotation and gate under the same keys.

#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// Kueue: the LocalQueue a pod is queued in, and its WorkloadPriorityClass.
inline constexpr char kQueueNameLabel[] = "kueue.x-k8s.io/queue-name";
inline constexpr char kPriorityClassLabel[] = "kueue.x-k8s.io/priority-class";
// The three ways pods' labels and annotations say they make a gang: Kueue's
// pod group (with its size), Volcano's group annotation, the coscheduling
// plugin's label. The fourth, the native PodGroup, is a spec field
// (Pod::pod_group_name), and goes before them.
inline constexpr char kKueueGroupLabel[] = "kueue.x-k8s.io/pod-group-name";
inline constexpr char kKueueGroupCountAnnotation[] =
    "kueue.x-k8s.io/pod-group-total-count";
inline constexpr char kVolcanoGroupAnnotation[] =
    "scheduling.k8s.io/group-name";
inline constexpr char kCoschedulingGroupLabel[] =
    "scheduling.x-k8s.io/pod-group";
// The node label key of the level a gang must, or would rather, share.
inline constexpr char kTopologyRequiredAnnotation[] =
    "gpusched.io/topology-required";
inline constexpr char kTopologyPreferredAnnotation[] =
    "gpusched.io/topology-preferred";
// Kueue's topology-aware scheduling annotations, read as gpusched's own
// (api/codec/pod_topology_request.h says how).
inline constexpr char kKueueRequiredTopologyAnnotation[] =
    "kueue.x-k8s.io/podset-required-topology";
inline constexpr char kKueuePreferredTopologyAnnotation[] =
    "kueue.x-k8s.io/podset-preferred-topology";
inline constexpr char kKueueUnconstrainedTopologyAnnotation[] =
    "kueue.x-k8s.io/podset-unconstrained-topology";
inline constexpr char kKueueSliceTopologyAnnotation[] =
    "kueue.x-k8s.io/podset-slice-required-topology";
inline constexpr char kKueueSliceSizeAnnotation[] =
    "kueue.x-k8s.io/podset-slice-size";
inline constexpr char kKueuePodSetGroupAnnotation[] =
    "kueue.x-k8s.io/podset-group-name";
// What gpusched's admission writes: the label and annotation that mark a
// pod admitted on a node, and the scheduling gate its webhook puts on its
// pods, which admission removes (kube-scheduler leaves gated pods alone).
inline constexpr char kAdmittedLabel[] = "gpusched.io/admitted";
// A user's estimate of the pod's (or its PodGroup's) runtime: a duration.
inline constexpr char kExpectedRuntimeAnnotation[] =
    "gpusched.io/expected-runtime";
inline constexpr char kAssignedNodeAnnotation[] = "gpusched.io/assigned-node";
inline constexpr char kAdmissionGate[] = "gpusched.io/admission";
// Kueue's pod integration gates its pods with these two (the second with
// topology-aware scheduling). gpusched reads them as its own: once Kueue's
// manager is stopped (gpusched decides nothing before: kube/kueue_guard.h),
// only gpusched lifts them, so a pod Kueue held is queued and released on
// admission like one gpusched gated itself (README, "Switching from
// Kueue").
inline constexpr char kKueueAdmissionGate[] = "kueue.x-k8s.io/admission";
inline constexpr char kKueueTopologyGate[] = "kueue.x-k8s.io/topology";

// Whether a scheduling gate is one gpusched's admission lifts.
bool IsAdmissionGate(std::string_view gate);

// Kueue's pod webhook labels the pods it manages so.
inline constexpr char kKueueManagedLabel[] = "kueue.x-k8s.io/managed";

// A pod Kueue admitted that no node has bound yet: Kueue manages it, and
// has lifted its gates (it lifts them on admission only).
bool IsAdmittedByKueue(const Pod& pod);

// The admission state `pod`'s labels, annotations, gates and affinity say.
// Empty values count as absent, except the queue label's (see
// PodAdmissionState::queue_name); a group size that is not a number is 0.
PodAdmissionState DecodePodAdmissionState(const Pod& pod);

// Sets pod.admission from the pod's own fields. Every decoder of a Pod
// calls it, so the domain never reads those strings; code that changes the
// fields of a decoded pod calls it again.
// It also sets pod.runtime.expected_ms from kExpectedRuntimeAnnotation.
void ReadPodAdmissionState(Pod& pod);

// kExpectedRuntimeAnnotation's value in ms: a positive Go-style duration
// ("45m", "2h30m"), else an error saying so.
absl::StatusOr<int64_t> ParseExpectedRuntimeMs(std::string_view text);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_POD_ADMISSION_STATE_H_
