#ifndef GPUSCHED_API_CODEC_LEASE_JSON_H_
#define GPUSCHED_API_CODEC_LEASE_JSON_H_

// coordination.k8s.io/v1 Lease JSON to what the lease follower
// (api/kube/lease_follower.h) needs of it: who holds it and until when.
// Unknown fields are ignored and null means absent, as for Pods. Errors are
// InvalidArgument naming the field: `Lease.spec.renewTime: invalid RFC 3339
// time "yesterday": ...`.
//
// Exposes simdjson like k8s_json.h: watch handlers decode the object of an
// event the watch stream has already parsed.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "simdjson.h"

namespace gpusched {

// What a Lease says of its holder.
struct LeaseState {
  std::string holder;                 // spec.holderIdentity ("" when released)
  std::optional<absl::Time> renewed;  // spec.renewTime
  int64_t duration_seconds = 0;       // spec.leaseDurationSeconds

  bool operator==(const LeaseState&) const = default;
};

// `path` prefixes every error message, e.g. "Lease" or "items[0]".
absl::StatusOr<LeaseState> DecodeLease(simdjson::dom::element lease,
                                       std::string_view path = "Lease");

// A LeaseList body: the last item's state (a field selector on the name
// leaves at most one), nullopt when there is none. Paths start "items[i]".
absl::StatusOr<std::optional<LeaseState>> DecodeLeaseList(
    std::string_view body);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_LEASE_JSON_H_
