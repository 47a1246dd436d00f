#ifndef GPUSCHED_API_CODEC_K8S_DECODE_SHAPES_H_
#define GPUSCHED_API_CODEC_K8S_DECODE_SHAPES_H_

// Internal: the value adapter contract, paths, errors and the generic
// shapes (object, list, scalars, metadata) that k8s_decode_impl.h's Pod and
// Node walk is built from. Everything is written once over a small value
// adapter so that JSON (simdjson DOM, the hot path) and YAML (yaml-cpp,
// cluster files) cannot drift apart. Include only from .cc files: the
// adapters pull in simdjson and yaml-cpp, which public headers must not
// expose.
//
// A value adapter V is a cheap copyable handle on one parsed value with:
//   ValueKind kind() const;
//   int line() const;                       // 1-based source line, 0 unknown
//   bool GetString(std::string_view*) const;
//   bool GetQuantity(NumberBuffer*, std::string_view*) const;  // text form
//   bool GetInt64(int64_t*) const;
//   bool GetBool(bool*) const;
//   size_t ArraySizeHint() const;           // for reserve(); may be 0
//   std::optional<V> Find(std::string_view key) const;  // object member
//   absl::Status ForEachField(F) const;     // F(std::string_view, const V&)
//   absl::Status ForEachElement(F) const;   // F(const V&)
// ForEach* are called only after kind() confirmed an object or an array.
//
// Null is accepted wherever an object, array, map or string may appear and
// means "absent": the destination keeps its default. Map entries whose value
// is null are dropped for the same reason.

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/resource_list.h"

namespace gpusched::codec_internal {

enum class ValueKind : uint8_t {
  kNull,
  kObject,
  kArray,
  kString,
  kNumber,
  kBool,
};

// Scratch space for a number rendered as quantity text ("1", "0.5").
using NumberBuffer = std::array<char, 40>;

template <typename V>
concept K8sValue = std::copyable<V> &&
    requires(const V v, std::string_view* s, NumberBuffer* buffer, int64_t* i,
             bool* b) {
  { v.kind() } -> std::same_as<ValueKind>;
  { v.line() } -> std::same_as<int>;
  { v.GetString(s) } -> std::same_as<bool>;
  { v.GetQuantity(buffer, s) } -> std::same_as<bool>;
  { v.GetInt64(i) } -> std::same_as<bool>;
  { v.GetBool(b) } -> std::same_as<bool>;
  { v.ArraySizeHint() } -> std::convertible_to<size_t>;
  { v.Find(std::string_view()) } -> std::same_as<std::optional<V>>;
};

// Where a value sits, as a chain of stack frames: building it costs nothing,
// and it is rendered to text only when an error is reported.
struct PathSegment {
  enum class Kind : uint8_t {
    kRoot,     // text printed as is, then ".field": "Pod", "Nodes.items[3]"
    kContext,  // text printed then ": ": "document 2"
    kField,
    kIndex,
    kKey,  // map key: ".cpu", or ["nvidia.com/gpu"] when not an identifier
  };
  const PathSegment* parent = nullptr;
  Kind kind = Kind::kRoot;
  std::string_view text;
  size_t index = 0;

  static PathSegment Root(std::string_view text) {
    return {nullptr, Kind::kRoot, text, 0};
  }
  static PathSegment Context(std::string_view text) {
    return {nullptr, Kind::kContext, text, 0};
  }
  PathSegment Field(std::string_view name) const {
    return {this, Kind::kField, name, 0};
  }
  PathSegment Index(size_t i) const { return {this, Kind::kIndex, {}, i}; }
  PathSegment Key(std::string_view key) const {
    return {this, Kind::kKey, key, 0};
  }
};

// Debian's Abseil is built with its own absl::string_view rather than an
// alias of std::string_view, so the two are converted where they meet.
inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}
inline std::string_view ToStd(absl::string_view s) {
  return std::string_view(s.data(), s.size());
}

