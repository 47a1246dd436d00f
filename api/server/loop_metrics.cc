#include "api/server/loop_metrics.h"

#include "api/server/queue_metrics.h"

namespace gpusched {

std::function<void(std::string&)> LoopQueueMetrics(const AdmissionLoop& loop) {
  return [&loop](std::string& out) {
    if (!loop.deciding()) return;
    AppendQueueMetrics(*loop.Queues(), loop.QueueCounts(), out);
  };
}

}  // namespace gpusched
