// The visibility API's objects beyond the pending lists (the wire formats
// of api/server/visibility_api.h): the status of ClusterQueues, cohorts and
// LocalQueues with their usage per flavor and resource, their lists, and
// one workload's explanation with its forecast start and what is ahead.
#ifndef GPUSCHED_API_CODEC_VISIBILITY_STATUS_JSON_H_
#define GPUSCHED_API_CODEC_VISIBILITY_STATUS_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "queueing/queue_view.h"
#include "queueing/start_forecast.h"
#include "queueing/workload_explanation.h"

namespace gpusched {

// The "status" object of a ClusterQueue: cohort, pendingWorkloads,
// admittedWorkloads and flavorsUsage (per flavor, its resources' nominal,
// used, borrowed, lent and limits).
std::string EncodeClusterQueueStatus(const ClusterQueueView& queue);
// The "status" object of a LocalQueue: clusterQueue and its counts.
std::string EncodeLocalQueueStatus(const LocalQueueView& queue);

// ClusterQueueList, CohortList and LocalQueueList: each item with its
// status (no pending workloads; the queue's GET has those).
std::string EncodeClusterQueueList(const std::vector<ClusterQueueView>& queues);
std::string EncodeCohortList(const std::vector<CohortView>& cohorts);
std::string EncodeLocalQueueList(
    const std::vector<const LocalQueueView*>& queues);

// A workload before the one explained, in its ClusterQueue's order. A
// workload of another namespace is shown without its name: the caller may
// have rights in their own namespace only.
struct AheadWorkload {
  std::string namespace_name;  // empty: another namespace's
  std::string name;
  size_t position_in_cluster_queue = 0;
  ReasonCode code = ReasonCode::kNone;
  std::optional<int64_t> expected_start_ms;
};

struct ExplainAnswer {
  std::string name;  // the workload's (a PodGroup's, or a pod's)
  WorkloadExplanation explanation;
  // From the last forecast, when the workload waits and one ran.
  std::optional<ForecastStart> start;
  int64_t forecast_at_ms = 0;
  std::vector<AheadWorkload> ahead;
};

// A WorkloadExplanation object (visibility.gpusched.io/v1alpha1). A
// workload with DRA claims also has "dra": the requests of its first
// member with claims (claim, request, deviceClass, count, selectors,
// checkedBy gpusched or kube-scheduler and the reason), allocatedClaims,
// allocatedNode, missing, charged ([{resource, amount}]), uncharged, and
// per admitted member its devices (pod, node, allocated, claims, planned);
// a placement group of DRA nodes has "dra", how their devices stand.
std::string EncodeWorkloadExplanation(const ExplainAnswer& answer);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_VISIBILITY_STATUS_JSON_H_
