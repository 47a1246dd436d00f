#ifndef GPUSCHED_SCHEDULER_DRA_SELECTOR_H_
#define GPUSCHED_SCHEDULER_DRA_SELECTOR_H_

// Device selectors of resource.k8s.io/v1 are CEL expressions, and Debian
// has no C++ CEL library. gpusched evaluates a documented subset exactly,
// as kube-scheduler v1.37's CEL environment does:
//
//   device.driver == 'gpu.nvidia.com'
//   device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'
//   device.attributes['gpu.nvidia.com']['type'] != 'mig'
//   device.attributes['gpu.nvidia.com'].index <= 3     (int, bool, string)
//   device.attributes['gpu.nvidia.com'].productName < 'NVIDIA L'
//   device.attributes['gpu.nvidia.com'].driverVersion == semver('550.54.15')
//   device.attributes['gpu.nvidia.com'].cudaComputeCapability
//       .isGreaterThan(semver('8.0.0'))          (also isLessThan, compareTo)
//   device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0
//   device.capacity['gpu.nvidia.com'].memory.isGreaterThan(quantity('40Gi'))
//   'profile' in device.attributes['gpu.nvidia.com']   (or device.capacity)
//   has(device.attributes['gpu.nvidia.com'].profile)
//   joined by &&, ||, ! and parentheses; true, false, int and string
//   literals (escapes \\ \' \" only); relations chain, (a == b) == c.
//
// Anything else is outside the subset: Parse fails naming the byte where
// it stopped, and the caller leaves that request's feasibility to
// kube-scheduler rather than refuse on a guess. So is any expression CEL's
// type checker rejects ('a' == 1, semver(...) < semver(...)): the API
// server does not store those.
//
// Evaluation follows cel-go (checked pair by pair against upstream by
// e2e.TestCelSelectorsAgreeWithUpstream over tests/testdata/cel/):
// - A domain the device lacks is an empty map: 'x' in it is false, and
//   a name missing from any domain is a runtime error ("no such key: x"),
//   which kube-scheduler reports as a failed allocation.
// - && and || absorb an error when the other side decides (false && error
//   is false, error && false too); ! of an error is the error.
// - == of different types is false, except that a semver on the left has
//   no == with a non-semver (an error); != is then true.
// - <, <=, >, >= order two ints, two strings (by byte) or two bools (false
//   < true); other pairs are an error ("no such overload").
// - Semvers compare by semver precedence, build metadata ignored; a
//   semver('...') text CEL's semver() rejects is a runtime error.
// - Quantities compare exactly (a literal finer than a milli-unit too).
// - cel-go's parser drops '!' in pairs: !!x is x, whatever its type.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/dra_objects.h"

namespace gpusched {

enum class SelectorResult { kMatches, kNoMatch, kError };

struct SelectorOutcome {
  SelectorResult result = SelectorResult::kNoMatch;
  std::string error;  // kError: CEL's message, e.g. "no such key: type"

  bool matches() const { return result == SelectorResult::kMatches; }
};

// The device as CEL sees it: its driver, attributes and capacity.
struct SelectorInput {
  std::string_view driver;
  const DraDevice* device = nullptr;
};

class DeviceSelector {
 public:
  // InvalidArgument "outside the supported CEL subset at byte 31: ..."
  // for anything the subset does not cover (including valid CEL).
  static absl::StatusOr<DeviceSelector> Parse(std::string_view expression);

  SelectorOutcome Evaluate(const SelectorInput& input) const;
  const std::string& expression() const { return expression_; }

  struct Node;

 private:
  std::string expression_;
  std::shared_ptr<const Node> root_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_SELECTOR_H_
