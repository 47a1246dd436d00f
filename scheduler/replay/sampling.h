#ifndef GPUSCHED_SCHEDULER_REPLAY_SAMPLING_H_
#define GPUSCHED_SCHEDULER_REPLAY_SAMPLING_H_

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/replay/trace.h"

namespace gpusched::replay {

// The replay's only source of randomness, seeded. std::mt19937_64 is fully
// specified by the standard; the std distributions are not, so the mapping
// to a range is done here, so that a seed gives the same replay everywhere.
class SeededRandom {
 public:
  explicit SeededRandom(uint64_t seed) : engine_(seed) {}
  // Uniform in [0, n); n > 0.
  uint64_t Below(uint64_t n);

 private:
  std::mt19937_64 engine_;
};

// The arrival sequence of the FGD paper's workload inflation: indices into
// `pods`, drawn uniformly with replacement, until the GPU milli requested by
// the drawn pods reaches `load` x `capacity_milli`. Fails when no pod asks
// for a GPU (the sequence would never end) or load/capacity are not
// positive.
absl::StatusOr<std::vector<int>> SampleArrivals(std::span<const TracePod> pods,
                                                int64_t capacity_milli,
                                                double load, uint64_t seed);

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_SAMPLING_H_
