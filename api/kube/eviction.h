// Evicts a pod through the policy/v1 Eviction subresource, so that
// PodDisruptionBudgets are honoured: the API server refuses (429) an
// eviction that would take a budget below its minimum.
#ifndef GPUSCHED_API_KUBE_EVICTION_H_
#define GPUSCHED_API_KUBE_EVICTION_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/codec/eviction_json.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {

// Which pod (api/codec/eviction_json.h).
using ::gpusched::EvictionTarget;

enum class EvictionOutcome {
  kEvicted,      // 201/200: the pod is being deleted
  kAlreadyGone,  // 404, or 409 because the name now holds another pod
  // 429 for a disruption budget: the message is the API server's, for a
  // planner to say why it waits or to choose other victims.
  kBlockedByDisruptionBudget,
};

struct EvictionResult {
  EvictionOutcome outcome;
  std::string message;
};

// POSTs .../pods/NAME/eviction. Faults are statuses: transport errors, a
// 429 that is the API server's own rate limit rather than a budget
// (ResourceExhausted: retry later), and any other error answer.
absl::StatusOr<EvictionResult> EvictPod(KubeClient& client,
                                        const EvictionTarget& pod,
                                        const CallOptions& call = {});

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_EVICTION_H_
