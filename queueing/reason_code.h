// Why a workload is where it is, as one word: the same code goes into the
// filter's answer, the Events on its pods and PodGroup, and the PodGroup's
// status, so "why is my job pending?" has one answer everywhere. The
// sentence beside it carries the numbers; only a new code is news.
#ifndef GPUSCHED_QUEUEING_REASON_CODE_H_
#define GPUSCHED_QUEUEING_REASON_CODE_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace gpusched {

enum class ReasonCode : uint8_t {
  kNone,  // not waiting, or not looked at yet
  // Why a pending workload waits.
  kWaitingForQuota,        // its queue (and cohort) has not enough free now
  kExceedsMaxQuota,        // more than its queue could have even if idle
  kInsufficientGpus,       // quota fits, no nodes hold every member now
  kNoMatchingFlavor,       // no flavor of its queue can take it at all
  kTopologyUnsatisfiable,  // no domain of the required level holds it
  kGangIncomplete,         // fewer pods than minMember, or no PodGroup yet
  kPreempting,             // victims evicted, waiting for them to go
  // Admitted, not bound in time; rolled back (Kueue's eviction reason for
  // a workload whose pods were not ready within waitForPodsReady.timeout).
  kPodsReadyTimeout,
  // Rolled back by PodsReadyTimeout more often than backoffLimitCount
  // allows: deactivated (Kueue's reason).
  kRequeuingLimitExceeded,
  kBackingOff,  // a gang that did not complete waits to retry
  // A member's DRA claim quota cannot count as asked (allocationMode All,
  // an unmapped DeviceClass, ...): Kueue's reason for it.
  kInadmissible,
  kWaitingForResourceClaim,  // a claim or template a member names is unknown
  // The API server refused a write that carries out its admission (a
  // policy, a webhook): the admission was taken back.
  kAdmissionRefused,
  // Its PodGroup API cannot be listed (a broken conversion webhook, 5xx).
  kPodGroupApiUnavailable,
  // Quota reserved, waiting for its admission checks to be Ready (Kueue's
  // Admitted=False reason).
  kUnsatisfiedChecks,
  // An admission check in Retry (quota given back, requeued after its
  // backoff) or Rejected (deactivated): Kueue's eviction reason.
  kAdmissionCheck,
  // It fits, but waitForPodsReady.blockAdmission holds every admission
  // while an admitted workload's pods are not all bound (Kueue's reason).
  kWaitingForPodsReady,
  // What happened to it (Events, never a waiting state).
  kAdmitted,
  kPreempted,
  kEvicted,
  kFinished,
};

inline constexpr std::string_view ReasonCodeName(ReasonCode code) {
  switch (code) {
    case ReasonCode::kNone:
      return "";
    case ReasonCode::kWaitingForQuota:
      return "WaitingForQuota";
    case ReasonCode::kExceedsMaxQuota:
      return "ExceedsMaxQuota";
    case ReasonCode::kInsufficientGpus:
      return "InsufficientGPUs";
    case ReasonCode::kNoMatchingFlavor:
      return "NoMatchingFlavor";
    case ReasonCode::kTopologyUnsatisfiable:
      return "TopologyUnsatisfiable";
    case ReasonCode::kGangIncomplete:
      return "GangIncomplete";
    case ReasonCode::kPreempting:
      return "Preempting";
    case ReasonCode::kPodsReadyTimeout:
      return "PodsReadyTimeout";
    case ReasonCode::kRequeuingLimitExceeded:
      return "RequeuingLimitExceeded";
    case ReasonCode::kBackingOff:
      return "BackingOff";
    case ReasonCode::kInadmissible:
      return "Inadmissible";
    case ReasonCode::kWaitingForResourceClaim:
      return "WaitingForResourceClaim";
    case ReasonCode::kAdmissionRefused:
      return "AdmissionRefused";
    case ReasonCode::kPodGroupApiUnavailable:
      return "PodGroupAPIUnavailable";
    case ReasonCode::kUnsatisfiedChecks:
      return "UnsatisfiedChecks";
    case ReasonCode::kAdmissionCheck:
      return "AdmissionCheck";
    case ReasonCode::kWaitingForPodsReady:
      return "WaitingForPodsReady";
    case ReasonCode::kAdmitted:
      return "Admitted";
    case ReasonCode::kPreempted:
      return "Preempted";
    case ReasonCode::kEvicted:
      return "Evicted";
    case ReasonCode::kFinished:
      return "Finished";
  }
  return "";
}

// Codes a person must act on (the workload cannot fit as it is asked for,
// or lost what it had) are Warnings; waiting one's turn is Normal.
inline constexpr bool IsWarning(ReasonCode code) {
  switch (code) {
    case ReasonCode::kExceedsMaxQuota:
    case ReasonCode::kNoMatchingFlavor:
    case ReasonCode::kPodsReadyTimeout:
    case ReasonCode::kRequeuingLimitExceeded:
    case ReasonCode::kBackingOff:
    case ReasonCode::kInadmissible:
    case ReasonCode::kAdmissionRefused:
    case ReasonCode::kPodGroupApiUnavailable:
    case ReasonCode::kAdmissionCheck:
    case ReasonCode::kPreempted:
    case ReasonCode::kEvicted:
      return true;
    default:
      return false;
  }
}

// A code with its sentence ("queue team-a: needs 16 nvidia.com/gpu ...").
struct WaitReason {
  ReasonCode code = ReasonCode::kNone;
  std::string text;
  bool empty() const { return text.empty(); }
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_REASON_CODE_H_
