#include "api/codec/crd_json.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;
using codec_internal::ValueKind;

// Calls `on_entry(entry, path)` for each element of the array `v` at `at`.
template <typename F>
absl::Status ForEachEntry(const JsonValue& v, const PathSegment& at,
                          F&& on_entry) {
  if (v.kind() != ValueKind::kArray) {
    return codec_internal::TypeError(v, at, "array");
  }
  size_t index = 0;
  return v.ForEachElement([&](const JsonValue& entry) {
    return on_entry(entry, at.Index(index++));
  });
}

// spec.versions: whether `version` is among them with served: true.
absl::StatusOr<bool> ServesVersion(const JsonValue& crd, const PathSegment& at,
                                   std::string_view version) {
  const PathSegment spec = at.Field("spec");
  std::optional<JsonValue> versions;
  if (std::optional<JsonValue> s = codec_internal::Member(crd, "spec")) {
    versions = codec_internal::Member(*s, "versions");
  }
  if (!versions.has_value()) {
    return codec_internal::FieldError(0, spec.Field("versions"), "missing");
  }
  bool served_here = false;
  absl::Status status = ForEachEntry(
      *versions, spec.Field("versions"),
      [&](const JsonValue& entry, const PathSegment& path) {
        std::string_view name;
        bool served = false;
        absl::Status read =
            codec_internal::RequiredString(entry, path, "name", &name);
        if (read.ok()) {
          read = codec_internal::RequiredBool(entry, path, "served", &served);
        }
        served_here = served_here || (read.ok() && name == version && served);
        return read;
      });
  if (!status.ok()) return status;
  return served_here;
}

// status.conditions: whether the first Established is "True". A CRD just
// created has no status yet: not established.
absl::StatusOr<bool> IsEstablished(const JsonValue& crd,
                                   const PathSegment& at) {
  std::optional<JsonValue> status = codec_internal::Member(crd, "status");
  if (!status.has_value()) return false;
  const PathSegment status_at = at.Field("status");
  if (absl::Status s = codec_internal::ExpectObject(*status, status_at);
      !s.ok()) {
    return s;
  }
  std::optional<JsonValue> conditions =
      codec_internal::Member(*status, "conditions");
  if (!conditions.has_value()) return false;
  std::optional<bool> established;
  absl::Status read = ForEachEntry(
      *conditions, status_at.Field("conditions"),
      [&](const JsonValue& condition, const PathSegment& path) {
        std::string_view type, value;
        absl::Status s =
            codec_internal::RequiredString(condition, path, "type", &type);
        if (s.ok()) {
          s = codec_internal::RequiredString(condition, path, "status", &value);
        }
        if (s.ok() && type == "Established" && !established.has_value()) {
          established = value == "True";
        }
        return s;
      });
  if (!read.ok()) return read;
  return established.value_or(false);
}

}  // namespace

absl::StatusOr<CrdServing> DecodeCrd(simdjson::dom::element crd,
                                     std::string_view version) {
  const JsonValue value(crd);
  const PathSegment kind = PathSegment::Context("CustomResourceDefinition");
  if (absl::Status s = codec_internal::ExpectObject(value, kind); !s.ok()) {
    return s;
  }
  std::string_view name;
  std::optional<JsonValue> meta = codec_internal::Member(value, "metadata");
  absl::Status named =
      meta.has_value()
          ? codec_internal::RequiredString(*meta, kind.Field("metadata"),
                                           "name", &name)
          : codec_internal::FieldError(0, kind.Field("metadata"), "missing");
  if (!named.ok()) return named;
  const std::string context =
      absl::StrCat("CustomResourceDefinition ", std::string(name));
  const PathSegment at = PathSegment::Context(context);
  absl::StatusOr<bool> served = ServesVersion(value, at, version);
  if (!served.ok()) return served.status();
  absl::StatusOr<bool> established = IsEstablished(value, at);
  if (!established.ok()) return established.status();
  return CrdServing{.name = std::string(name),
                    .established = *established,
                    .version_served = *served};
}

absl::StatusOr<std::vector<CrdServing>> DecodeCrdList(
    std::string_view body, std::string_view version) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJson(parser, body);
  if (!root.ok()) return root.status();
  absl::StatusOr<std::optional<simdjson::dom::array>> items =
      codec_internal::ListItems(
          *root, PathSegment::Root("CustomResourceDefinitionList"));
  if (!items.ok()) return items.status();
  std::vector<CrdServing> crds;
  if (!items->has_value()) return crds;
  for (simdjson::dom::element item : **items) {
    absl::StatusOr<CrdServing> crd = DecodeCrd(item, version);
    if (!crd.ok()) return crd.status();
    crds.push_back(*std::move(crd));
  }
  return crds;
}

}  // namespace gpusched
