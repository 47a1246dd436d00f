#ifndef GPUSCHED_API_CODEC_K8S_JSON_H_
#define GPUSCHED_API_CODEC_K8S_JSON_H_

// Kubernetes Pod and Node JSON (camelCase, as the API server writes it) to
// the domain structs. Only the fields the scheduler uses are read; unknown
// fields are ignored and null means absent. Errors are InvalidArgument naming
// the field path: `Pod.spec.containers[0].resources.requests["nvidia.com/gpu"]:
// invalid quantity "two": ...`.
//
// This is the one public codec header that exposes simdjson, because request
// handlers decode elements of documents they have already parsed.

#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/k8s_objects.h"
#include "simdjson.h"

namespace gpusched {

// `path` prefixes every error message, e.g. "Pod" or "Nodes.items[3]".
absl::StatusOr<Pod> DecodePod(simdjson::dom::element value,
                              std::string_view path);
absl::StatusOr<Node> DecodeNode(simdjson::dom::element value,
                                std::string_view path);

// Convenience: parse `json` then decode it (error paths start "Pod" / "Node").
// Malformed JSON is InvalidArgument naming the byte offset, line and column.
absl::StatusOr<Pod> PodFromJson(std::string_view json);
absl::StatusOr<Node> NodeFromJson(std::string_view json);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_K8S_JSON_H_
