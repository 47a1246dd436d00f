#ifndef GPUSCHED_API_CODEC_PODGROUP_STATUS_JSON_H_
#define GPUSCHED_API_CODEC_PODGROUP_STATUS_JSON_H_

// The status patches of Volcano, coscheduling and native PodGroups
// (api/kube/podgroup_status.h writes them).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

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

// gpusched's condition on a native PodGroup (scheduling.k8s.io/v1beta1).
// kube-scheduler owns the API's own condition types,
// PodGroupInitiallyScheduled and DisruptionTarget, and sets them from its
// own cycle; gpusched's verdict goes beside them under a type of its own
// domain, so neither writer overwrites the other.
inline constexpr char kNativeAdmissionCondition[] = "gpusched.io/Admitted";

struct NativeAdmissionCondition {
  bool admitted = false;  // status True / False
  std::string reason;     // one CamelCase word: a reason code's name
  std::string message;
  std::chrono::system_clock::time_point last_transition;
};

std::string EncodeVolcanoStatusPatch(const VolcanoStatus& status);
// A strategic merge patch: the API's conditions are a list keyed by type,
// so it sets gpusched's condition and leaves the others as they are (a
// merge patch would replace the whole list, kube-scheduler's too).
std::string EncodeNativeStatusPatch(const NativeAdmissionCondition& c);
std::string EncodeCoschedulingStatusPatch(const CoschedulingStatus& status);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_PODGROUP_STATUS_JSON_H_
