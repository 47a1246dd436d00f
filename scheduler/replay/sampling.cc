#include "scheduler/replay/sampling.h"

#include <algorithm>
#include <cmath>

#include "absl/status/status.h"

namespace gpusched::replay {

uint64_t SeededRandom::Below(uint64_t n) {
  // Rejection keeps every value equally likely: draws from the incomplete
  // last block of size n are thrown away.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t draw = engine_();
  while (draw >= limit) draw = engine_();
  return draw % n;
}

absl::StatusOr<std::vector<int>> SampleArrivals(std::span<const TracePod> pods,
                                                int64_t capacity_milli,
                                                double load, uint64_t seed) {
  if (!(load > 0) || capacity_milli <= 0) {
    return absl::InvalidArgumentError(
        "sampling needs a positive load and a cluster with GPUs");
  }
  const bool any_gpu = std::any_of(pods.begin(), pods.end(), [](const auto& p) {
    return p.GpuMilliRequest() > 0;
  });
  if (!any_gpu) {
    return absl::InvalidArgumentError(
        "no pod in the list asks for a GPU: the arrived GPU load can never "
        "grow");
  }
  const double target = load * static_cast<double>(capacity_milli);
  SeededRandom random(seed);
  std::vector<int> arrivals;
  double arrived = 0;
  while (arrived < target) {
    const int index = static_cast<int>(random.Below(pods.size()));
    arrivals.push_back(index);
    arrived += static_cast<double>(pods[index].GpuMilliRequest());
  }
  return arrivals;
}

}  // namespace gpusched::replay
