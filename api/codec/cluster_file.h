#ifndef GPUSCHED_API_CODEC_CLUSTER_FILE_H_
#define GPUSCHED_API_CODEC_CLUSTER_FILE_H_

// Cluster files: the Nodes and Pods of a cluster as `kubectl get nodes,pods
// -o yaml` (or `-o json`) prints them, for offline runs, demos and tests.

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

struct ClusterObjects {
  std::vector<Node> nodes;
  std::vector<Pod> pods;
  // "Kind namespace/name" (or "Kind name" when cluster-scoped) of objects of
  // other kinds, in file order; kept so later features (PodGroup, ...) can
  // see what was there.
  std::vector<std::string> skipped;
};

// Accepts a List (kind List, NodeList or PodList) with `items`, a single
// object, or multi-document YAML ("---" separated); the same in JSON when
// the text starts with '{'. Items of a NodeList/PodList may omit `kind`;
// items of a plain List may not. Errors are InvalidArgument naming
// `source_name`, the document (when there are several), the line (YAML) and
// the field path, e.g.
//   cluster.yaml: line 42: items[3].status.allocatable.cpu: invalid quantity
//   "12x": ...
absl::StatusOr<ClusterObjects> ParseClusterText(std::string_view text,
                                                std::string_view source_name);

// Reads `path` and parses it with ParseClusterText, naming errors by `path`.
absl::StatusOr<ClusterObjects> LoadClusterFile(const std::string& path);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_CLUSTER_FILE_H_
