#ifndef GPUSCHED_SCHEDULER_QUANTITY_H_
#define GPUSCHED_SCHEDULER_QUANTITY_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched {

// Parses a Kubernetes resource quantity ("500m", "64Gi", "1.5", "2e3", "1k")
// as the API server accepts it. Returns the value scaled by `scale` and
// rounded up, because Kubernetes rounds requests up, never down: scale 1000
// yields milli-units (cpu), scale 1 yields whole units (bytes, GPUs, pods).
// Fails with InvalidArgument naming the offending character.
absl::StatusOr<int64_t> ParseQuantity(std::string_view text, int64_t scale);

// ParseQuantity's value, and whether it is exact: false when the text holds
// a fraction of 1/scale that rounding up dropped ("1500u" at scale 1000 is
// 2, not exact), so that a comparison with it can still be exact.
struct ScaledQuantity {
  int64_t value = 0;
  bool exact = true;
};
absl::StatusOr<ScaledQuantity> ParseScaledQuantity(std::string_view text,
                                                   int64_t scale);

// Formats `milli` milli-units the way kubectl prints small quantities:
// "500m", "2", "1500m".
std::string FormatMilli(int64_t milli);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_QUANTITY_H_
