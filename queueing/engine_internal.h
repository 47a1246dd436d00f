#ifndef GPUSCHED_QUEUEING_ENGINE_INTERNAL_H_
#define GPUSCHED_QUEUEING_ENGINE_INTERNAL_H_

// Shared by the engine's .cc files only.

#include "queueing/engine.h"

namespace gpusched {

// True when the workload is in a ClusterQueue ("team-a"), false outside
// queues or while its LocalQueue is unresolved.
inline bool IsQueued(const Workload& w) { return !w.cluster_queue.empty(); }

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ENGINE_INTERNAL_H_
