// Kubernetes JSON for benchmarks, shaped like what the API server and
// kube-scheduler really send: a Node carries GFD and NFD labels, capacity,
// allocatable, annotations, conditions, 50 image entries and managedFields,
// about 13 KB each, so that nodeCacheCapable=false requests are realistic in
// size and structure (several MB for 500 nodes).
#ifndef GPUSCHED_BENCH_LIB_KUBE_JSON_H_
#define GPUSCHED_BENCH_LIB_KUBE_JSON_H_

#include <string>
#include <vector>

#include "scheduler/k8s_objects.h"

namespace gpusched::bench {

// A whole Node object as kube-scheduler marshals it (Go field order), built
// from the generated node's name, labels and resources plus realistic noise.
// `index` varies addresses, UIDs and image lists deterministically.
std::string KubeNodeJson(const Node& node, int index);

// A whole Pod object: metadata, containers with resources, nodeName,
// tolerations and status as the API server returns them.
std::string KubePodJson(const Pod& pod);

// ExtenderArgs with NodeNames (nodeCacheCapable: true).
std::string ExtenderArgsWithNames(const Pod& pod,
                                  const std::vector<std::string>& names);
// ExtenderArgs with a full NodeList (nodeCacheCapable: false).
std::string ExtenderArgsWithNodes(const Pod& pod,
                                  const std::vector<std::string>& node_json);
// ExtenderBindingArgs.
std::string BindingArgs(const Pod& pod, const std::string& node);

// A `kubectl get nodes,pods -o json` style List, for `gpusched serve
// --cluster`.
std::string ClusterListJson(const std::vector<Node>& nodes,
                            const std::vector<Pod>& pods);

}  // namespace gpusched::bench

#endif  // GPUSCHED_BENCH_LIB_KUBE_JSON_H_
