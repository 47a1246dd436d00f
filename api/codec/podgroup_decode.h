#ifndef GPUSCHED_API_CODEC_PODGROUP_DECODE_H_
#define GPUSCHED_API_CODEC_PODGROUP_DECODE_H_

// PodGroup objects of Volcano (scheduling.volcano.sh/v1beta1), of the
// coscheduling plugin (scheduling.x-k8s.io/v1alpha1) and of Kubernetes
// itself (scheduling.k8s.io/v1beta1) to the domain PodGroup; the API group
// of `apiVersion` picks the flavor. Unknown fields are ignored
// and null means absent, as for Pods and Nodes (k8s_json.h). Errors are
// InvalidArgument naming the field path, and the line for YAML:
// `line 7: PodGroup.spec.minMember: must be at least 1, got 0`.
//
// Like k8s_json.h this header exposes simdjson, for watch handlers that
// decode elements of documents they have already parsed.

#include <string_view>

#include "absl/status/statusor.h"
#include "queueing/workload_types.h"
#include "simdjson.h"

namespace gpusched {

// `path` prefixes every error message, e.g. "PodGroup" or "items[3]".
absl::StatusOr<PodGroup> DecodePodGroup(simdjson::dom::element value,
                                        std::string_view path);

// Convenience: parse then decode one PodGroup (paths start "PodGroup").
absl::StatusOr<PodGroup> PodGroupFromJson(std::string_view json);
// One YAML document; errors are prefixed with `source_name`.
absl::StatusOr<PodGroup> PodGroupFromYaml(std::string_view yaml,
                                          std::string_view source_name);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_PODGROUP_DECODE_H_
