#include "api/server/metrics.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/base/strings.h"

namespace gpusched {

void Metrics::ObserveRequest(std::string_view verb, int code, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++requests_[{std::string(verb), code}];
  Histogram& h = durations_[std::string(verb)];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++h.buckets[i];
  }
  ++h.count;
  h.sum += seconds;
}

void Metrics::CountPolicyReloadError() {
  std::lock_guard<std::mutex> lock(mu_);
  ++policy_reload_errors_;
}

void AppendMetricHeader(std::string& out, std::string_view name,
                        std::string_view type, std::string_view help) {
  absl::StrAppend(&out, "# HELP ", Sv(name), " ", Sv(help), "\n# TYPE ",
                  Sv(name), " ", Sv(type), "\n");
}

namespace {

std::string Le(double bound) { return absl::StrFormat("%g", bound); }

}  // namespace

void Metrics::RenderRequests(std::string& out) const {
  AppendMetricHeader(out, "gpusched_extender_requests_total", "counter",
                     "Extender requests by verb and HTTP status code.");
  for (const auto& [key, count] : requests_) {
    absl::StrAppend(&out, "gpusched_extender_requests_total{verb=\"", key.first,
                    "\",code=\"", key.second, "\"} ", count, "\n");
  }
  AppendMetricHeader(out, "gpusched_extender_request_duration_seconds",
                     "histogram", "Server time per extender request, by verb.");
  for (const auto& [verb, h] : durations_) {
    const std::string name = "gpusched_extender_request_duration_seconds";
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      absl::StrAppend(&out, name, "_bucket{verb=\"", verb, "\",le=\"",
                      Le(kBuckets[i]), "\"} ", h.buckets[i], "\n");
    }
    absl::StrAppend(&out, name, "_bucket{verb=\"", verb, "\",le=\"+Inf\"} ",
                    h.count, "\n", name, "_sum{verb=\"", verb, "\"} ",
                    absl::StrFormat("%.9f", h.sum), "\n", name,
                    "_count{verb=\"", verb, "\"} ", h.count, "\n");
  }
}

namespace {

void RenderGpuCounts(const GpuCounts& gpus, std::string& out) {
  AppendMetricHeader(out, "gpusched_nodes", "gauge",
                     "Nodes in gpusched's model.");
  absl::StrAppend(&out, "gpusched_nodes ", gpus.nodes, "\n");
  AppendMetricHeader(
      out, "gpusched_gpus", "gauge",
      "Whole GPUs by state (free, used, shared = partly used by shares, "
      "unhealthy).");
  absl::StrAppend(&out, "gpusched_gpus{state=\"free\"} ", gpus.free, "\n",
                  "gpusched_gpus{state=\"used\"} ", gpus.used, "\n",
                  "gpusched_gpus{state=\"shared\"} ", gpus.shared, "\n",
                  "gpusched_gpus{state=\"unhealthy\"} ", gpus.unhealthy, "\n");
  AppendMetricHeader(out, "gpusched_mig_instances", "gauge",
                     "MIG instances by state.");
  absl::StrAppend(
      &out, "gpusched_mig_instances{state=\"free\"} ", gpus.mig_free, "\n",
      "gpusched_mig_instances{state=\"used\"} ", gpus.mig_used, "\n");
}

}  // namespace

std::string Metrics::Render(const GpuCounts& gpus) const {
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  RenderRequests(out);
  RenderGpuCounts(gpus, out);
  AppendMetricHeader(out, "gpusched_policy_reload_errors_total", "counter",
                     "Policy file reloads rejected as invalid.");
  absl::StrAppend(&out, "gpusched_policy_reload_errors_total ",
                  policy_reload_errors_, "\n");
  if (const int standby = standby_; standby >= 0) {
    AppendMetricHeader(
        out, "gpusched_standby", "gauge",
        "1 while this replica stands by (the kube-scheduler beside it does "
        "not hold the leader Lease), 0 while it decides.");
    absl::StrAppend(&out, "gpusched_standby ", standby, "\n");
  }
  return out;
}

}  // namespace gpusched
