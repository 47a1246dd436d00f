#ifndef GPUSCHED_API_SERVER_NODES_JSON_H_
#define GPUSCHED_API_SERVER_NODES_JSON_H_

#include <string>
#include <vector>

#include "scheduler/cluster_model.h"
#include "scheduler/dra_undecided.h"

namespace gpusched {

// The GET /v1/nodes document: per node its GPU labels, topology (and why a
// default was used), and per GPU model, memory, free/used milli, health and
// the pods holding it; MIG pools with their instances. With DRA, a GPU's
// device name, a node's devices, taints and problems, and (top level
// "dra") the device selectors gpusched leaves to kube-scheduler.
std::string EncodeNodes(
    const ClusterModel& model,
    const std::vector<DraUndecidedSelector>& undecided = {});

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_NODES_JSON_H_
