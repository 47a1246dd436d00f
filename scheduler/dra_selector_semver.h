#ifndef GPUSCHED_SCHEDULER_DRA_SELECTOR_SEMVER_H_
#define GPUSCHED_SCHEDULER_DRA_SELECTOR_SEMVER_H_

// Semantic versions as the CEL environment of kube-scheduler reads them
// (its semver() function and version attributes; k8s.io/apiserver's CEL
// library over github.com/blang/semver/v4): strictly MAJOR.MINOR.PATCH,
// each a decimal of at most 64 bits without leading zeros, then an
// optional -PRERELEASE and +BUILD of dot-separated identifiers of
// [0-9A-Za-z-] (numeric pre-release identifiers without leading zeros).
// No "v" prefix, no missing parts, no spaces.

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched {

// Views into the parsed text.
struct Semver {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::string_view prerelease;  // "rc.1"; empty for none
};

// InvalidArgument with the reason, e.g. "No Major.Minor.Patch elements
// found", for text semver() rejects.
absl::StatusOr<Semver> ParseSemver(std::string_view text);

// -1, 0 or 1 by semver precedence: numbers, then a version without a
// pre-release above one with; pre-release identifiers left to right,
// numeric ones by value and below alphanumeric ones, which compare by
// byte, and a longer list above its prefix. Build metadata is ignored.
int CompareSemver(const Semver& a, const Semver& b);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_SELECTOR_SEMVER_H_
