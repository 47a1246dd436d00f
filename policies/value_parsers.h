#ifndef GPUSCHED_POLICIES_VALUE_PARSERS_H_
#define GPUSCHED_POLICIES_VALUE_PARSERS_H_

// Scalar syntaxes of the policy YAML, as Kubernetes and Go spell them. Each
// parser returns InvalidArgument whose message is the reason alone ("must be
// non-negative"), so that callers can put it after `Invalid value "...": `.

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched::policy_internal {

// A Go duration ("300s", "5m", "1h30m", "250ms", "1.5h", "0") in whole
// milliseconds. Units: h, m, s, ms, us/µs, ns; a value that is not a whole
// number of milliseconds, a negative value or a bare number (other than 0)
// is an error.
absl::StatusOr<int64_t> ParseDurationMs(std::string_view text);

// Formats milliseconds back the way Go prints durations: "5m0s" becomes
// "5m", "1h30m", "250ms", "0s".
std::string FormatDurationMs(int64_t ms);

// A non-negative Kubernetes quantity of resource `name` in ResourceList's
// units (cpu in milli, others in base units).
absl::StatusOr<int64_t> ParseQuota(std::string_view name,
                                   std::string_view text);

// A fair-sharing weight, a non-negative decimal quantity ("1", "0.5",
// "500m"), in thousandths.
absl::StatusOr<int64_t> ParseWeightMilli(std::string_view text);

// Kubernetes name rules. Each returns "" when `value` is valid, otherwise
// apimachinery's explanation.
std::string DnsSubdomainError(std::string_view value);   // object names
std::string DnsLabelError(std::string_view value);       // namespaces
std::string QualifiedNameError(std::string_view value);  // label keys,
                                                         // resource names
std::string LabelValueError(std::string_view value);

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_VALUE_PARSERS_H_
