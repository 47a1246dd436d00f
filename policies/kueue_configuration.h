#ifndef GPUSCHED_POLICIES_KUEUE_CONFIGURATION_H_
#define GPUSCHED_POLICIES_KUEUE_CONFIGURATION_H_

// Internal: Kueue's own Configuration (the controller_manager_config.yaml
// of its kueue-manager-config ConfigMap) as a policy document. What of it
// has a meaning for gpusched (waitForPodsReady, fairSharing,
// admissionFairSharing, resources.deviceClassMappings) maps onto
// SchedulerConfig; the manager's
// own settings (webhook, metrics, leader election, ...) are accepted and
// dropped. The decoder itself is DecodeKueueConfiguration
// (object_decoders.h).

#include "policies/diagnostics.h"
#include "policies/policy_draft.h"
#include "queueing/policy.h"

namespace gpusched::policy_internal {

// At most one Configuration, and no section set both by it and by the
// SchedulerConfig.
void CheckKueueConfiguration(const PolicyDraft& draft,
                             Diagnostics* diagnostics);

// Writes the Configuration's sections (if any) over `config`.
void ApplyKueueConfiguration(const PolicyDraft& draft, SchedulerConfig* config);

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_KUEUE_CONFIGURATION_H_
