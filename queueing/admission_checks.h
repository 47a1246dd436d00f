// Kueue's admission checks on gpusched's workloads: a workload of a
// ClusterQueue with checks, once its quota fits, holds that quota
// reserved (its pods stay gated) with one state per check; Ready on every
// check admits it, Retry gives the quota back and requeues it after the
// ProvisioningRequestConfig's backoff, Rejected (or Retry past
// backoffLimitCount) deactivates it. The values and the rules that need no
// engine state live here; the admission cycle carries them out
// (admission_check_stage.cc).
#ifndef GPUSCHED_QUEUEING_ADMISSION_CHECKS_H_
#define GPUSCHED_QUEUEING_ADMISSION_CHECKS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "queueing/policy.h"
#include "queueing/quota_tree.h"

namespace gpusched {

// Kueue's CheckState (apis/kueue/v1beta2/admissioncheck_types.go).
enum class CheckState { kPending, kReady, kRetry, kRejected };

std::string_view CheckStateName(CheckState state);
// "Pending", "Ready", "Retry" or "Rejected"; nullopt for anything else.
std::optional<CheckState> ParseCheckState(std::string_view text);

// What a check's new state came to (QueueingEngine::SetCheckState).
enum class CheckUpdate {
  kUnknownWorkload,
  kNotRunning,  // no such check, or the workload holds no quota now
  kApplied,
  kRejected,  // Rejected, or Retry past backoffLimitCount: deactivated
};

// Kueue's PodSetUpdate as its provisioning controller fills it for a
// provisioned request (provisioning/controller.go podSetUpdates): what the
// workload's pods get when it is admitted. Kueue's type also has labels and
// tolerations, which that controller never sets.
struct PodSetUpdate {
  std::map<std::string, std::string> annotations;
  std::map<std::string, std::string> node_selector;
  bool empty() const { return annotations.empty() && node_selector.empty(); }
  friend bool operator==(const PodSetUpdate&, const PodSetUpdate&) = default;
};

// One check of a workload, as Kueue's AdmissionCheckState keeps it.
struct WorkloadCheck {
  std::string name;
  CheckState state = CheckState::kPending;
  std::string message;
  // Kueue's retryCount: evictions by this check's Retry so far; the next
  // ProvisioningRequest is attempt retry_count + 1.
  int retry_count = 0;
  // Set with Ready; cleared when the check starts again.
  PodSetUpdate update;
};

// The updates of every check, the first check (by name) winning a key two
// of them set (Kueue refuses such a conflict; the pods can take one value).
PodSetUpdate MergedPodSetUpdate(const std::vector<WorkloadCheck>& checks);

// Quota held while the checks run: charged to the quota tree during
// admission passes, so no other workload takes it, and not admitted.
struct CheckReservation {
  std::string cluster_queue;
  FrAmounts amounts;
  std::vector<std::string> flavors;  // the flavor of each resource group
  int64_t since_ms = 0;
};

// The checks of `cq` that run for a workload assigned `flavors`: those
// without onFlavors, and those naming one of them (Kueue's
// AdmissionChecksForWorkload), by name.
std::vector<std::string> ChecksForFlavors(
    const ClusterQueue& cq, const std::vector<std::string>& flavors);

// `checks` as they start a reservation: `names`, each Pending; a check the
// workload had keeps its retry count unless it was Ready (Kueue's
// resetChecksOnEviction drops the count of a check that was not Retry).
std::vector<WorkloadCheck> StartChecks(const std::vector<WorkloadCheck>& had,
                                       const std::vector<std::string>& names);

bool AllChecksReady(const std::vector<WorkloadCheck>& checks);

// The ProvisioningRequestConfig behind `check`, or nullptr.
const ProvisioningRequestConfig* ConfigOfCheck(const Policy& policy,
                                               const std::string& check);

// Kueue's reqIsNeeded: whether `check` asks for capacity for a workload
// whose members request `resources` (by name): always when its config
// manages every resource (managedResources empty), else when a member
// requests one it manages. A check that needs no request is Ready at once
// ("the provisioning request is not needed").
bool CheckNeedsRequest(const Policy& policy, const std::string& check,
                       const std::vector<std::string>& resources);
inline constexpr char kNoRequestNeeded[] =
    "the provisioning request is not needed";

// The retry strategy of the ProvisioningRequestConfig behind `check`;
// Kueue's defaults when the check or its config is not in the policy.
ProvisioningRetryStrategy RetryStrategyOf(const Policy& policy,
                                          const std::string& check);

// Whether a Retry of a check that has been retried `retry_count` times
// is one more retry (Kueue's provisioning controller: attempt <=
// backoffLimitCount) rather than Rejected.
bool RetryAllowed(const ProvisioningRetryStrategy& strategy, int retry_count);

// Kueue's UpdateAdmissionCheckRequeueState: the n-th retry waits
// base * 2^(n-1) seconds, capped at the maximum (no cap when 0); Kueue's
// jitter (0.0001 of it) is left out, so a simulation replays exactly.
int64_t CheckRetryBackoffMs(const ProvisioningRetryStrategy& strategy, int n);

// Kueue's buildAdmissionChecksMessage for the checks in `state`:
// `AdmissionCheck in Retry state: "prov" (message)`.
std::string ChecksInStateMessage(const std::vector<WorkloadCheck>& checks,
                                 CheckState state);

// The conditions of a ProvisioningRequest (autoscaling.x-k8s.io/v1) that
// are True, with the message of each, as its watch decodes them.
struct RequestConditions {
  // status.provisioningClassDetails, what podSetUpdates read values from.
  std::map<std::string, std::string> class_details;
  bool accepted = false;
  bool provisioned = false;
  bool failed = false;
  bool booking_expired = false;
  bool capacity_revoked = false;
  std::string provisioned_message;
  std::string failed_message;
  std::string booking_expired_message;
  std::string capacity_revoked_message;
};

// A check's new state and message from its request's conditions.
struct CheckVerdict {
  CheckState state = CheckState::kPending;
  std::string message;
};

// Kueue's syncCheckStates, first match wins: Failed -> Retry ("Retrying
// after failure: ..."; SetCheckState turns a Retry past backoffLimitCount
// into Rejected); CapacityRevoked -> Rejected (the nodes are gone, so the
// pods could never run there again); BookingExpired -> Retry while not
// admitted, nothing once admitted (the pods hold their nodes); Provisioned
// -> Ready; Accepted or nothing yet -> Pending. nullopt: leave the check
// as it is.
std::optional<CheckVerdict> CheckVerdictOfRequest(const RequestConditions& c,
                                                  bool admitted);

// Kueue's podSetUpdates for provisioned request `request` of `config`:
// annotations autoscaling.x-k8s.io/consume-provisioning-request (the
// request) and autoscaling.x-k8s.io/provisioning-class-name (its class),
// and each nodeSelector of the config's podSetUpdates valued from the
// request's provisioningClassDetails (one the details lack is skipped).
PodSetUpdate ProvisionedPodSetUpdate(
    const std::string& request, const ProvisioningRequestConfig& config,
    const std::map<std::string, std::string>& class_details);
inline constexpr char kConsumeProvisioningRequestAnnotation[] =
    "autoscaling.x-k8s.io/consume-provisioning-request";
inline constexpr char kProvisioningClassNameAnnotation[] =
    "autoscaling.x-k8s.io/provisioning-class-name";

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ADMISSION_CHECKS_H_
