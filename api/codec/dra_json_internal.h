#ifndef GPUSCHED_API_CODEC_DRA_JSON_INTERNAL_H_
#define GPUSCHED_API_CODEC_DRA_JSON_INTERNAL_H_

// Internal: what dra_json.cc (slices, classes, taint rules) and
// dra_claim_json.cc (claims and their templates) share. Include only from
// those .cc files.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/codec/json_fields.h"
#include "api/codec/k8s_decode_impl.h"
#include "api/codec/k8s_json_adapter.h"
#include "scheduler/dra_objects.h"
#include "simdjson.h"

namespace gpusched::codec_internal {

// An int64 member value; null leaves `*out` as it is.
absl::Status DecodeInt64(const JsonValue& v, const PathSegment& at,
                         int64_t* out);

// selectors[]: each {"cel": {"expression": "..."}}, both required, since a
// selector the scheduler skipped would admit devices it should not.
absl::Status DecodeDraSelectors(const JsonValue& v, const PathSegment& at,
                                std::vector<std::string>* expressions);

// A top-level DRA object: it must be an object, and each of its fields is
// handed to on_field(key, value, path, T*).
template <typename T>
using DraFieldDecoder = absl::Status (*)(std::string_view, const JsonValue&,
                                         const PathSegment&, T*);

template <typename T>
absl::StatusOr<T> DecodeDraObject(simdjson::dom::element value,
                                  std::string_view path,
                                  DraFieldDecoder<T> on_field) {
  const JsonValue v(value);
  const PathSegment at = PathSegment::Root(path);
  if (v.kind() != ValueKind::kObject) return TypeError(v, at, "object");
  T out;
  absl::Status status =
      v.ForEachField([&](std::string_view key, const JsonValue& child) {
        return on_field(key, child, at.Field(key), &out);
      });
  if (!status.ok()) return status;
  return out;
}

// Parses `json` (a parser per call: DRA objects come one at a time, and a
// parser kept would keep the largest document's buffers) and decodes it.
template <typename T>
absl::StatusOr<T> DraFromJson(
    std::string_view json, std::string_view root,
    absl::StatusOr<T> (*decode)(simdjson::dom::element, std::string_view)) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> document = ParseJson(parser, json);
  if (!document.ok()) return document.status();
  return decode(*document, root);
}

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_DRA_JSON_INTERNAL_H_
