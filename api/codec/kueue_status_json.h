// The status gpusched writes on Kueue's ClusterQueues and LocalQueues
// (kueue.x-k8s.io/v1beta2) when it decides for them, with Kueue's fields
// and words, so that `kubectl get clusterqueues,localqueues` and whatever
// reads their status see what gpusched decided. A merge patch of the
// status subresource; lists (conditions, flavors) replace the stored ones.
#ifndef GPUSCHED_API_CODEC_KUEUE_STATUS_JSON_H_
#define GPUSCHED_API_CODEC_KUEUE_STATUS_JSON_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpusched {

// One resource of a flavor: in use by admitted workloads, and the part of
// it borrowed from the cohort (ClusterQueues only), in the quota's units
// (cpu in millicores, written as a quantity).
struct KueueResourceUsage {
  std::string resource;
  int64_t total = 0;
  int64_t borrowed = 0;
  bool operator==(const KueueResourceUsage&) const = default;
};

struct KueueFlavorUsage {
  std::string flavor;
  std::vector<KueueResourceUsage> resources;
  bool operator==(const KueueFlavorUsage&) const = default;
};

// The condition Active, as Kueue keeps it.
struct KueueActiveCondition {
  bool active = true;
  std::string reason;  // "Ready", ...
  std::string message;
  std::chrono::system_clock::time_point last_transition;
  bool operator==(const KueueActiveCondition&) const = default;
};

// A LocalQueue's status.fairSharing.admissionFairSharingStatus: Admission
// Fair Sharing's decayed usage, in Kueue's units (cpu in cores), and when
// it was last sampled.
struct KueueAfsStatus {
  std::map<std::string, double> consumed;
  std::chrono::system_clock::time_point last_update;
  bool operator==(const KueueAfsStatus&) const = default;
};

struct KueueQueueStatus {
  int32_t pending = 0;
  int32_t reserving = 0;
  int32_t admitted = 0;
  // flavorsUsage: what admitted workloads hold.
  std::vector<KueueFlavorUsage> usage;
  // flavorsReservation: that and the quota reserved for admission checks.
  std::vector<KueueFlavorUsage> reservation;
  // status.fairSharing.weightedShare; unset: not written.
  std::optional<int64_t> weighted_share;
  // LocalQueues with Admission Fair Sharing on; unset: not written.
  std::optional<KueueAfsStatus> admission_fair_sharing;
  KueueActiveCondition condition;
  bool operator==(const KueueQueueStatus&) const = default;
};

// {"status":{...}} for a ClusterQueue (borrowed amounts written) or a
// LocalQueue (`local`: no borrowed).
std::string EncodeKueueStatusPatch(const KueueQueueStatus& status, bool local);

// `amount` as Kueue writes a quantity it scaled by a float: rounded down
// to nano units, in the canonical decimal form ("66666666n", "2500m",
// "8", "4k").
std::string KueueDecimalQuantity(double amount);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_KUEUE_STATUS_JSON_H_
