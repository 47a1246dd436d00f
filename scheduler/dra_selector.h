#ifndef GPUSCHED_SCHEDULER_DRA_SELECTOR_H_
#define GPUSCHED_SCHEDULER_DRA_SELECTOR_H_

// Device selectors of resource.k8s.io/v1 are CEL expressions, and Debian
// has no C++ CEL library. gpusched evaluates a documented subset exactly,
// as kube-scheduler's CEL environment would:
//
//   device.driver == 'gpu.nvidia.com'
//   device.attributes['gpu.nvidia.com'].productName == 'NVIDIA H100 80GB HBM3'
//   device.attributes['gpu.nvidia.com']['type'] != 'mig'
//   device.attributes['gpu.nvidia.com'].index == 3       (int, bool, string)
//   device.attributes['gpu.nvidia.com'].driverVersion == semver('550.54.15')
//   device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0
//   'profile' in device.attributes['gpu.nvidia.com']
//   joined by &&, ||, ! and parentheses; true and false.
//
// Anything else is outside the subset: Parse fails naming the byte where
// it stopped, and the caller leaves that request's feasibility to
// kube-scheduler rather than refuse on a guess.
//
// Evaluation follows CEL: a missing domain or attribute is a runtime error
// ("no such key"), which kube-scheduler reports as a failed allocation; &&
// and || absorb an error when the other side decides (false && error is
// false); values of different types are never equal.

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
