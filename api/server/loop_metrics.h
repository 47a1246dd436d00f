#ifndef GPUSCHED_API_SERVER_LOOP_METRICS_H_
#define GPUSCHED_API_SERVER_LOOP_METRICS_H_

#include <functional>
#include <string>

#include "api/controller/admission_loop.h"

namespace gpusched {

// What /metrics appends for the admission loop (ExtenderApiOptions::
// append_queue_metrics): the queues' gauges and counts from the loop's last
// published snapshot, without the engine's lock, while this replica
// decides; nothing while it stands by. The loop must outlive the callback.
std::function<void(std::string&)> LoopQueueMetrics(const AdmissionLoop& loop);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_LOOP_METRICS_H_
