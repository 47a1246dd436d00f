#ifndef GPUSCHED_API_CODEC_JSON_FIELDS_H_
#define GPUSCHED_API_CODEC_JSON_FIELDS_H_

// Internal: member reads for the codec's small Kubernetes decoders (Lease,
// CustomResourceDefinition, watch events, Lists, AdmissionReview) over the
// simdjson value adapter, each naming the path it rejects as the Pod and
// Node decoders do ("Lease.spec.renewTime: expected string, got number").
// Include only from .cc files.

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/codec/k8s_decode_impl.h"
#include "api/codec/k8s_json_adapter.h"
#include "simdjson.h"

namespace gpusched::codec_internal {

// Parses `text` with `parser`; malformed JSON is InvalidArgument naming the
// byte (MalformedJsonError).
absl::StatusOr<simdjson::dom::element> ParseJson(simdjson::dom::parser& parser,
                                                 std::string_view text);

// ParseJson, and the document must be an object: `root` names it in the
// error ("Pod: expected object, got array").
absl::StatusOr<simdjson::dom::element> ParseJsonObject(
    simdjson::dom::parser& parser, std::string_view text,
    std::string_view root);

// `v` must be an object (null is not one).
absl::Status ExpectObject(const JsonValue& v, const PathSegment& at);

// The member `key` of `object`, or nullopt when it is missing or null.
std::optional<JsonValue> Member(const JsonValue& object, std::string_view key);

// The member `key` of `object`, which must be an object: missing or null
// is "<at>.<key>: missing", another type "...: expected object, got ...".
absl::StatusOr<JsonValue> RequiredObject(const JsonValue& object,
                                         const PathSegment& at,
                                         std::string_view key);

// Optional members: missing or null leaves `*out` as it is; any other type
// is an error naming `at`.`key`.
absl::Status OptionalString(const JsonValue& object, const PathSegment& at,
                            std::string_view key, std::string_view* out);
absl::Status OptionalInt64(const JsonValue& object, const PathSegment& at,
                           std::string_view key, int64_t* out);

// Required members: missing, null or another type is "<path>: missing" or
// "<path>: expected string, got number".
absl::Status RequiredString(const JsonValue& object, const PathSegment& at,
                            std::string_view key, std::string_view* out);
absl::Status RequiredBool(const JsonValue& object, const PathSegment& at,
                          std::string_view key, bool* out);

// The items of a List body (`list` at `at`, which must be an object): none
// when `items` is missing or null, an error naming `at`.items when it is not
// an array.
absl::StatusOr<std::optional<simdjson::dom::array>> ListItems(
    simdjson::dom::element list, const PathSegment& at);

// A document {"<list>":[...]} named `root` in errors ("runtimes.json"),
// each element read by `read(element, at)` into a T: none when the list is
// missing or null; the first element `read` rejects fails the whole.
template <typename T, typename Read>
absl::StatusOr<std::vector<T>> DecodeListDocument(std::string_view text,
                                                  std::string_view root,
                                                  std::string_view list,
                                                  Read read) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> document =
      ParseJsonObject(parser, text, root);
  if (!document.ok()) return document.status();
  const PathSegment at = PathSegment::Root(root);
  std::vector<T> out;
  std::optional<JsonValue> items = Member(JsonValue(*document), list);
  if (!items.has_value()) return out;
  const PathSegment field = at.Field(list);
  if (items->kind() != ValueKind::kArray) {
    return TypeError(*items, field, "array");
  }
  size_t index = 0;
  absl::Status status = items->ForEachElement([&](const JsonValue& e) {
    absl::StatusOr<T> item = read(e, field.Index(index++));
    if (!item.ok()) return item.status();
    out.push_back(*std::move(item));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_JSON_FIELDS_H_
