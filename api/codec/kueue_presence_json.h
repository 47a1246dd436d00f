// What tells that a Kueue manager is active on a cluster, read from the
// objects that say so: admissionregistration.k8s.io/v1 webhook
// configurations with a webhook on Kueue's API group (Kueue installs its
// mutating and validating webhooks for ClusterQueues, Workloads and the
// like, and for pods). Its leader Lease is read with lease_json.h.
#ifndef GPUSCHED_API_CODEC_KUEUE_PRESENCE_JSON_H_
#define GPUSCHED_API_CODEC_KUEUE_PRESENCE_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched {

inline constexpr std::string_view kKueueApiGroup = "kueue.x-k8s.io";

// The names of the configurations in a MutatingWebhookConfigurationList or
// ValidatingWebhookConfigurationList `body` that have a webhook whose
// rules name `api_group` itself (a "*" rule is a policy engine's, such as
// Gatekeeper's, not Kueue's).
// Errors name the field: `items[2].webhooks[0].rules: expected an array`.
absl::StatusOr<std::vector<std::string>> WebhookConfigurationsOnGroup(
    std::string_view body, std::string_view api_group);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_KUEUE_PRESENCE_JSON_H_
