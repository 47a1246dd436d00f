#ifndef GPUSCHED_API_SERVER_LOOP_METRICS_H_
#define GPUSCHED_API_SERVER_LOOP_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "api/controller/admission_loop.h"
#include "api/controller/decision_writer.h"

namespace gpusched {

// What /metrics appends for the admission loop (ExtenderApiOptions::
// append_queue_metrics): the queues' gauges and counts from the loop's last
// published snapshot, without the engine's lock, while this replica
// decides (nothing of them while it stands by); and, with a writer,
// gpusched_decision_write_failures_total{kind,code}, the writes it gave up,
// on every replica. The loop and the writer must outlive the callback.
std::function<void(std::string&)> LoopQueueMetrics(
    const AdmissionLoop& loop, const DecisionWriter* writer = nullptr);

// What the watches could not read: gpusched_podgroup_api_list_failing{api}
// (1 while an API's list keeps failing) and
// gpusched_watch_decode_errors_total{kind} (objects skipped, kept as they
// were).
struct SyncTroubles {
  std::map<std::string, std::string> failing_apis;  // api -> last error
  int64_t node_decode_errors = 0;
  int64_t pod_decode_errors = 0;
  // Why gpusched decides nothing (a Kueue manager is active); "" if not.
  std::string kueue_manager;
  bool kueue_guarded = false;  // the guard runs (live, with queues)
};
void AppendSyncTroubles(const SyncTroubles& troubles, std::string& out);
// /readyz's lines for them: empty when nothing fails.
std::string ReadinessNotes(const SyncTroubles& troubles);

// gpusched_decision_write_failures_total's lines.
void AppendWriteFailures(const std::map<WriteFailureKey, int64_t>& failures,
                         std::string& out);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_LOOP_METRICS_H_
