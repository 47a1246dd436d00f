#ifndef GPUSCHED_SCHEDULER_K8S_OBJECTS_H_
#define GPUSCHED_SCHEDULER_K8S_OBJECTS_H_

// Plain domain views of the Kubernetes objects gpusched reads. Only the
// fields the scheduler uses are kept. Codecs in api/ fill these from JSON or
// YAML; nothing here knows about any wire format.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/gpu_topology.h"
#include "scheduler/resource_list.h"

namespace gpusched {

struct DraNodeDevices;  // dra_inventory.h
struct DraDemand;       // dra_demand.h

// Annotations and labels gpusched reads or writes.
inline constexpr char kGpuIdsAnnotation[] = "gpusched.io/gpu-ids";
// On nodes served by DRA, instead of kGpuIdsAnnotation: the devices
// gpusched planned ("gpu-0,gpu-3"); the claim's allocation is the truth.
inline constexpr char kPlannedGpusAnnotation[] = "gpusched.io/planned-gpus";
inline constexpr char kGpuMilliAnnotation[] = "gpusched.io/gpu-milli";
inline constexpr char kGpuTopologyAnnotation[] = "gpusched.io/gpu-topology";

// Labels and annotations are sorted maps so that every walk over them is
// deterministic.
using StringMap = std::map<std::string, std::string, std::less<>>;

struct ObjectMeta {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::string resource_version;
  StringMap labels;
  StringMap annotations;
  // metadata.creationTimestamp as Unix seconds; 0 when absent.
  int64_t creation_unix_seconds = 0;
  // metadata.deletionTimestamp is set: the object is going away (it may
  // linger while finalizers, such as a Job's, hold it).
  bool deleting = false;
};

struct Taint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | PreferNoSchedule | NoExecute
};

struct Toleration {
  std::string key;  // empty with operator Exists matches every key
  std::string op;   // "Equal" (default) | "Exists"
  std::string value;
  std::string effect;  // empty matches every effect
};

struct NodeSelectorRequirement {
  std::string key;
  std::string op;  // In | NotIn | Exists | DoesNotExist | Gt | Lt
  std::vector<std::string> values;
};

// One term of requiredDuringSchedulingIgnoredDuringExecution: all
// requirements must hold (AND); the terms themselves are ORed.
struct NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  // matchFields; Kubernetes supports only key "metadata.name".
  std::vector<NodeSelectorRequirement> match_fields;
};

struct Container {
  std::string name;
  ResourceList requests;
  ResourceList limits;
};

// status.phase. The API server sets Pending when it creates a pod, so a pod
// read without a phase is Pending; a name Kubernetes does not define reads
// as kUnknown (as does its own "Unknown").
enum class PodPhase { kPending, kRunning, kSucceeded, kFailed, kUnknown };

// Kubernetes' names ("Pending", "Running", ...) both ways, so the strings
// are read and written in one place.
PodPhase PodPhaseFromName(std::string_view name);
std::string_view PodPhaseName(PodPhase phase);

// How a pod asks to be admitted, and what gpusched's admission already did
// to it, as api/codec decoded them from its labels, annotations, scheduling
// gates, node affinity and native PodGroup (ReadPodAdmissionState in
// api/codec/pod_admission_state.h, which names the keys). Decoded once,
// where the pod is read, so that the queueing domain and the admission loop
// read fields rather than parse strings: Node::gpu_topology is the same for
// a node. A Pod built by hand has it empty: no queue, no gang, not admitted.
struct PodAdmissionState {
  // The gang key the pod carries; with several, the first in this order.
  enum class GroupKind { kNone, kNative, kKueue, kVolcano, kCoscheduling };

  // The LocalQueue's name; unset without the queue label. A label that is
  // present but empty still makes the pod gpusched's, outside any queue.
  std::optional<std::string> queue_name;
  std::string priority_class;  // a WorkloadPriorityClass name; "" without
  GroupKind group_kind = GroupKind::kNone;
  std::string group_name;  // the gang's name in the pod's namespace
  // The Kueue pod group's declared size; 0 when not given, not a number, or
  // the gang is not Kueue's (the others' size is their PodGroup's).
  int declared_count = 0;
  // Node label keys of the topology level the gang must, or would rather,
  // be placed within; "" without.
  std::string topology_required;
  std::string topology_preferred;
  // Kueue's slices: every topology_slice_size members (in placement order)
  // share one domain of the level topology_slice_level; 0 and "" without.
  std::string topology_slice_level;
  int topology_slice_size = 0;
  // Why the pod's topology annotations cannot be honoured, naming the
  // annotation; "" when they can. Its workload waits while it is set.
  std::string topology_invalid;
  // The pod carries gpusched's scheduling gate, or one of Kueue's (read as
  // gpusched's once Kueue is gone): it was never admitted (admission lifts
  // the gate).
  bool gated_by_us = false;
  // The node gpusched's admission marked it for (label and annotation), or
  // "".
  std::string admitted_node;
  // The node every required affinity term pins it to (matchFields
  // metadata.name In [node], what admission writes when it lifts the gate);
  // "" when a term pins none or two terms pin different nodes.
  std::string pinned_node;
};

