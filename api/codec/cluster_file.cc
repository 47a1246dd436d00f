#include "api/codec/cluster_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "api/codec/file_text.h"
#include "api/codec/gpu_topology_annotation.h"
#include "api/codec/k8s_decode_impl.h"
#include "api/codec/k8s_json_adapter.h"
#include "api/codec/k8s_yaml_adapter.h"
#include "policies/yaml_guard.h"

namespace gpusched {
namespace {

using codec_internal::FieldError;
using codec_internal::JsonValue;
using codec_internal::K8sValue;
using codec_internal::PathSegment;
using codec_internal::ToAbsl;
using codec_internal::TypeError;
using codec_internal::ValueKind;
using codec_internal::YamlValue;

// The object's `kind`, or "" when absent.
template <K8sValue V>
absl::StatusOr<std::string_view> KindOf(const V& v, const PathSegment& at) {
  std::optional<V> kind = v.Find("kind");
  if (!kind.has_value() || kind->kind() == ValueKind::kNull) {
    return std::string_view();
  }
  std::string_view text;
  if (!kind->GetString(&text)) {
    return TypeError(*kind, at.Field("kind"), "string");
  }
  return text;
}

template <K8sValue V>
std::string SkippedName(const V& v, std::string_view kind) {
  std::string_view name, name_space;
  if (std::optional<V> meta = v.Find("metadata")) {
    if (std::optional<V> field = meta->Find("name")) field->GetString(&name);
    if (std::optional<V> field = meta->Find("namespace")) {
      field->GetString(&name_space);
    }
  }
  std::string out(kind);
  out.push_back(' ');
  if (!name_space.empty()) out.append(name_space).push_back('/');
  out.append(name);
  return out;
}

template <K8sValue V>
absl::Status DecodeObject(const V& v, const PathSegment& at,
                          std::string_view kind, ClusterObjects* out) {
  if (kind == "Pod") {
    return codec_internal::DecodePodInto(v, at, &out->pods.emplace_back());
  }
  if (kind == "Node") {
    Node& node = out->nodes.emplace_back();
    absl::Status status = codec_internal::DecodeNodeInto(v, at, &node);
    if (status.ok()) ReadGpuTopologyAnnotation(node);
    return status;
  }
  if (kind.empty()) return FieldError(v.line(), at, "missing kind");
  out->skipped.push_back(SkippedName(v, kind));
  return absl::OkStatus();
}

// `items` of a List; `default_kind` is what a NodeList/PodList implies for
// items that omit their kind (the API server omits it there).
template <K8sValue V>
absl::Status DecodeItems(const V& list, const PathSegment& at,
                         std::string_view default_kind, ClusterObjects* out) {
  std::optional<V> items = list.Find("items");
  if (!items.has_value() || items->kind() == ValueKind::kNull) {
    return absl::OkStatus();
  }
  const PathSegment items_at = at.Field("items");
  if (items->kind() != ValueKind::kArray) {
    return TypeError(*items, items_at, "array");
  }
  if (default_kind == "Node") out->nodes.reserve(items->ArraySizeHint());
  if (default_kind == "Pod") out->pods.reserve(items->ArraySizeHint());
  size_t index = 0;
  return items->ForEachElement([&](const V& item) -> absl::Status {
    const PathSegment item_at = items_at.Index(index++);
    if (item.kind() != ValueKind::kObject) {
      return TypeError(item, item_at, "object");
    }
    absl::StatusOr<std::string_view> kind = KindOf(item, item_at);
    if (!kind.ok()) return kind.status();
    return DecodeObject(item, item_at, kind->empty() ? default_kind : *kind,
                        out);
  });
}

template <K8sValue V>
absl::Status DecodeDocument(const V& doc, const PathSegment& at,
                            ClusterObjects* out) {
  // An empty document, e.g. after a trailing "---".
  if (doc.kind() == ValueKind::kNull) return absl::OkStatus();
  if (doc.kind() != ValueKind::kObject) return TypeError(doc, at, "object");
  absl::StatusOr<std::string_view> kind = KindOf(doc, at);
  if (!kind.ok()) return kind.status();
  if (*kind == "List") return DecodeItems(doc, at, "", out);
  if (*kind == "NodeList") return DecodeItems(doc, at, "Node", out);
  if (*kind == "PodList") return DecodeItems(doc, at, "Pod", out);
  return DecodeObject(doc, at, *kind, out);
}

absl::Status WithSource(std::string_view source, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(ToAbsl(source), ": ", status.message()));
}

absl::StatusOr<ClusterObjects> ParseJsonCluster(std::string_view text,
                                                std::string_view source) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  const simdjson::error_code code =
      parser.parse(text.data(), text.size()).get(root);
  if (code != simdjson::SUCCESS) {
    return WithSource(source, codec_internal::MalformedJsonError(text, code));
  }
  ClusterObjects out;
  const PathSegment at = PathSegment::Context("");
  absl::Status status = DecodeDocument(JsonValue(root), at, &out);
  if (!status.ok()) return WithSource(source, status);
  return out;
}

absl::StatusOr<std::vector<YAML::Node>> LoadYaml(std::string_view text,
                                                 std::string_view source) {
  if (absl::Status refused = CheckYamlText(text); !refused.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(source), ": ", refused.message()));
  }
  // yaml-cpp reports syntax errors only by exception.
  try {
    return YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    std::string where;
    if (!e.mark.is_null()) {
      where = absl::StrCat("line ", e.mark.line + 1, ", column ",
                           e.mark.column + 1, ": ");
    }
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(source), ": ", where, "malformed YAML: ", e.msg));
  }
}

absl::StatusOr<ClusterObjects> ParseYamlCluster(std::string_view text,
                                                std::string_view source) {
  absl::StatusOr<std::vector<YAML::Node>> docs = LoadYaml(text, source);
  if (!docs.ok()) return docs.status();
  ClusterObjects out;
  for (size_t i = 0; i < docs->size(); ++i) {
    // Name the document only when there is more than one.
    const std::string label =
        docs->size() > 1 ? absl::StrCat("document ", i + 1) : "";
    const PathSegment at = PathSegment::Context(label);
    absl::Status status = DecodeDocument(YamlValue((*docs)[i]), at, &out);
    if (!status.ok()) return WithSource(source, status);
  }
  return out;
}

bool LooksLikeJson(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // BOM
  while (!text.empty() &&
         absl::ascii_isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  return !text.empty() && text.front() == '{';
}

}  // namespace

absl::StatusOr<ClusterObjects> ParseClusterText(std::string_view text,
                                                std::string_view source_name) {
  if (LooksLikeJson(text)) return ParseJsonCluster(text, source_name);
  return ParseYamlCluster(text, source_name);
}

absl::StatusOr<ClusterObjects> LoadClusterFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  return ParseClusterText(*text, path);
}

}  // namespace gpusched