// Non-template helpers, in k8s_decode_impl.cc.
std::string RenderPath(const PathSegment& at);
// InvalidArgument "line N: path: message" (line and path when known).
absl::Status FieldError(int line, const PathSegment& at,
                        std::string_view message);
std::string_view KindName(ValueKind kind);
// `invalid quantity "12x": why`, without repeating the prefix when the
// quantity parser already wrote it.
std::string QuantityErrorMessage(std::string_view text,
                                 const absl::Status& status);
// RFC 3339 ("2025-01-01T00:00:00Z", fractional seconds, offsets) to Unix
// seconds, floored.
absl::StatusOr<int64_t> ParseRfc3339Seconds(std::string_view text);
std::string_view FormatInt64(int64_t value, NumberBuffer* buffer);
std::string_view FormatUint64(uint64_t value, NumberBuffer* buffer);
// Shortest text that round-trips, so 0.1 stays "0.1" and is not rounded up
// to 101m by the quantity parser.
std::string_view FormatDouble(double value, NumberBuffer* buffer);

template <K8sValue V>
absl::Status TypeError(const V& v, const PathSegment& at,
                       std::string_view expected) {
  return FieldError(v.line(), at,
                    absl::StrCat("expected ", ToAbsl(expected), ", got ",
                                 ToAbsl(KindName(v.kind()))));
}

// ---------------------------------------------------------------------------
// Generic shapes: object, list, scalar.

// Calls on_field(key, child) for every member; null is an empty object.
template <K8sValue V, typename F>
absl::Status DecodeFields(const V& v, const PathSegment& at, F&& on_field) {
  const ValueKind kind = v.kind();
  if (kind == ValueKind::kNull) return absl::OkStatus();
  if (kind != ValueKind::kObject) return TypeError(v, at, "object");
  return v.ForEachField(std::forward<F>(on_field));
}

// Decodes only the member `name` of `v`, with decode(child, path); the
// other members are ignored and null is an empty object.
template <K8sValue V, typename F>
absl::Status DecodeMember(const V& v, const PathSegment& at,
                          std::string_view name, F&& decode) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    return key == name ? decode(child, at.Field(key)) : absl::OkStatus();
  });
}

// Appends one T per element, decoded by decode(element, path, T*). A null
// element yields a default T, as the Kubernetes API server decodes it.
template <K8sValue V, typename T, typename F>
absl::Status DecodeList(const V& v, const PathSegment& at, std::vector<T>* out,
                        F&& decode) {
  const ValueKind kind = v.kind();
  if (kind == ValueKind::kNull) return absl::OkStatus();
  if (kind != ValueKind::kArray) return TypeError(v, at, "array");
  out->reserve(out->size() + v.ArraySizeHint());
  size_t index = 0;
  return v.ForEachElement([&](const V& element) -> absl::Status {
    T& item = out->emplace_back();
    return decode(element, at.Index(index++), &item);
  });
}

template <K8sValue V>
absl::Status DecodeString(const V& v, const PathSegment& at, std::string* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::string_view text;
  if (!v.GetString(&text)) return TypeError(v, at, "string");
  out->assign(text);
  return absl::OkStatus();
}

template <K8sValue V>
absl::Status DecodeStringList(const V& v, const PathSegment& at,
                              std::vector<std::string>* out) {
  return DecodeList(v, at, out,
                    [](const V& e, const PathSegment& p, std::string* s) {
                      return DecodeString(e, p, s);
                    });
}

template <K8sValue V>
absl::Status DecodeBool(const V& v, const PathSegment& at, bool* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  if (!v.GetBool(out)) return TypeError(v, at, "boolean");
  return absl::OkStatus();
}

template <K8sValue V>
absl::Status DecodeInt32(const V& v, const PathSegment& at,
                         std::optional<int32_t>* out) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  int64_t value = 0;
  if (!v.GetInt64(&value)) return TypeError(v, at, "integer");
  if (value < std::numeric_limits<int32_t>::min() ||
      value > std::numeric_limits<int32_t>::max()) {
    return FieldError(v.line(), at,
                      absl::StrCat("integer ", value, " out of int32 range"));
  }
  *out = static_cast<int32_t>(value);
  return absl::OkStatus();
}

