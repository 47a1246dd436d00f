// What `kubectl gpusched` (api/cli) reads of the visibility API,
// visibility.gpusched.io/v1alpha1, whose answers visibility_json.h writes
// on the server's side. Each decoder keeps the fields the plugin prints
// and nothing else; -o json and -o yaml print the server's own answer,
// never these structs, so a field the server adds reaches the user
// without a change here.
//
// Times are Unix seconds; a time the server left out is nullopt. Errors
// are InvalidArgument naming the field ("ClusterQueueList.items[2].status.
// pendingWorkloads: expected integer, got string").
#ifndef GPUSCHED_API_CODEC_VISIBILITY_DECODE_H_
#define GPUSCHED_API_CODEC_VISIBILITY_DECODE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched {

// An item of a PendingWorkloadsSummary.
struct PendingItem {
  std::string name;
  std::string namespace_name;
  std::optional<int64_t> created;
  int64_t priority = 0;
  std::string local_queue;
  // From 0, as Kueue counts.
  int64_t position_in_cluster_queue = 0;
  int64_t position_in_local_queue = 0;
  std::string reason_code;
  std::optional<int64_t> expected_start;
  std::optional<int64_t> latest_start;
  std::string start_unknown_reason;  // set when a forecast found no start
};

// One resource of a flavor: integers in the resource's unit (GPUs, cpu
// millicores, memory bytes).
struct ResourceUsage {
  std::string name;
  int64_t nominal = 0;
  int64_t used = 0;
  int64_t borrowed = 0;
  int64_t lent = 0;
};

struct FlavorUsage {
  std::string name;
  std::vector<ResourceUsage> resources;
};

struct ClusterQueueStatus {
  std::string name;
  std::string cohort;  // empty: none
  int64_t pending = 0;
  int64_t admitted = 0;
  std::vector<FlavorUsage> flavors;
};

struct CohortStatus {
  std::string name;
  std::string parent;  // empty: a root
  std::vector<FlavorUsage> flavors;
};

struct LocalQueueStatus {
  std::string name;
  std::string namespace_name;
  std::string cluster_queue;
  int64_t pending = 0;
  int64_t admitted = 0;
};

// A WorkloadExplanation's quota line: one level (the ClusterQueue, then
// each cohort up) of one flavor and resource.
struct QuotaLine {
  std::string level;
  bool cohort = false;
  std::string flavor;
  std::string resource;
  int64_t nominal = 0;
  int64_t used = 0;
  int64_t borrowed = 0;
  int64_t available = 0;
  int64_t most_ever = 0;
  std::optional<int64_t> borrowing_limit;
  int64_t asks = 0;
};

// Nodes grouped by why the workload fits them or not.
struct PlacementLine {
  std::string verdict;  // "fits" or a reason
  int64_t nodes = 0;
  std::vector<std::string> examples;
  std::string dra;  // how their DRA devices stand; "" when not said
};

// The explanation's "dra" (api/codec/visibility_status_json.h).
struct DraRequestItem {
  std::string claim;
  std::string request;
  std::string device_class;
  int64_t count = 0;
  std::vector<std::string> selectors;
  std::string checked_by;  // gpusched or kube-scheduler
  std::string reason;      // why kube-scheduler alone decides it
};
struct DraMemberItem {
  std::string pod;
  std::string node;
  std::vector<std::string> allocated;
  std::vector<std::string> claims;
  std::vector<std::string> planned;
};
struct DraSection {
  std::string pod;
  std::vector<DraRequestItem> requests;
  std::vector<std::string> allocated_claims;
  std::string allocated_node;
  std::vector<std::string> missing;
  std::vector<std::pair<std::string, int64_t>> charged;
  std::vector<std::string> uncharged;
  std::string held;  // why quota cannot charge the claims; "" when it can
  std::vector<DraMemberItem> members;
};

struct ForecastedStart {
  std::optional<int64_t> forecast_at;
  std::optional<int64_t> expected;
  std::optional<int64_t> latest;
  std::string unknown_reason;
};

// A workload ahead in the ClusterQueue; name and namespace are empty for
// another namespace's, which the caller may not be allowed to see.
struct AheadEntry {
  std::string namespace_name;
  std::string name;
  int64_t position_in_cluster_queue = 0;
  std::string reason_code;
  std::optional<int64_t> expected_start;
};

struct ExplainedWorkload {
  std::string name;
  std::string namespace_name;
  std::string state;  // Pending, Admitted or Finished
  std::string local_queue;
  std::string cluster_queue;
  std::string cohort;
  int64_t position_in_cluster_queue = 0;
  int64_t pending_in_cluster_queue = 0;
  int64_t position_in_local_queue = 0;
  int64_t pending_in_local_queue = 0;
  std::string reason_code;
  std::string message;
  int64_t members = 0;
  int64_t min_member = 0;
  std::vector<QuotaLine> quota;
  std::vector<PlacementLine> placement;
  std::string preemption;
  // preemptionDryRun: its verdict and sentence; empty when not sent.
  std::string dry_run_verdict;
  std::string dry_run_summary;
  std::optional<ForecastedStart> start;
  std::vector<AheadEntry> ahead;
  std::optional<DraSection> dra;
};

absl::StatusOr<std::vector<PendingItem>> DecodePendingWorkloads(
    std::string_view json);
absl::StatusOr<std::vector<ClusterQueueStatus>> DecodeClusterQueueList(
    std::string_view json);
absl::StatusOr<std::vector<CohortStatus>> DecodeCohortList(
    std::string_view json);
absl::StatusOr<std::vector<LocalQueueStatus>> DecodeLocalQueueList(
    std::string_view json);
absl::StatusOr<ExplainedWorkload> DecodeWorkloadExplanation(
    std::string_view json);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_VISIBILITY_DECODE_H_
