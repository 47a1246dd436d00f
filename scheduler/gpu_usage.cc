#include "scheduler/gpu_usage.h"

#include <algorithm>
#include <map>

#include "scheduler/gpu_labels.h"

namespace gpusched {

double GpuModelUsage::AllocationRatio() const {
  if (total_milli == 0) return 0;
  return static_cast<double>(total_milli - free_milli) / total_milli;
}

double GpuModelUsage::FragmentationRatio() const {
  if (free_milli == 0) return 0;
  return std::clamp(fragment_milli / free_milli, 0.0, 1.0);
}

std::vector<GpuModelUsage> GpuUsageByModel(const ClusterModel& model,
                                           std::span<const TaskShape> shapes) {
  std::map<std::string, GpuModelUsage> by_model;
  std::vector<int> free;
  for (const NodeState* node : model.SortedNodes()) {
    const GpuInventory& gpus = node->gpus();
    // Unhealthy GPUs count as 0 free, as the fragmentation scorer counts
    // them: nothing can be placed there.
    free.clear();
    int64_t total = 0;
    for (const GpuDevice& d : gpus.devices()) {
      free.push_back(d.healthy ? d.free_milli : 0);
      if (d.healthy) total += kMilliPerGpu;
    }
    if (total == 0) continue;
    std::string name = BaseProduct(gpus.labels().product);
    if (name.empty()) name = "unknown";
    GpuModelUsage& usage = by_model[name];
    usage.model = name;
    usage.total_milli += total;
    for (int milli : free) usage.free_milli += milli;
    usage.fragment_milli += NodeFragmentation(free, shapes);
  }
  std::vector<GpuModelUsage> out;
  for (auto& [name, usage] : by_model) out.push_back(std::move(usage));
  return out;
}

}  // namespace gpusched
