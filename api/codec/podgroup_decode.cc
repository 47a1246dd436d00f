#include "api/codec/podgroup_decode.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/codec/k8s_json_adapter.h"
#include "api/codec/k8s_yaml_adapter.h"
#include "api/codec/podgroup_decode_impl.h"
#include "policies/yaml_guard.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;
using codec_internal::YamlValue;

absl::Status WithSource(std::string_view source, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(Sv(source), ": ", status.message()));
}

}  // namespace

absl::StatusOr<PodGroup> DecodePodGroup(simdjson::dom::element value,
                                        std::string_view path) {
  return codec_internal::DecodeJsonObject<PodGroup>(
      value, path, codec_internal::DecodePodGroupInto<JsonValue>);
}

absl::StatusOr<PodGroup> PodGroupFromJson(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::error_code code =
      parser.parse(json.data(), json.size()).get(root);
  if (code != simdjson::SUCCESS) {
    return codec_internal::MalformedJsonError(json, code);
  }
  return DecodePodGroup(root, "PodGroup");
}

absl::StatusOr<PodGroup> PodGroupFromYaml(std::string_view yaml,
                                          std::string_view source_name) {
  if (absl::Status refused = CheckYamlText(yaml); !refused.ok()) {
    return WithSource(source_name, refused);
  }
  YAML::Node node;
  // yaml-cpp reports syntax errors only by exception.
  try {
    node = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    const std::string where =
        e.mark.is_null() ? "" : absl::StrCat("line ", e.mark.line + 1, ": ");
    return WithSource(source_name, absl::InvalidArgumentError(absl::StrCat(
                                       where, "malformed YAML: ", e.msg)));
  }
  PodGroup group;
  const PathSegment root = PathSegment::Root("PodGroup");
  absl::Status status =
      codec_internal::DecodePodGroupInto(YamlValue(node), root, &group);
  if (!status.ok()) return WithSource(source_name, status);
  return group;
}

}  // namespace gpusched
