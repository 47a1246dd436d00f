#include "scheduler/gpu_labels.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

std::string Label(const StringMap& labels, std::string_view key) {
  auto it = labels.find(key);
  return it == labels.end() ? std::string() : it->second;
}

template <typename Int>
Int IntLabel(const StringMap& labels, std::string_view key, Int fallback) {
  auto it = labels.find(key);
  Int value;
  if (it == labels.end() || !absl::SimpleAtoi(it->second, &value)) {
    return fallback;
  }
  return value;
}

}  // namespace

GpuLabels ReadGpuLabels(const StringMap& labels) {
  GpuLabels gpu;
  gpu.product = Label(labels, "nvidia.com/gpu.product");
  gpu.memory_mib = IntLabel<int64_t>(labels, "nvidia.com/gpu.memory", 0);
  gpu.count = IntLabel(labels, "nvidia.com/gpu.count", 0);
  gpu.family = Label(labels, "nvidia.com/gpu.family");
  gpu.compute_major = IntLabel(labels, "nvidia.com/gpu.compute.major", 0);
  gpu.compute_minor = IntLabel(labels, "nvidia.com/gpu.compute.minor", 0);
  gpu.driver_major =
      IntLabel(labels, "nvidia.com/cuda.driver-version.major",
               IntLabel(labels, "nvidia.com/cuda.driver.major", 0));
  gpu.driver_minor =
      IntLabel(labels, "nvidia.com/cuda.driver-version.minor",
               IntLabel(labels, "nvidia.com/cuda.driver.minor", 0));
  gpu.mig_capable = Label(labels, "nvidia.com/mig.capable") == "true";
  gpu.mig_strategy = Label(labels, "nvidia.com/mig.strategy");
  gpu.mig_config_state = Label(labels, "nvidia.com/mig.config.state");
  gpu.sharing_strategy = Label(labels, "nvidia.com/gpu.sharing-strategy");
  // More than 1000 replicas would make one replica less than a milli-GPU.
  gpu.replicas =
      std::clamp(IntLabel(labels, "nvidia.com/gpu.replicas", 1), 1, 1000);
  return gpu;
}

std::string BaseProduct(const std::string& product) {
  constexpr std::string_view kShared = "-SHARED";
  if (absl::EndsWith(product, Sv(kShared))) {
    return product.substr(0, product.size() - kShared.size());
  }
  return product;
}

}  // namespace gpusched
