#ifndef GPUSCHED_QUEUEING_ENGINE_INTERNAL_H_
#define GPUSCHED_QUEUEING_ENGINE_INTERNAL_H_

// Shared by the engine's .cc files only.

#include <map>
#include <string>
#include <vector>

#include "queueing/engine.h"

namespace gpusched {

// A successful fit: members already placed in the model, quota not yet
// charged. Commit charges it; dropping it needs Undo.
struct QueueingEngine::Attempt {
  FrAmounts charged;
  std::map<std::string, Placement> placements;
  std::string flavors;  // "h100" or "h100,a100-mig", for messages
};

const ClusterQueue* FindClusterQueue(const Policy& policy,
                                     const std::string& name);
const ResourceFlavor* FindFlavor(const Policy& policy, const std::string& name);

// "team-a" when the workload is queued, "" otherwise.
inline bool IsQueued(const Workload& w) { return !w.cluster_queue.empty(); }

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ENGINE_INTERNAL_H_
