#ifndef GPUSCHED_API_KUBE_ADMISSION_PATCH_H_
#define GPUSCHED_API_KUBE_ADMISSION_PATCH_H_

#include "absl/status/status.h"
#include "api/kube/kube_client.h"
#include "queueing/queue_gate.h"

namespace gpusched::kube {

// Tells the API server a member pod was admitted: the label
// gpusched.io/admitted=true (its change makes kube-scheduler requeue the
// pod at once instead of waiting for the unschedulable flush), the
// annotation gpusched.io/assigned-node, and status.nominatedNodeName (the
// nominated node is evaluated first, so the assigned node is found even
// when kube-scheduler samples only a share of the nodes).
absl::Status ApplyAdmissionPatch(KubeClient& client, const AdmissionPatch& patch);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_ADMISSION_PATCH_H_
