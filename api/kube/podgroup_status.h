// Writes a PodGroup's status, so `kubectl get podgroup` tells what gpusched
// decided, for the three PodGroup flavors gpusched reads:
//
// - Volcano, scheduling.volcano.sh/v1beta1: its CRD declares no status
//   subresource (`subresources: {}`; volcano-scheduler itself writes status
//   with a plain update), so the merge patch goes to the object itself,
//   carrying only `status`.
// - coscheduling, scheduling.x-k8s.io/v1alpha1: its CRD has a status
//   subresource, so the patch goes to .../podgroups/NAME/status (the main
//   resource would ignore a status change).
// - native, scheduling.k8s.io/v1beta1 (KEP-4671): status has no phase or
//   counts, only conditions (a list keyed by type) and resource claims.
//   kube-scheduler owns PodGroupInitiallyScheduled and DisruptionTarget;
//   gpusched sets its own condition, gpusched.io/Admitted, with a strategic
//   merge patch to .../podgroups/NAME/status that leaves the others alone.
//
// Field names follow the CRDs (volcano-sh/apis pkg/apis/scheduling/v1beta1,
// kubernetes-sigs/scheduler-plugins apis/scheduling/v1alpha1). A merge
// patch replaces lists: Volcano conditions are sent whole.
#ifndef GPUSCHED_API_KUBE_PODGROUP_STATUS_H_
#define GPUSCHED_API_KUBE_PODGROUP_STATUS_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "api/codec/podgroup_status_json.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {

struct PodGroupTarget {
  std::string namespace_name;
  std::string name;
};

// The statuses written (api/codec/podgroup_status_json.h).
using ::gpusched::CoschedulingPhase;
using ::gpusched::CoschedulingStatus;
using ::gpusched::NativeAdmissionCondition;
using ::gpusched::VolcanoCondition;
using ::gpusched::VolcanoPhase;
using ::gpusched::VolcanoStatus;

enum class PodGroupWriteOutcome {
  kWritten,
  kGroupGone,  // 404: the group was deleted, or its API is not served
};

struct PodGroupWriteResult {
  PodGroupWriteOutcome outcome;
  std::string message;
};

absl::StatusOr<PodGroupWriteResult> WriteVolcanoStatus(
    KubeClient& client, const PodGroupTarget& group,
    const VolcanoStatus& status, const CallOptions& call = {});

absl::StatusOr<PodGroupWriteResult> WriteCoschedulingStatus(
    KubeClient& client, const PodGroupTarget& group,
    const CoschedulingStatus& status, const CallOptions& call = {});

absl::StatusOr<PodGroupWriteResult> WriteNativeStatus(
    KubeClient& client, const PodGroupTarget& group,
    const NativeAdmissionCondition& condition, const CallOptions& call = {});

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_PODGROUP_STATUS_H_
