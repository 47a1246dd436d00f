#ifndef GPUSCHED_SCHEDULER_GPU_LABELS_H_
#define GPUSCHED_SCHEDULER_GPU_LABELS_H_

#include <cstdint>
#include <string>

#include "scheduler/k8s_objects.h"

namespace gpusched {

// What GPU Feature Discovery says about a node's GPUs (nvidia.com/* labels).
// Absent labels leave the defaults. Reference: gpu-facts.md §1.
struct GpuLabels {
  std::string product;           // nvidia.com/gpu.product
  int64_t memory_mib = 0;        // nvidia.com/gpu.memory
  int count = 0;                 // nvidia.com/gpu.count (all physical GPUs)
  std::string family;            // nvidia.com/gpu.family
  int compute_major = 0;         // nvidia.com/gpu.compute.major
  int compute_minor = 0;         // nvidia.com/gpu.compute.minor
  int driver_major = 0;          // nvidia.com/cuda.driver-version.major
  int driver_minor = 0;          // (or the deprecated cuda.driver.major)
  bool mig_capable = false;      // nvidia.com/mig.capable
  std::string mig_strategy;      // nvidia.com/mig.strategy: single|mixed
  std::string mig_config_state;  // nvidia.com/mig.config.state
  std::string sharing_strategy;  // nvidia.com/gpu.sharing-strategy
  int replicas = 1;              // nvidia.com/gpu.replicas (>= 1)
};

GpuLabels ReadGpuLabels(const StringMap& labels);

// "NVIDIA-H100-80GB-HBM3-SHARED" -> "NVIDIA-H100-80GB-HBM3": GFD appends
// -SHARED to the product when replicas > 1, which is not another model.
std::string BaseProduct(const std::string& product);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_LABELS_H_
