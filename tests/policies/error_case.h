#ifndef GPUSCHED_TESTS_POLICIES_ERROR_CASE_H_
#define GPUSCHED_TESTS_POLICIES_ERROR_CASE_H_

// A table row of the policy error tests: a small file and the exact
// messages it must produce. Lines are counted from the file's first line.

#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "policies/policy_loader.h"

namespace gpusched::testing {

struct ErrorCase {
  std::string name;
  std::string yaml;  // a leading newline is dropped: line 1 is the first
  std::vector<std::string> errors;
};

// The messages ParsePolicyText gives `yaml` as file "p.yaml".
inline std::vector<std::string> ErrorsOf(std::string_view yaml) {
  if (yaml.starts_with("\n")) yaml.remove_prefix(1);
  const PolicyResult result = ParsePolicyText(yaml, "p.yaml");
  std::vector<std::string> messages;
  for (const PolicyError& error : result.errors) {
    messages.push_back(error.message);
  }
  // Never both: a result with errors carries no policy.
  EXPECT_EQ(result.policy.has_value(), messages.empty());
  return messages;
}

inline std::string CaseName(const ::testing::TestParamInfo<ErrorCase>& info) {
  return info.param.name;
}

}  // namespace gpusched::testing

#endif  // GPUSCHED_TESTS_POLICIES_ERROR_CASE_H_
