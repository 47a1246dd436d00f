#ifndef GPUSCHED_API_CODEC_K8S_YAML_ADAPTER_H_
#define GPUSCHED_API_CODEC_K8S_YAML_ADAPTER_H_

// Internal: the yaml-cpp value adapter for k8s_decode_impl.h. In YAML every
// scalar is text, so a scalar serves as string, quantity, integer or bool
// alike: `count: 8` is the label value "8", `cpu: 0.5` the quantity "0.5".

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "api/codec/k8s_decode_impl.h"
#include "yaml-cpp/yaml.h"

namespace gpusched::codec_internal {

class YamlValue {
 public:
  explicit YamlValue(YAML::Node node) : node_(std::move(node)) {}

  ValueKind kind() const {
    switch (node_.Type()) {
      case YAML::NodeType::Map:
        return ValueKind::kObject;
      case YAML::NodeType::Sequence:
        return ValueKind::kArray;
      case YAML::NodeType::Scalar:
        return ValueKind::kString;
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined:
        return ValueKind::kNull;
    }
    return ValueKind::kNull;
  }

  // yaml-cpp marks are 0-based, -1 when unknown.
  int line() const { return node_.Mark().line + 1; }

  // The string_view points into the document's node storage, which the
  // caller keeps alive for the whole decode.
  bool GetString(std::string_view* out) const {
    if (!node_.IsScalar()) return false;
    *out = node_.Scalar();
    return true;
  }

  bool GetQuantity(NumberBuffer* /*buffer*/, std::string_view* out) const {
    return GetString(out);
  }

  bool GetInt64(int64_t* out) const {
    return node_.IsScalar() && absl::SimpleAtoi(node_.Scalar(), out);
  }

  // Accepts what yaml-cpp does: true/false, yes/no, on/off in any case.
  bool GetBool(bool* out) const {
    return node_.IsScalar() && YAML::convert<bool>::decode(node_, *out);
  }

  size_t ArraySizeHint() const { return node_.IsSequence() ? node_.size() : 0; }

  std::optional<YamlValue> Find(std::string_view key) const {
    if (!node_.IsMap()) return std::nullopt;
    const YAML::Node& map = node_;
    YAML::Node child = map[std::string(key)];
    if (!child.IsDefined()) return std::nullopt;
    return YamlValue(child);
  }

  template <typename F>
  absl::Status ForEachField(F&& on_field) const {
    for (const auto& entry : node_) {
      const std::string& key =
          entry.first.IsScalar() ? entry.first.Scalar() : EmptyKey();
      absl::Status status = on_field(key, YamlValue(entry.second));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

  template <typename F>
  absl::Status ForEachElement(F&& on_element) const {
    for (const auto& element : node_) {
      absl::Status status = on_element(YamlValue(element));
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  // Complex (non-scalar) keys never name a Kubernetes field.
  static const std::string& EmptyKey() {
    static const std::string* const kEmpty = new std::string();
    return *kEmpty;
  }

  YAML::Node node_;
};

static_assert(K8sValue<YamlValue>);

}  // namespace gpusched::codec_internal

#endif  // GPUSCHED_API_CODEC_K8S_YAML_ADAPTER_H_
