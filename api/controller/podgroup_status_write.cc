#include "api/controller/podgroup_status_write.h"

#include <chrono>
#include <string>

#include "queueing/reason_code.h"

namespace gpusched {
namespace {

kube::VolcanoStatus VolcanoStatusOf(const WorkloadStatus& status) {
  kube::VolcanoStatus out{.running = status.bound};
  const auto now = std::chrono::system_clock::now();
  switch (status.phase) {
    case WorkloadPhase::kWaiting:
      out.phase = kube::VolcanoPhase::kPending;
      out.conditions.push_back(
          {.type = kube::VolcanoCondition::Type::kUnschedulable,
           .reason = std::string(ReasonCodeName(status.code)),
           .message = status.message,
           .last_transition = now});
      break;
    case WorkloadPhase::kAdmitted:
      out.phase = kube::VolcanoPhase::kInqueue;
      break;
    case WorkloadPhase::kRunning:
    case WorkloadPhase::kFinished:
      out.phase = status.phase == WorkloadPhase::kRunning
                      ? kube::VolcanoPhase::kRunning
                      : kube::VolcanoPhase::kCompleted;
      out.conditions.push_back(
          {.type = kube::VolcanoCondition::Type::kScheduled,
           .reason = std::string(ReasonCodeName(ReasonCode::kAdmitted)),
           .message = status.message,
           .last_transition = now});
      break;
  }
  return out;
}

// Admitted (True) from admission on, finished included; a waiting
// workload's condition is False with its wait code, or Pending before the
// engine gave it one (a condition's reason may not be empty).
kube::NativeAdmissionCondition NativeConditionOf(const WorkloadStatus& status) {
  const std::string_view code = ReasonCodeName(status.code);
  return {.admitted = status.phase != WorkloadPhase::kWaiting,
          .reason = code.empty() ? "Pending" : std::string(code),
          .message = status.message,
          .last_transition = std::chrono::system_clock::now()};
}

kube::CoschedulingStatus CoschedulingStatusOf(const WorkloadStatus& status) {
  kube::CoschedulingStatus out{.running = status.bound};
  switch (status.phase) {
    case WorkloadPhase::kWaiting:
      out.phase = kube::CoschedulingPhase::kPending;
      break;
    case WorkloadPhase::kAdmitted:
      out.phase = kube::CoschedulingPhase::kScheduling;
      out.schedule_start_time = std::chrono::system_clock::now();
      break;
    case WorkloadPhase::kRunning:
      out.phase = kube::CoschedulingPhase::kRunning;
      break;
    case WorkloadPhase::kFinished:
      out.phase = kube::CoschedulingPhase::kFinished;
      break;
  }
  return out;
}

}  // namespace

absl::StatusOr<kube::PodGroupWriteResult> WriteGroupStatus(
    kube::KubeClient& client, PodGroup::Flavor flavor,
    const kube::PodGroupTarget& target, const WorkloadStatus& status,
    const kube::CallOptions& call) {
  switch (flavor) {
    case PodGroup::Flavor::kVolcano:
      return kube::WriteVolcanoStatus(client, target, VolcanoStatusOf(status),
                                      call);
    case PodGroup::Flavor::kCoscheduling:
      return kube::WriteCoschedulingStatus(client, target,
                                           CoschedulingStatusOf(status), call);
    case PodGroup::Flavor::kNative:
      return kube::WriteNativeStatus(client, target, NativeConditionOf(status),
                                     call);
  }
  return absl::InternalError("unknown PodGroup flavor");
}

}  // namespace gpusched
