#ifndef GPUSCHED_POLICIES_POLICY_ERROR_H_
#define GPUSCHED_POLICIES_POLICY_ERROR_H_

#include <optional>
#include <string>
#include <vector>

#include "queueing/policy.h"

namespace gpusched {

// One problem found in a policy file.
struct PolicyError {
  std::string file;
  int line = 0;  // 1-based; 0 when the error is about the whole file
  // The full text, compiler style:
  // `team.yaml:23: ClusterQueue "team-a":
  //  spec.resourceGroups[0].flavors[1].resources[0].nominalQuota:
  //  Invalid value "-1": must be non-negative` (on one line).
  std::string message;

  friend bool operator==(const PolicyError&, const PolicyError&) = default;
};

// A document left out of the policy (ParsePolicyTextsSettingAside): it
// has errors, or names an object that was left out. Kueue leaves such an
// object inactive and admits through the others.
struct SetAsideDocument {
  std::string name;     // the text's name, "clusterqueues/team-a"
  std::string message;  // its first error
  friend bool operator==(const SetAsideDocument&,
                         const SetAsideDocument&) = default;
};

// Either a complete policy and no errors, or no policy and every error.
struct PolicyResult {
  std::optional<Policy> policy;
  std::vector<PolicyError> errors;
  // With a policy: the documents left out of it, by name.
  std::vector<SetAsideDocument> set_aside;

  bool ok() const { return policy.has_value(); }
};

}  // namespace gpusched

#endif  // GPUSCHED_POLICIES_POLICY_ERROR_H_
