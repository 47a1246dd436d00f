// How a workload's status is told on its PodGroup, in the PodGroup's own
// kind: Volcano's phase and conditions, the coscheduling plugin's phase, or
// the native PodGroup's Admitted condition. The DecisionWriter's one way to
// write a group's status.
#ifndef GPUSCHED_API_CONTROLLER_PODGROUP_STATUS_WRITE_H_
#define GPUSCHED_API_CONTROLLER_PODGROUP_STATUS_WRITE_H_

#include "absl/status/statusor.h"
#include "api/kube/kube_client.h"
#include "api/kube/podgroup_status.h"
#include "queueing/queue_decision.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

absl::StatusOr<kube::PodGroupWriteResult> WriteGroupStatus(
    kube::KubeClient& client, PodGroup::Flavor flavor,
    const kube::PodGroupTarget& target, const WorkloadStatus& status,
    const kube::CallOptions& call);

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_PODGROUP_STATUS_WRITE_H_
