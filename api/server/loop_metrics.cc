#include "api/server/loop_metrics.h"

#include "absl/strings/str_cat.h"
#include "api/server/metrics.h"
#include "api/server/queue_metrics.h"

namespace gpusched {

void AppendWriteFailures(const std::map<WriteFailureKey, int64_t>& failures,
                         std::string& out) {
  AppendMetricHeader(
      out, "gpusched_decision_write_failures_total", "counter",
      "Decision writes gpusched gave up (kind: admit, revoke, status; code: "
      "the API server's HTTP status, or the fault when none came). A refused "
      "admission is withdrawn, never left half done.");
  for (const auto& [key, count] : failures) {
    absl::StrAppend(&out, "gpusched_decision_write_failures_total{kind=\"",
                    EscapeLabelValue(key.kind), "\",code=\"",
                    EscapeLabelValue(key.code), "\"} ", count, "\n");
  }
}

void AppendSyncTroubles(const SyncTroubles& troubles, std::string& out) {
  AppendMetricHeader(out, "gpusched_podgroup_api_list_failing", "gauge",
                     "1 while a PodGroup API's list keeps failing: its gangs "
                     "wait (PodGroupAPIUnavailable), nothing else does.");
  for (const auto& [api, error] : troubles.failing_apis) {
    absl::StrAppend(&out, "gpusched_podgroup_api_list_failing{api=\"",
                    EscapeLabelValue(api), "\"} 1\n");
  }
  AppendMetricHeader(out, "gpusched_watch_decode_errors_total", "counter",
                     "Listed or watched objects that did not decode: logged "
                     "and kept as they were, never taken for gone.");
  for (const auto& [kind, count] :
       {std::pair{"nodes", troubles.node_decode_errors},
        std::pair{"pods", troubles.pod_decode_errors}}) {
    absl::StrAppend(&out, "gpusched_watch_decode_errors_total{kind=\"", kind,
                    "\"} ", count, "\n");
  }
  if (!troubles.kueue_guarded) return;
  AppendMetricHeader(out, "gpusched_kueue_manager_active", "gauge",
                     "1 while a Kueue manager is active on the cluster (its "
                     "leader Lease held, or its webhooks installed): "
                     "gpusched then decides nothing.");
  absl::StrAppend(&out, "gpusched_kueue_manager_active ",
                  troubles.kueue_manager.empty() ? 0 : 1, "\n");
}

std::string ReadinessNotes(const SyncTroubles& troubles) {
  std::string out;
  if (!troubles.kueue_manager.empty()) {
    absl::StrAppend(&out, "refusing to decide: ", troubles.kueue_manager, "\n");
  }
  for (const auto& [api, error] : troubles.failing_apis) {
    absl::StrAppend(&out, "degraded: ", api,
                    " PodGroups cannot be listed, their gangs wait "
                    "(PodGroupAPIUnavailable): ",
                    error, "\n");
  }
  return out;
}

std::function<void(std::string&)> LoopQueueMetrics(
    const AdmissionLoop& loop, const DecisionWriter* writer) {
  return [&loop, writer](std::string& out) {
    if (writer != nullptr) AppendWriteFailures(writer->failure_counts(), out);
    if (!loop.deciding()) return;
    AppendQueueMetrics(*loop.Queues(), loop.QueueCounts(), out);
  };
}

}  // namespace gpusched
