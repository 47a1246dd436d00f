// Writes a PodGroup's status, so `kubectl get podgroup` tells what gpusched
// decided, for both PodGroup flavors gpusched reads:
//
// - Volcano, scheduling.volcano.sh/v1beta1: its CRD declares no status
//   subresource (`subresources: {}`; volcano-scheduler itself writes status
//   with a plain update), so the merge patch goes to the object itself,
//   carrying only `status`.
// - coscheduling, scheduling.x-k8s.io/v1alpha1: its CRD has a status
//   subresource, so the patch goes to .../podgroups/NAME/status (the main
//   resource would ignore a status change).
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
#include "api/kube/kube_client.h"

namespace gpusched::kube {

struct PodGroupTarget {
  std::string namespace_name;
  std::string name;
};

enum class VolcanoPhase { kPending, kInqueue, kRunning, kUnknown, kCompleted };

struct VolcanoCondition {
  enum class Type { kScheduled, kUnschedulable };
  Type type = Type::kUnschedulable;
  bool status = true;  // True / False
  std::string reason;  // one CamelCase word, e.g. NotEnoughResources
  std::string message;
  std::chrono::system_clock::time_point last_transition;
  std::string transition_id;  // empty: not sent
};

struct VolcanoStatus {
  VolcanoPhase phase = VolcanoPhase::kPending;
  // Every condition the group should carry: the list replaces the stored one.
  std::vector<VolcanoCondition> conditions;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
};

// The coscheduling phases. Current releases define Pending, Scheduling,
// Running, Unknown, Finished and Failed; PreScheduling and Scheduled are
// from older releases still deployed (the CRD's phase is a free string).
// There is no "Succeeded" phase: a group whose members all succeeded is
// Finished.
enum class CoschedulingPhase {
  kPending,
  kPreScheduling,
  kScheduling,
  kScheduled,
  kRunning,
  kUnknown,
  kFinished,
  kFailed,
};

struct CoschedulingStatus {
  CoschedulingPhase phase = CoschedulingPhase::kPending;
  // status.scheduled exists only in older releases' CRD; a current API
  // server prunes it, harmlessly. Unset: not sent.
  std::optional<int32_t> scheduled;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  // When gpusched started placing the group; unset: not sent.
  std::optional<std::chrono::system_clock::time_point> schedule_start_time;
};

enum class PodGroupWriteOutcome {
  kWritten,
  kGroupGone,  // 404: the group was deleted, or its CRD is not installed
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

// The merge patches, exposed for tests.
std::string VolcanoStatusPatch(const VolcanoStatus& status);
std::string CoschedulingStatusPatch(const CoschedulingStatus& status);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_PODGROUP_STATUS_H_
