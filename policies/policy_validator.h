#ifndef GPUSCHED_POLICIES_POLICY_VALIDATOR_H_
#define GPUSCHED_POLICIES_POLICY_VALIDATOR_H_

// Internal: the checks that need every document of every file, run after
// decoding, and the final draft -> Policy step.

#include "policies/diagnostics.h"
#include "policies/policy_draft.h"
#include "queueing/policy.h"

namespace gpusched::policy_internal {

// Reports: names defined twice per kind (the later definition, naming the
// earlier), more than one SchedulerConfig, references to a ResourceFlavor
// or ClusterQueue that no document defines, cycles among Cohort parents,
// and borrowWithinCohort while the SchedulerConfig enables fair sharing.
void ValidateDraft(const PolicyDraft& draft, Diagnostics* diagnostics);

// The objects of a draft without errors, each list sorted by name
// (LocalQueues by namespace, then name), so that how the objects are spread
// over files and documents never changes the Policy.
Policy BuildPolicy(PolicyDraft draft);

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_POLICY_VALIDATOR_H_
