#ifndef GPUSCHED_API_CODEC_POD_ADMISSION_JSON_H_
#define GPUSCHED_API_CODEC_POD_ADMISSION_JSON_H_

// The wire side of admitting a pod (api/kube/pod_admission.h): what an
// admission needs to read of a Pod as the API server has it, and the merge
// patches that pin it to a node, lift the gate, mark and nominate it. The
// parts of the pod a patch must send back whole (other scheduling gates,
// nodeSelectorTerms) are kept as raw JSON, so that fields gpusched does not
// model survive the write verbatim.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/admission_checks.h"  // PodSetUpdate
#include "scheduler/k8s_objects.h"

namespace gpusched {

// One nodeSelectorTerm as raw JSON: its fields other than matchFields, and
// matchFields' entries.
struct AdmissionTerm {
  std::vector<std::pair<std::string, std::string>> fields;
  std::vector<std::string> match_fields;
  std::string pinned_node;  // node of a metadata.name In [node] entry
};

// What admission needs to know of a pod.
struct PodAdmissionView {
  std::string uid;
  std::string resource_version;
  std::string node_name;                 // spec.nodeName: bound
  std::string nominated;                 // status.nominatedNodeName
  std::string admitted_label;            // value of gpusched.io/admitted
  std::string assigned_node;             // gpusched.io/assigned-node
  bool gated = false;                    // a gate IsAdmissionGate names
  bool ended = false;                    // status.phase Succeeded or Failed
  std::vector<std::string> other_gates;  // raw JSON entries
  std::vector<AdmissionTerm> terms;      // required node affinity

  // The node every term pins the pod to, if they all name the same one.
  std::string PinnedNode() const;
};

// A Pod's JSON (a GET or PATCH answer). Errors are InvalidArgument naming
// the field: "Pod.spec.schedulingGates[1].name: expected string, got number".
absl::StatusOr<PodAdmissionView> DecodePodAdmissionView(std::string_view json);

// The same view of a pod a watch delivered (a gate is then only a name,
// and terms are written back from the decoded requirements).
PodAdmissionView PodAdmissionViewOf(const Pod& pod);

// Merge patch for a gated pod: every term narrowed to `node` (or one new
// term), our gate removed from spec.schedulingGates (the other gates sent
// whole), our label and annotation set, and `update`'s annotations and
// node selector entries added (a gated pod's nodeSelector may gain keys);
// resourceVersion as precondition.
std::string EncodeUngatePatch(const PodAdmissionView& pod,
                              std::string_view node,
                              const PodSetUpdate& update = {});
// Our label and annotation set to `node`, or removed when `node` is empty.
std::string EncodeAdmittedMarkPatch(std::string_view resource_version,
                                    std::string_view node);
// status.nominatedNodeName set to `node`, or removed when it is empty.
std::string EncodeNominationPatch(std::string_view resource_version,
                                  std::string_view node);

// Merge patch setting one label (no precondition: the label is ours).
std::string EncodeLabelPatch(std::string_view key, std::string_view value);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_POD_ADMISSION_JSON_H_
