#include "api/codec/configmap_data_json.h"

#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"

namespace gpusched {
namespace {

namespace ci = codec_internal;
using ci::JsonValue;
using ci::PathSegment;

}  // namespace

absl::StatusOr<std::optional<std::string>> ConfigMapDataOf(
    std::string_view body, std::string_view key) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      ci::ParseJsonObject(parser, body, "ConfigMap");
  if (!root.ok()) return root.status();
  std::optional<JsonValue> data = ci::Member(JsonValue(*root), "data");
  if (!data.has_value()) return std::optional<std::string>();
  // A segment points at its parent: the root must outlive it.
  const PathSegment root_at = PathSegment::Root("ConfigMap");
  const PathSegment at = root_at.Field("data");
  if (auto s = ci::ExpectObject(*data, at); !s.ok()) return s;
  if (!ci::Member(*data, key).has_value()) return std::optional<std::string>();
  std::string_view text;
  if (auto s = ci::OptionalString(*data, at, key, &text); !s.ok()) return s;
  return std::optional<std::string>(std::string(text));
}

std::string EncodeConfigMapWithData(std::string_view namespace_name,
                                    std::string_view name, std::string_view key,
                                    std::string_view text) {
  JsonWriter w;
  w.Raw(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{)");
  w.Key("name").String(name);
  w.Raw(",").Key("namespace").String(namespace_name);
  w.Raw(R"(,"labels":{"app.kubernetes.io/name":"gpusched"}},"data":{)");
  w.Key(key).String(text).Raw("}}");
  return w.Take();
}

std::string EncodeConfigMapDataPatch(std::string_view key,
                                     std::string_view text) {
  JsonWriter w;
  w.Raw(R"({"data":{)").Key(key).String(text).Raw("}}");
  return w.Take();
}

}  // namespace gpusched
