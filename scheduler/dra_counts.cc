#include "scheduler/dra_counts.h"

#include "scheduler/gpu_map.h"

namespace gpusched {

DraCounts CountDra(const ClusterModel& model) {
  DraCounts counts;
  for (const NodeState* node : model.SortedNodes()) {
    switch (GpuSourceOf(*node)) {
      case GpuSource::kDevicePlugin:
        ++counts.nodes_device_plugin;
        break;
      case GpuSource::kDra:
        ++counts.nodes_dra;
        break;
      case GpuSource::kNone:
        break;
    }
    const DraNodeDevices* dra = node->node().dra_devices.get();
    if (dra == nullptr) continue;
    counts.pool_problems += static_cast<int64_t>(dra->problems.size());
    for (const DraDeviceState& state : dra->devices) {
      auto& by_condition = counts.devices[state.driver];  // zeroed when new
      ++by_condition[static_cast<size_t>(ConditionOf(state))];
    }
  }
  return counts;
}

}  // namespace gpusched
