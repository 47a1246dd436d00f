#include "api/codec/k8s_json.h"

#include <utility>

#include "api/codec/gpu_topology_annotation.h"
#include "api/codec/k8s_decode_impl.h"
#include "api/codec/k8s_json_adapter.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;

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
  return codec_internal::DecodeJsonObject<Pod>(
      value, path, codec_internal::DecodePodInto<JsonValue>);
}

absl::StatusOr<Node> DecodeNode(simdjson::dom::element value,
                                std::string_view path) {
  absl::StatusOr<Node> node = codec_internal::DecodeJsonObject<Node>(
      value, path, codec_internal::DecodeNodeInto<JsonValue>);
  if (node.ok()) ReadGpuTopologyAnnotation(*node);
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
