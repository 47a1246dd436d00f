// The DRA side of the cluster in numbers, for /metrics: the devices DRA
// drivers publish by driver and state (dra_describe.h's four), the nodes
// whose GPUs come from each source, and the pools not counted. Read at
// scrape time from the model, so they are never stale.
#ifndef GPUSCHED_SCHEDULER_DRA_COUNTS_H_
#define GPUSCHED_SCHEDULER_DRA_COUNTS_H_

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "scheduler/cluster_model.h"
#include "scheduler/dra_describe.h"

namespace gpusched {

struct DraCounts {
  // Per driver, devices by DraDeviceCondition (its enum value).
  std::map<std::string, std::array<int64_t, kDraDeviceConditions.size()>>
      devices;
  int64_t nodes_device_plugin = 0;  // GPUs from allocatable
  int64_t nodes_dra = 0;            // GPUs from ResourceSlices
  int64_t pool_problems = 0;        // pools some node's slices left out
  friend bool operator==(const DraCounts&, const DraCounts&) = default;
};

// Call with the model's lock held (shared).
DraCounts CountDra(const ClusterModel& model);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_COUNTS_H_
