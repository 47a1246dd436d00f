#include "api/codec/json_fields.h"

namespace gpusched::codec_internal {

absl::StatusOr<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
                                                 std::string_view text) {
  simdjson::dom::element root;
  const simdjson::error_code code =
      parser.parse(text.data(), text.size()).get(root);
  if (code != simdjson::SUCCESS) return MalformedJsonError(text, code);
  return root;
}

absl::StatusOr<simdjson::dom::element> ParseJsonObject(
    simdjson::dom::parser& parser, std::string_view text,
    std::string_view root) {
  absl::StatusOr<simdjson::dom::element> document = ParseJson(parser, text);
  if (!document.ok()) return document;
  absl::Status status =
      ExpectObject(JsonValue(*document), PathSegment::Root(root));
  if (!status.ok()) return status;
  return document;
}

absl::Status ExpectObject(const JsonValue& v, const PathSegment& at) {
  if (v.kind() == ValueKind::kObject) return absl::OkStatus();
  return TypeError(v, at, "object");
}

std::optional<JsonValue> Member(const JsonValue& object, std::string_view key) {
  std::optional<JsonValue> member = object.Find(key);
  if (!member.has_value() || member->kind() == ValueKind::kNull) {
    return std::nullopt;
  }
  return member;
}

absl::StatusOr<JsonValue> RequiredObject(const JsonValue& object,
                                         const PathSegment& at,
                                         std::string_view key) {
  std::optional<JsonValue> member = Member(object, key);
  if (!member.has_value()) return FieldError(0, at.Field(key), "missing");
  if (absl::Status s = ExpectObject(*member, at.Field(key)); !s.ok()) return s;
  return *member;
}

absl::Status OptionalString(const JsonValue& object, const PathSegment& at,
                            std::string_view key, std::string_view* out) {
  std::optional<JsonValue> member = Member(object, key);
  if (!member.has_value() || member->GetString(out)) return absl::OkStatus();
  return TypeError(*member, at.Field(key), "string");
}

absl::Status OptionalInt64(const JsonValue& object, const PathSegment& at,
                           std::string_view key, int64_t* out) {
  std::optional<JsonValue> member = Member(object, key);
  if (!member.has_value() || member->GetInt64(out)) return absl::OkStatus();
  return TypeError(*member, at.Field(key), "integer");
}

absl::Status RequiredString(const JsonValue& object, const PathSegment& at,
                            std::string_view key, std::string_view* out) {
  std::optional<JsonValue> member = Member(object, key);
  if (!member.has_value()) return FieldError(0, at.Field(key), "missing");
  if (member->GetString(out)) return absl::OkStatus();
  return TypeError(*member, at.Field(key), "string");
}

absl::Status RequiredBool(const JsonValue& object, const PathSegment& at,
                          std::string_view key, bool* out) {
  std::optional<JsonValue> member = Member(object, key);
  if (!member.has_value()) return FieldError(0, at.Field(key), "missing");
  if (member->GetBool(out)) return absl::OkStatus();
  return TypeError(*member, at.Field(key), "boolean");
}

absl::StatusOr<std::optional<simdjson::dom::array>> ListItems(
    simdjson::dom::element list, const PathSegment& at) {
  const JsonValue value(list);
  if (absl::Status status = ExpectObject(value, at); !status.ok()) {
    return status;
  }
  std::optional<JsonValue> items = Member(value, "items");
  if (!items.has_value()) return std::nullopt;
  simdjson::dom::array array;
  if (list["items"].get_array().get(array) != simdjson::SUCCESS) {
    return TypeError(*items, at.Field("items"), "array");
  }
  return array;
}

}  // namespace gpusched::codec_internal
