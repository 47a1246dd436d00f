#ifndef GPUSCHED_API_SERVER_METRICS_H_
#define GPUSCHED_API_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "scheduler/extender_service.h"

namespace gpusched {

// "# HELP name help" and "# TYPE name type" lines.
void AppendMetricHeader(std::string& out, std::string_view name,
                        std::string_view type, std::string_view help);

// Prometheus metrics of the extender, rendered in the text exposition
// format. Counters and histograms are keyed by small label sets; the GPU
// gauges are read from the model at scrape time so they are never stale.
class Metrics {
 public:
  // Bucket upper bounds in seconds: 50 µs .. 5 s, wide enough for a filter
  // on 5,000 nodes and a slow bind alike.
  static constexpr std::array<double, 14> kBuckets = {
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
      0.01,    0.025,  0.05,    0.1,    0.25,  1.0,    5.0};

  void ObserveRequest(std::string_view verb, int code, double seconds);
  void CountPolicyReloadError();
  // -1: not one of two replicas (no --leader-lease), the gauge is left out;
  // 1 while this replica stands by, 0 while it decides.
  void SetStandby(int standby) { standby_ = standby; }
  std::string Render(const GpuCounts& gpus) const;

 private:
  // The request counters and duration histograms; mu_ held.
  void RenderRequests(std::string& out) const;

  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> durations_;
  uint64_t policy_reload_errors_ = 0;
  std::atomic<int> standby_{-1};
};

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_METRICS_H_
