// Carries two of the queueing core's decisions out to the API server:
// "admit this member pod on node N" and "clear a rolled-back admission".
//
// A pod that carries the scheduling gate gpusched.io/admission (added by
// gpusched's mutating webhook) is admitted by pinning it to the node and
// lifting the gate in one write; kube-scheduler then places it there at
// once. A pod without the gate falls back to the label + nominatedNodeName
// path, which only steers kube-scheduler.
//
// Outcomes are values (AdmitResult, ClearResult); an absl::Status is a fault:
// a transport error, an answer the API server should not give, or a write
// that still conflicted after kMaxAdmitAttempts tries.
#ifndef GPUSCHED_API_KUBE_POD_ADMISSION_H_
#define GPUSCHED_API_KUBE_POD_ADMISSION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/codec/pod_admission_state.h"  // kAdmissionGate
#include "api/kube/kube_client.h"
#include "queueing/admission_checks.h"  // PodSetUpdate
#include "scheduler/k8s_objects.h"

namespace gpusched::kube {

// How often Admit re-reads the pod after a 409 (another writer changed it
// between our GET and our PATCH: kubelet, a controller, kube-scheduler).
inline constexpr int kMaxAdmitAttempts = 4;

// One pod. An empty uid matches any pod of that name; a set uid makes a pod
// recreated under the same name count as gone.
struct PodTarget {
  std::string namespace_name;
  std::string name;
  std::string uid;
};

enum class AdmitOutcome {
  kUngated,          // gate lifted, required node affinity pins the node
  kNominated,        // no gate: label, annotation and nominatedNodeName set
  kAlreadyAdmitted,  // the pod already says so: nothing was written
  kPodGone,          // 404, or another pod (uid) under that name
  kNodeConflict,     // bound to, or pinned by an earlier admission to,
                     // another node: this admission cannot take effect
};

struct AdmitResult {
  AdmitOutcome outcome;
  std::string message;  // for logs and explanations
};

// Admits `pod` on `node`. Writes with the pod's resourceVersion as a
// precondition; a 409 re-reads the pod and tries again. The first write is
// made against `watched` (the pod as a watch last delivered it) when it is
// given and has the target's uid, else against a pod read first.
//
// Gated pod, one merge patch: the required node affinity gains a
// matchFields requirement metadata.name In [node] in every existing
// nodeSelectorTerm (the API server only lets a gated pod's required
// affinity narrow; every other requirement is kept verbatim) or in a new
// term; our gate leaves spec.schedulingGates (other gates stay); label
// gpusched.io/admitted=true and annotation gpusched.io/assigned-node=node.
//
// Pod without the gate: the label and annotation, then status
// nominatedNodeName (the label change makes kube-scheduler requeue the pod
// at once; the nominated node is evaluated first, so the node is found
// even when kube-scheduler samples only a share of the nodes).
// A gated pod also gets `update` (EncodeUngatePatch); an ungated one
// does not.
absl::StatusOr<AdmitResult> AdmitPod(KubeClient& client, const PodTarget& pod,
                                     std::string_view node,
                                     const CallOptions& call = {},
                                     const Pod* watched = nullptr,
                                     const PodSetUpdate& update = {});

enum class ClearOutcome {
  kCleared,
  kPodGone,  // nothing to clear: 404 or another pod under that name
};

struct ClearResult {
  ClearOutcome outcome;
  std::string message;
};

// Removes the admitted label, the assigned-node annotation and
// status.nominatedNodeName, with the pod's uid (when set) as precondition;
// `watched` as for AdmitPod.
// An ungated pod keeps its node affinity and stays ungated: Kubernetes
// allows neither to be undone, so a later admission of it must name the
// same node (else AdmitPod answers kNodeConflict).
absl::StatusOr<ClearResult> ClearAdmission(KubeClient& client,
                                           const PodTarget& pod,
                                           const CallOptions& call = {},
                                           const Pod* watched = nullptr);

// Where a pod stands for a revocation, read fresh from the API server:
// gone (or another pod under its name), ended (Succeeded or Failed: its
// work is done or lost, nothing to evict), still behind gpusched's gate
// (its admission never landed: it never ran), or ungated.
struct PodState {
  enum class Kind { kGone, kEnded, kGated, kUngated };
  Kind kind = Kind::kGone;
  std::string resource_version;  // of the reading, for a precondition
};
absl::StatusOr<PodState> ReadPodState(KubeClient& client, const PodTarget& pod,
                                      const CallOptions& call = {});

std::string_view AdmitOutcomeName(AdmitOutcome outcome);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_POD_ADMISSION_H_
