#include "api/codec/k8s_json.h"

#include <utility>

#include "api/codec/gpu_topology_annotation.h"
#include "api/codec/k8s_decode_impl.h"
#include "api/codec/k8s_json_adapter.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;

// Parses into a per-thread parser so that repeated calls reuse its buffers;
// the returned element is valid until the next parse on this thread.
absl::StatusOr<simdjson::dom::element> ParseJson(std::string_view json) {
  static thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::error_code code =
      parser.parse(json.data(), json.size()).get(root);
  if (code != simdjson::SUCCESS) {
    return codec_internal::MalformedJsonError(json, code);
  }
  return root;
}

}  // namespace

absl::StatusOr<Pod> DecodePod(simdjson::dom::element value,
                              std::string_view path) {
  Pod pod;
  const PathSegment root = PathSegment::Root(path);
  absl::Status status =
      codec_internal::DecodePodInto(JsonValue(value), root, &pod);
  if (!status.ok()) return status;
  return pod;
}

absl::StatusOr<Node> DecodeNode(simdjson::dom::element value,
                                std::string_view path) {
  Node node;
  const PathSegment root = PathSegment::Root(path);
  absl::Status status =
      codec_internal::DecodeNodeInto(JsonValue(value), root, &node);
  if (!status.ok()) return status;
  ReadGpuTopologyAnnotation(node);
  return node;
}

absl::StatusOr<Pod> PodFromJson(std::string_view json) {
  absl::StatusOr<simdjson::dom::element> root = ParseJson(json);
  if (!root.ok()) return root.status();
  return DecodePod(*root, "Pod");
}

absl::StatusOr<Node> NodeFromJson(std::string_view json) {
  absl::StatusOr<simdjson::dom::element> root = ParseJson(json);
  if (!root.ok()) return root.status();
  return DecodeNode(*root, "Node");
}

}  // namespace gpusched
