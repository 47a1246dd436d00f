#ifndef GPUSCHED_API_SERVER_NODES_JSON_H_
#define GPUSCHED_API_SERVER_NODES_JSON_H_

#include <string>

#include "scheduler/cluster_model.h"

namespace gpusched {

// The GET /v1/nodes document: per node its GPU labels, topology (and why a
// default was used), and per GPU model, memory, free/used milli, health and
// the pods holding it; MIG pools with their instances.
std::string EncodeNodes(const ClusterModel& model);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_NODES_JSON_H_
