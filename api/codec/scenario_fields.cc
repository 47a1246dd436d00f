// Shared helpers of the scenario parser: strict mappings, scalars,
// durations, paths.

#include <algorithm>
#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/k8s_yaml_adapter.h"
#include "api/codec/scenario_internal.h"
#include "policies/value_parsers.h"
#include "scheduler/base/strings.h"

namespace gpusched::scenario_internal {

using codec_internal::FieldError;
using codec_internal::YamlValue;

namespace {

// Debian's absl::StrJoin cannot format std::string_view itself.
void AppendText(std::string* out, std::string_view text) { out->append(text); }

}  // namespace

int LineOf(const YAML::Node& node) { return node.Mark().line + 1; }

int Field::line() const { return value.IsNull() ? LineOf(key) : LineOf(value); }

absl::Status ErrorAt(int line, const PathSegment& at,
                     std::string_view message) {
  return FieldError(line, at, message);
}

absl::Status ErrorAt(const YAML::Node& node, const PathSegment& at,
                     std::string_view message) {
  return FieldError(LineOf(node), at, message);
}

absl::Status TypeErrorAt(const YAML::Node& node, const PathSegment& at,
                         std::string_view expected, int line) {
  return FieldError(
      line > 0 ? line : LineOf(node), at,
      absl::StrCat("expected ", Sv(expected), ", got ",
                   Sv(codec_internal::KindName(YamlValue(node).kind()))));
}

absl::StatusOr<FieldMap> CollectFields(
    const YAML::Node& node, const PathSegment& at,
    std::span<const std::string_view> allowed) {
  if (!node.IsMap()) return TypeErrorAt(node, at, "object");
  FieldMap fields;
  for (const auto& entry : node) {
    const YAML::Node& key = entry.first;
    const std::string name = key.IsScalar() ? key.Scalar() : "";
    const PathSegment here = at.Field(name);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return ErrorAt(key, here,
                     absl::StrCat("unknown field; expected one of ",
                                  absl::StrJoin(allowed, ", ", AppendText)));
    }
    if (!fields.emplace(name, Field{key, entry.second}).second) {
      return ErrorAt(key, here, "duplicate field");
    }
  }
  return fields;
}

absl::StatusOr<std::string> ScalarText(const YAML::Node& node,
                                       const PathSegment& at,
                                       std::string_view expected, int line) {
  if (!node.IsScalar()) return TypeErrorAt(node, at, expected, line);
  return node.Scalar();
}

absl::StatusOr<int64_t> DecodeDuration(const Field& field,
                                       const PathSegment& at) {
  absl::StatusOr<std::string> text =
      ScalarText(field.value, at, "duration (such as 90s)", field.line());
  if (!text.ok()) return text.status();
  absl::StatusOr<int64_t> ms = policy_internal::ParseDurationMs(*text);
  if (!ms.ok()) {
    return ErrorAt(
        field.line(), at,
        absl::StrCat("invalid value \"", *text, "\": ", ms.status().message()));
  }
  return *ms;
}

std::string ResolvePath(const ScenarioSource& source, std::string_view path) {
  const std::filesystem::path given(path);
  if (given.is_absolute() || source.base_dir.empty()) return given.string();
  return (std::filesystem::path(source.base_dir) / given)
      .lexically_normal()
      .string();
}

absl::Status MalformedYaml(std::string_view source, const YAML::Exception& e) {
  const std::string where =
      e.mark.is_null() ? "" : absl::StrCat("line ", e.mark.line + 1, ": ");
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(source), ": ", where, "malformed YAML: ", e.msg));
}

}  // namespace gpusched::scenario_internal
