#ifndef GPUSCHED_API_CODEC_K8S_JSON_ADAPTER_H_
#define GPUSCHED_API_CODEC_K8S_JSON_ADAPTER_H_

// Internal: the simdjson DOM value adapter for k8s_decode_impl.h. Uses only
// the error-code API, so the decode hot path never throws.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/codec/k8s_decode_impl.h"
#include "simdjson.h"

namespace gpusched::codec_internal {

class JsonValue {
 public:
  explicit JsonValue(simdjson::dom::element element) : element_(element) {}

  ValueKind kind() const {
    switch (element_.type()) {
      case simdjson::dom::element_type::OBJECT:
        return ValueKind::kObject;
      case simdjson::dom::element_type::ARRAY:
        return ValueKind::kArray;
      case simdjson::dom::element_type::STRING:
        return ValueKind::kString;
      case simdjson::dom::element_type::INT64:
      case simdjson::dom::element_type::UINT64:
      case simdjson::dom::element_type::DOUBLE:
        return ValueKind::kNumber;
      case simdjson::dom::element_type::BOOL:
        return ValueKind::kBool;
      case simdjson::dom::element_type::NULL_VALUE:
        return ValueKind::kNull;
    }
    return ValueKind::kNull;
  }

  // The DOM keeps no source positions.
  int line() const { return 0; }

  bool GetString(std::string_view* out) const {
    return element_.get_string().get(*out) == simdjson::SUCCESS;
  }

  // A quantity may be written as a JSON number (1, 0.5); render it back to
  // the text the quantity parser expects.
  bool GetQuantity(NumberBuffer* buffer, std::string_view* out) const {
    switch (element_.type()) {
      case simdjson::dom::element_type::STRING:
        return GetString(out);
      case simdjson::dom::element_type::INT64:
        *out = FormatInt64(element_.get_int64().value_unsafe(), buffer);
        return true;
      case simdjson::dom::element_type::UINT64:
        *out = FormatUint64(element_.get_uint64().value_unsafe(), buffer);
        return true;
      case simdjson::dom::element_type::DOUBLE:
        *out = FormatDouble(element_.get_double().value_unsafe(), buffer);
        return true;
      default:
        return false;
    }
  }

  bool GetInt64(int64_t* out) const {
    return element_.type() == simdjson::dom::element_type::INT64 &&
           element_.get_int64().get(*out) == simdjson::SUCCESS;
  }

  bool GetBool(bool* out) const {
    return element_.get_bool().get(*out) == simdjson::SUCCESS;
  }

  size_t ArraySizeHint() const {
    simdjson::dom::array array;
    if (element_.get_array().get(array) != simdjson::SUCCESS) return 0;
    return array.size();
  }

  std::optional<JsonValue> Find(std::string_view key) const {
    simdjson::dom::element child;
    if (element_.at_key(key).get(child) != simdjson::SUCCESS) {
      return std::nullopt;
    }
    return JsonValue(child);
  }

  template <typename F>
  absl::Status ForEachField(F&& on_field) const {
    simdjson::dom::object object;
    if (element_.get_object().get(object) != simdjson::SUCCESS) {
      return absl::OkStatus();
    }
    for (simdjson::dom::key_value_pair field : object) {
      absl::Status status = on_field(field.key, JsonValue(field.value));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  template <typename F>
  absl::Status ForEachElement(F&& on_element) const {
    simdjson::dom::array array;
    if (element_.get_array().get(array) != simdjson::SUCCESS) {
      return absl::OkStatus();
    }
    for (simdjson::dom::element element : array) {
      absl::Status status = on_element(JsonValue(element));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  simdjson::dom::element element_;
};

static_assert(K8sValue<JsonValue>);

// InvalidArgument "malformed JSON at byte B (line L, column C): reason" for
// text that simdjson rejected with `code`. simdjson reports no position, so
// this re-scans the text (error path only) to find one.
absl::Status MalformedJsonError(std::string_view text,
                                simdjson::error_code code);

// Decodes one whole object of type T from `value` with `into` (a
// Decode*Into instantiated for JsonValue), naming `path` as the root of
// every error.
template <typename T, typename Into>
absl::StatusOr<T> DecodeJsonObject(simdjson::dom::element value,
                                   std::string_view path, Into into) {
  T out;
  absl::Status status = into(JsonValue(value), PathSegment::Root(path), &out);
  if (!status.ok()) return status;
  return out;
}

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_K8S_JSON_ADAPTER_H_
