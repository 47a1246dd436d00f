#include "api/kube/eviction.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

// The API server's words after the client's "<what>: HTTP <code>: " prefix
// (see StatusFromHttp), which the caller already knows.
std::string ServerMessage(const absl::Status& status) {
  std::string_view message = Message(status);
  const size_t http = message.find(": HTTP ");
  if (http == std::string_view::npos) return std::string(message);
  const size_t after = message.find(": ", http + 2);
  return std::string(
      after == std::string_view::npos ? message : message.substr(after + 2));
}

}  // namespace

absl::StatusOr<EvictionResult> EvictPod(KubeClient& client,
                                        const EvictionTarget& pod,
                                        const CallOptions& call) {
  const std::string path = absl::StrFormat(
      "/api/v1/namespaces/%s/pods/%s/eviction", pod.namespace_name, pod.name);
  absl::StatusOr<std::string> posted =
      client.Post(path, EncodeEviction(pod), call);
  const absl::Status& status = posted.status();
  if (posted.ok()) {
    spdlog::info("kube: evicted pod {}/{}", pod.namespace_name, pod.name);
    return EvictionResult{EvictionOutcome::kEvicted, "evicted"};
  }
  const std::string message = ServerMessage(status);
  // A 409 other than the UID precondition (a conflicting budget update the
  // server did not retry) is a fault worth retrying, not a gone pod.
  if (absl::IsNotFound(status) ||
      (absl::IsAborted(status) &&
       absl::StrContains(message, "UID in precondition"))) {
    return EvictionResult{EvictionOutcome::kAlreadyGone, message};
  }
  // The API server's own throttling (API Priority and Fairness) is a 429
  // too; only the budget's answer names it.
  if (absl::IsResourceExhausted(status) &&
      absl::StrContains(message, "disruption budget")) {
    return EvictionResult{EvictionOutcome::kBlockedByDisruptionBudget, message};
  }
  return status;
}

}  // namespace gpusched::kube
