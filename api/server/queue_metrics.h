// The queues' metrics, under Kueue's names with the gpusched_ prefix
// (kueue_pending_workloads -> gpusched_pending_workloads, ...), rendered
// at scrape time from the loop's last published QueueView and its event
// counts: a scrape never takes the engine's lock and never waits for a
// pass. Labels are bounded: queues, cohorts, flavors, resources, statuses
// and reasons of fixed sets, never a pod's or a workload's name.
#ifndef GPUSCHED_API_SERVER_QUEUE_METRICS_H_
#define GPUSCHED_API_SERVER_QUEUE_METRICS_H_

#include <string>
#include <string_view>
#include <vector>

#include "api/controller/queue_event_counter.h"
#include "queueing/queue_view.h"
#include "scheduler/gpu_usage.h"

namespace gpusched {

// A label value in the text exposition format: \, " and newline escaped.
std::string EscapeLabelValue(std::string_view value);

// The queue gauges (pending, admitted, quota per flavor and resource,
// cohorts), then the event counters and the admission wait histogram.
// Only the deciding replica renders them: a standby's queues mirror the
// other replica's and its counters stand still.
void AppendQueueMetrics(const QueueView& view, const QueueEventCounts& counts,
                        std::string& out);

// gpusched_gpu_allocation_ratio and gpusched_gpu_fragmentation_ratio by
// GPU model: what the model holds, on every replica (as gpusched_gpus).
void AppendGpuRatios(const std::vector<GpuModelUsage>& usage, std::string& out);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_QUEUE_METRICS_H_
