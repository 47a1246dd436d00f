// How much of each GPU model is allocated, and how much of what is free
// the typical tasks cannot use (fragmentation), for the metrics: the two
// numbers FGD's evaluation reports, per model because a free H100 does not
// help a pod that asks for an A100.
#ifndef GPUSCHED_SCHEDULER_GPU_USAGE_H_
#define GPUSCHED_SCHEDULER_GPU_USAGE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "scheduler/cluster_model.h"
#include "scheduler/fragmentation.h"

namespace gpusched {

// Whole GPUs offered as devices (MIG instances are counted apart, in
// gpusched_mig_instances), healthy ones only.
struct GpuModelUsage {
  std::string model;  // BaseProduct of nvidia.com/gpu.product; "unknown"
  int64_t total_milli = 0;
  int64_t free_milli = 0;
  // Of free_milli, what the shapes cannot use (NodeFragmentation, GPU-only).
  double fragment_milli = 0;

  double AllocationRatio() const;     // allocated / total; 0 when none
  double FragmentationRatio() const;  // fragment / free; 0 when none free
};

// By model name; models without a healthy GPU are left out.
std::vector<GpuModelUsage> GpuUsageByModel(const ClusterModel& model,
                                           std::span<const TaskShape> shapes);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_USAGE_H_