// How long a pod may run, as the forecast of when queued work starts reads
// it; api/codec decodes both where it reads the pod.
struct RuntimeHint {
  // gpusched.io/expected-runtime: the user's estimate ("2h", "45m").
  // Unset without the annotation, or when it is no positive duration (then
  // `rejected` says why, for the forecast to tell).
  std::optional<int64_t> expected_ms;
  std::string rejected;
  // spec.activeDeadlineSeconds: the kubelet ends the pod by then, counted
  // from its start, so it is an upper bound on its runtime.
  std::optional<int64_t> deadline_ms;
};

// A ResourceClaim the pod names in spec.resourceClaims, and the claim
// that stands for it once made (status.resourceClaimStatuses: the
// resourceclaim controller makes one from a template).
struct PodClaimRef {
  std::string name;               // the pod's own name for it
  std::string claim_name;         // resourceClaimName, or ""
  std::string template_name;      // resourceClaimTemplateName, or ""
  std::string status_claim_name;  // from status, "" until made or unknown

  // The ResourceClaim's name in the pod's namespace, "" until known.
  const std::string& ResolvedClaimName() const {
    return claim_name.empty() ? status_claim_name : claim_name;
  }
};

// Why quota cannot charge a pod's resource claims (DRA) as they stand: the
// queueing core holds the pod's workload while it is set, so that no claim
// runs devices its queue is not charged for (scheduler/dra_quota.h).
struct ClaimHold {
  enum class Kind : uint8_t {
    kNone,
    // A claim or template the pod names is not known yet: it waits for it.
    kClaimNotKnown,
    // A request quota cannot count (allocationMode All, an unmapped
    // DeviceClass, ...): it waits until the claim or the mapping changes.
    kInadmissible,
  };
  Kind kind = Kind::kNone;
  // Names the claim or template and the field path ("ResourceClaimTemplate
  // ml/all: spec.spec.devices.requests[0].exactly.allocationMode: ...").
  std::string reason;

  bool held() const { return kind != Kind::kNone; }
  friend bool operator==(const ClaimHold&, const ClaimHold&) = default;
};

struct Pod {
  ObjectMeta meta;
  std::vector<Container> containers;
  std::vector<Container> init_containers;
  ResourceList overhead;
  std::string node_name;  // spec.nodeName: set once bound
  std::string scheduler_name;
  StringMap node_selector;
  std::vector<NodeSelectorTerm> required_affinity_terms;
  std::vector<Toleration> tolerations;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  PodPhase phase = PodPhase::kPending;
  // status.startTime as Unix seconds (the kubelet accepted the pod); 0
  // when absent.
  int64_t start_unix_seconds = 0;
  std::string nominated_node_name;
  // spec.schedulingGates' names: kube-scheduler leaves a gated pod alone.
  std::vector<std::string> scheduling_gates;
  // spec.schedulingGroup.podGroupName: the native PodGroup
  // (scheduling.k8s.io, KEP-4671) the pod is a member of; "" without.
  std::string pod_group_name;
  // The fields above (labels, annotations, gates, affinity, PodGroup) as
  // admission reads them. Whoever changes those fields of a decoded pod decodes
  // this again (ReadPodAdmissionState).
  PodAdmissionState admission;
  RuntimeHint runtime;
  // spec.resourceClaims (DRA), with their claims' names from status.
  std::vector<PodClaimRef> resource_claims;
  // status.extendedResourceClaimStatus.resourceClaimName: the claim
  // kube-scheduler made for extended resources served by DRA (KEP-5004).
  std::string extended_resource_claim;
  // What its resource claims ask for, in the names quota counts them by
  // (deviceClassMappings: 2 devices of class gpu.nvidia.com are
  // nvidia.com/gpu: 2), so that quota, gangs and placement treat them as
  // device-plugin requests. Not from the Pod object: the sync attaches it
  // (ClaimRequests, scheduler/dra_quota.h); EffectiveRequests adds it.
  ResourceList claim_requests;
  // Set when the claims cannot be charged as they stand (attached with
  // claim_requests by the sync).
  ClaimHold claim_hold;
  // What its claims ask that the charged count does not say (selectors of
  // the request's own, tolerations, alternatives, a claim allocated on a
  // node, a claim not made yet): the filter checks it against each node's
  // DRA devices (FitDraDemand). Attached by the sync; null when none.
  std::shared_ptr<const DraDemand> dra_demand;

  // "namespace/name", the key used everywhere a pod is named.
  std::string Key() const;
};

struct Node {
  ObjectMeta meta;
  bool unschedulable = false;
  std::vector<Taint> taints;
  ResourceList capacity;
  ResourceList allocatable;
  // The kGpuTopologyAnnotation as api/codec read it: unset without the
  // annotation, else the topology or why it was rejected.
  std::optional<absl::StatusOr<GpuTopology>> gpu_topology;
  // The devices DRA drivers publish for this node (ResourceSlices), as
  // the controller's DraSync counted them; null where none do. Not from
  // the Node object: the sync attaches it.
  std::shared_ptr<const DraNodeDevices> dra_devices;
};

// Requests as Kubernetes computes them for scheduling: per resource, the
// max of (each init container) and (sum of app containers), plus overhead.
// A container resource with a limit but no request requests its limit, as
// the API server's defaulting does.
ResourceList EffectiveRequests(const Pod& pod);

// True for pods whose resources are no longer held (Succeeded or Failed).
bool IsTerminal(const Pod& pod);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_K8S_OBJECTS_H_
