// A policy with a ProvisioningRequest admission check, for the engine's and
// the admission loop's tests of admission checks.
#ifndef GPUSCHED_TESTS_QUEUEING_CHECKED_POLICY_H_
#define GPUSCHED_TESTS_QUEUEING_CHECKED_POLICY_H_

#include <cstdint>
#include <string>

#include "queueing/policy.h"
#include "tests/queueing/builders.h"

namespace gpusched {

inline constexpr char kCheck[] = "prov";

// TwoTeams with check "prov" on team-a, its config retrying `limit` times
// from a 10 s base.
inline Policy CheckedPolicy(int32_t limit = 2) {
  Policy policy = TwoTeams();
  policy.cluster_queues[0].admission_checks = {{.name = kCheck}};
  policy.admission_checks = {
      {.name = kCheck,
       .controller_name = std::string(kProvisioningRequestController),
       .provisioning_request_config = "prc"}};
  policy.provisioning_request_configs = {
      {.name = "prc",
       .provisioning_class_name = "check-capacity.autoscaling.x-k8s.io",
       .retry_strategy = {.backoff_limit_count = limit,
                          .backoff_base_seconds = 10,
                          .backoff_max_seconds = 15}}};
  return policy;
}

}  // namespace gpusched

#endif  // GPUSCHED_TESTS_QUEUEING_CHECKED_POLICY_H_
