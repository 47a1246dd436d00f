#ifndef GPUSCHED_BENCH_LIB_LATENCY_H_
#define GPUSCHED_BENCH_LIB_LATENCY_H_

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"

namespace gpusched::bench {

// Collects one duration per iteration and publishes percentiles as
// benchmark counters (microseconds), since a mean hides the tail that
// kube-scheduler actually waits on.
class Latencies {
 public:
  void Add(std::chrono::nanoseconds d) { samples_.push_back(d.count()); }

  // `prefix` names a second series beside the first ("cpu_p99_us").
  void Publish(benchmark::State& state, const std::string& prefix = "") {
    if (samples_.empty()) return;
    state.counters[prefix + "p50_us"] = At(0.50);
    state.counters[prefix + "p99_us"] = At(0.99);
    state.counters[prefix + "p999_us"] = At(0.999);
    state.counters[prefix + "max_us"] = At(1.0);
  }

  // The q-quantile in microseconds (0 with no samples).
  double At(double q) {
    if (samples_.empty()) return 0;
    if (!std::is_sorted(samples_.begin(), samples_.end())) {
      std::sort(samples_.begin(), samples_.end());
    }
    size_t i = static_cast<size_t>(q * (samples_.size() - 1));
    return samples_[i] / 1000.0;
  }

 private:
  std::vector<long long> samples_;
};

}  // namespace gpusched::bench

#endif  // GPUSCHED_BENCH_LIB_LATENCY_H_
