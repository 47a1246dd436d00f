// The DRA gauges of /metrics (scheduler/dra_counts.h), in the Prometheus
// text format:
//   gpusched_dra_devices{driver,state}      devices by free, allocated,
//                                           tainted, counters_spent
//   gpusched_nodes_by_gpu_source{source}    device_plugin, dra
//   gpusched_dra_pool_problems              pools not counted
// Labels are bounded: drivers are few, states and sources fixed.
#ifndef GPUSCHED_API_SERVER_DRA_METRICS_H_
#define GPUSCHED_API_SERVER_DRA_METRICS_H_

#include <string>

#include "scheduler/dra_counts.h"

namespace gpusched {

void AppendDraMetrics(const DraCounts& counts, std::string& out);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_DRA_METRICS_H_
