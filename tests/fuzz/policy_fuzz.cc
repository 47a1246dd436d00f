// Policy YAML (Kueue ResourceFlavor, ClusterQueue, LocalQueue, Cohort,
// WorkloadPriorityClass and gpusched's SchedulerConfig; policy_loader.h),
// then the `gpusched validate` summary of a policy that loaded.
#include <cstddef>
#include <cstdint>

#include "policies/policy_loader.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  gpusched::PolicyResult result =
      gpusched::ParsePolicyText(gpusched::fuzz::Text(data, size), "fuzz.yaml");
  if (result.ok()) (void)gpusched::PolicySummary(*result.policy);
  return 0;
}