// spec.activeDeadlineSeconds (a positive integer of seconds) in ms.
template <K8sValue V>
absl::Status DecodeDeadline(const V& v, const PathSegment& at,
                            std::optional<int64_t>* ms) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  int64_t seconds = 0;
  if (!v.GetInt64(&seconds)) return TypeError(v, at, "integer");
  if (seconds <= 0 || seconds > std::numeric_limits<int64_t>::max() / 1000) {
    return FieldError(v.line(), at,
                      absl::StrCat("must be a positive number of seconds, "
                                   "not ",
                                   seconds));
  }
  *ms = seconds * 1000;
  return absl::OkStatus();
}

template <K8sValue V>
absl::Status DecodeTimestamp(const V& v, const PathSegment& at,
                             int64_t* unix_seconds) {
  if (v.kind() == ValueKind::kNull) return absl::OkStatus();
  std::string_view text;
  if (!v.GetString(&text)) return TypeError(v, at, "string");
  absl::StatusOr<int64_t> seconds = ParseRfc3339Seconds(text);
  if (!seconds.ok()) {
    return FieldError(v.line(), at, ToStd(seconds.status().message()));
  }
  *unix_seconds = *seconds;
  return absl::OkStatus();
}

// map[string]string: labels, annotations, nodeSelector.
template <K8sValue V>
absl::Status DecodeStringMap(const V& v, const PathSegment& at,
                             StringMap* out) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    if (child.kind() == ValueKind::kNull) return absl::OkStatus();
    std::string_view text;
    if (!child.GetString(&text)) return TypeError(child, at.Key(key), "string");
    // Go's encoder sorts map keys, so appending at the end is the usual case.
    out->insert_or_assign(out->end(), std::string(key), text);
    return absl::OkStatus();
  });
}

// map[ResourceName]Quantity; a quantity is a string ("500m") or a number.
template <K8sValue V>
absl::Status DecodeResourceList(const V& v, const PathSegment& at,
                                ResourceList* out) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    if (child.kind() == ValueKind::kNull) return absl::OkStatus();
    NumberBuffer buffer;
    std::string_view text;
    if (!child.GetQuantity(&buffer, &text)) {
      return TypeError(child, at.Key(key), "quantity (string or number)");
    }
    absl::StatusOr<int64_t> amount = ResourceList::ParseAmount(key, text);
    if (!amount.ok()) {
      return FieldError(child.line(), at.Key(key),
                        QuantityErrorMessage(text, amount.status()));
    }
    out->Set(key, *amount);
    return absl::OkStatus();
  });
}

// ---------------------------------------------------------------------------
// Shared parts of Pods and Nodes.

template <K8sValue V>
absl::Status DecodeObjectMeta(const V& v, const PathSegment& at,
                              ObjectMeta* meta) {
  return DecodeFields(v, at, [&](std::string_view key, const V& child) {
    const PathSegment here = at.Field(key);
    if (key == "name") return DecodeString(child, here, &meta->name);
    if (key == "namespace") {
      return DecodeString(child, here, &meta->namespace_name);
    }
    if (key == "uid") return DecodeString(child, here, &meta->uid);
    if (key == "resourceVersion") {
      return DecodeString(child, here, &meta->resource_version);
    }
    if (key == "labels") return DecodeStringMap(child, here, &meta->labels);
    if (key == "annotations") {
      return DecodeStringMap(child, here, &meta->annotations);
    }
    if (key == "creationTimestamp") {
      return DecodeTimestamp(child, here, &meta->creation_unix_seconds);
    }
    if (key == "deletionTimestamp") {
      int64_t unused = 0;  // when does not matter, only that it is set
      meta->deleting = child.kind() != ValueKind::kNull;
      return DecodeTimestamp(child, here, &unused);
    }
    return absl::OkStatus();
  });
}

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_K8S_DECODE_SHAPES_H_
