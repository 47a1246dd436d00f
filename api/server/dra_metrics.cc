#include "api/server/dra_metrics.h"

#include "absl/strings/str_cat.h"
#include "api/server/metrics.h"
#include "scheduler/base/strings.h"

namespace gpusched {

void AppendDraMetrics(const DraCounts& counts, std::string& out) {
  AppendMetricHeader(
      out, "gpusched_dra_devices", "gauge",
      "Devices DRA drivers publish in ResourceSlices (newest complete pool "
      "generation), by driver and state: allocated (a claim's allocation "
      "names it), tainted (NoSchedule/NoExecute), counters_spent (its "
      "partitions took the shared counters it needs), free.");
  for (const auto& [driver, by_condition] : counts.devices) {
    for (DraDeviceCondition condition : kDraDeviceConditions) {
      absl::StrAppend(&out, "gpusched_dra_devices{driver=\"", driver,
                      "\",state=\"", Sv(DraConditionName(condition)), "\"} ",
                      by_condition[static_cast<size_t>(condition)], "\n");
    }
  }
  AppendMetricHeader(out, "gpusched_nodes_by_gpu_source", "gauge",
                     "Nodes with GPUs, by where their GPUs come from: the "
                     "device plugin's allocatable, or DRA ResourceSlices.");
  absl::StrAppend(
      &out, "gpusched_nodes_by_gpu_source{source=\"device_plugin\"} ",
      counts.nodes_device_plugin, "\n",
      "gpusched_nodes_by_gpu_source{source=\"dra\"} ", counts.nodes_dra, "\n");
  AppendMetricHeader(out, "gpusched_dra_pool_problems", "gauge",
                     "DRA pools whose devices are not counted (the newest "
                     "generation is incomplete); /v1/nodes names them.");
  absl::StrAppend(&out, "gpusched_dra_pool_problems ", counts.pool_problems,
                  "\n");
}

}  // namespace gpusched
