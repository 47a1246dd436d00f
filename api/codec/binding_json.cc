#include "api/codec/binding_json.h"

#include <optional>

#include "absl/strings/str_join.h"
#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;

// `object`.`key`.`field` as a string, "" when a level is missing or null.
absl::Status NestedString(const JsonValue& object, const PathSegment& at,
                          std::string_view key, std::string_view field,
                          std::string* out) {
  std::optional<JsonValue> inner = codec_internal::Member(object, key);
  if (!inner.has_value()) return absl::OkStatus();
  const PathSegment inner_at = at.Field(key);
  absl::Status status = codec_internal::ExpectObject(*inner, inner_at);
  std::string_view text;
  if (status.ok()) {
    status = codec_internal::OptionalString(*inner, inner_at, field, &text);
  }
  out->assign(text);
  return status;
}

}  // namespace

std::string EncodeBinding(const Pod& pod, std::string_view node,
                          const GpuAssignment& assignment) {
  JsonWriter w;
  w.Raw("{").Key("apiVersion").String("v1").Raw(",");
  w.Key("kind").String("Binding").Raw(",");
  w.Key("metadata").Raw("{").Key("name").String(pod.meta.name).Raw(",");
  w.Key("namespace").String(pod.meta.namespace_name);
  if (!pod.meta.uid.empty()) w.Raw(",").Key("uid").String(pod.meta.uid);
  if (!assignment.dra_names.empty()) {
    w.Raw(",").Key("annotations").Raw("{");
    w.Key(kPlannedGpusAnnotation)
        .String(absl::StrJoin(assignment.dra_names, ","));
    w.Raw("}");
  } else if (!assignment.gpu_ids.empty()) {
    w.Raw(",").Key("annotations").Raw("{");
    w.Key(kGpuIdsAnnotation).String(FormatGpuIds(assignment.gpu_ids));
    w.Raw("}");
  }
  w.Raw("},").Key("target").Raw("{").Key("apiVersion").String("v1").Raw(",");
  w.Key("kind").String("Node").Raw(",").Key("name").String(node);
  w.Raw("}}");
  return w.Take();
}

absl::StatusOr<PodPlacement> DecodePodPlacement(std::string_view pod_json) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJsonObject(parser, pod_json, "Pod");
  if (!root.ok()) return root.status();
  const JsonValue pod(*root);
  const PathSegment at = PathSegment::Root("Pod");
  PodPlacement placement;
  absl::Status status =
      NestedString(pod, at, "metadata", "uid", &placement.uid);
  if (status.ok()) {
    status = NestedString(pod, at, "spec", "nodeName", &placement.node);
  }
  if (!status.ok()) return status;
  return placement;
}

}  // namespace gpusched
