// The wire formats of gpusched's aggregated visibility API,
// visibility.gpusched.io/v1alpha1 (api/server/visibility_api.h serves it):
// discovery documents, the pending workloads of a queue shaped after
// Kueue's PendingWorkloadsSummary, the same as a meta.k8s.io/v1 Table for
// kubectl, and Kubernetes Status objects for errors.
#ifndef GPUSCHED_API_CODEC_VISIBILITY_JSON_H_
#define GPUSCHED_API_CODEC_VISIBILITY_JSON_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "queueing/queue_view.h"
#include "queueing/start_forecast.h"

namespace gpusched {

inline constexpr std::string_view kVisibilityGroup = "visibility.gpusched.io";
inline constexpr std::string_view kVisibilityVersion = "v1alpha1";
inline constexpr std::string_view kVisibilityGroupVersion =
    "visibility.gpusched.io/v1alpha1";

// GET /apis: an APIGroupList holding this group alone.
std::string EncodeVisibilityGroupList();
// GET /apis/visibility.gpusched.io: the APIGroup.
std::string EncodeVisibilityGroup();
// GET /apis/visibility.gpusched.io/v1alpha1: the APIResourceList
// (clusterqueues, localqueues and their pendingworkloads subresources,
// cohorts, workloads/explain, gpunodes and decisions).
std::string EncodeVisibilityResourceList();

// One page of a queue's pending workloads, in admission order.
using PendingPage = std::span<const PendingWorkload* const>;

// A PendingWorkloadsSummary: items with metadata (name, namespace,
// creationTimestamp), priority, localQueueName, positionInClusterQueue,
// positionInLocalQueue (from 0, as Kueue counts), reasonCode and, when
// the engine has one, the reason's sentence (message); with a
// `forecast`, also expectedStart and latestStart, or startUnknownReason.
std::string EncodePendingWorkloadsSummary(
    PendingPage page, const StartForecast* forecast = nullptr);

// Which queue a ClusterQueue or LocalQueue object (the parent resources'
// GET) describes; `namespace_name` is empty for a ClusterQueue.
struct VisibilityQueueRef {
  std::string_view kind;  // "ClusterQueue" or "LocalQueue"
  std::string_view namespace_name;
  std::string_view name;
};

// The queue with its pending workloads in pendingWorkloadsSummary, as
// Kueue's visibility ClusterQueue carries them.
// `status` (a ClusterQueue's or LocalQueue's, visibility_status_json.h)
// is written as it is when not empty.
std::string EncodeVisibilityQueue(const VisibilityQueueRef& queue,
                                  PendingPage page,
                                  const StartForecast* forecast = nullptr,
                                  std::string_view status = "");

// The page as a meta.k8s.io/v1 Table, one row per workload: Name,
// Namespace, Position in CQ, Position in LQ, Priority, Reason, Expected
// Start ("in 12m", "now", "unknown"; "" without a forecast), Age (its age
// at `now_ms`, Unix milliseconds, as kubectl prints ages).
std::string EncodePendingWorkloadsTable(
    PendingPage page, int64_t now_ms, const StartForecast* forecast = nullptr);
// When a forecast says a workload starts, for a table: "now", "in 12m",
// or "unknown".
std::string HumanStart(const ForecastStart& start, int64_t now_ms);

// How kubectl prints an age: "45s", "3m20s", "5h12m", "3d4h", "400d",
// "2y10d". Negative durations print as "0s".
std::string HumanAge(int64_t millis);

// A Kubernetes Status object for a failed request: `code` is the HTTP
// status, `reason` the StatusReason ("NotFound", "Forbidden", ...).
std::string EncodeFailureStatus(int code, std::string_view reason,
                                std::string_view message);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_VISIBILITY_JSON_H_
