#include "api/codec/runtime_history_json.h"

#include <utility>

#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"

namespace gpusched {
namespace {

namespace ci = codec_internal;
using ci::JsonValue;
using ci::PathSegment;
using ci::ValueKind;

absl::Status ReadRuns(const JsonValue& entry, const PathSegment& at,
                      std::vector<int64_t>* out) {
  std::optional<JsonValue> runs = ci::Member(entry, "runsMs");
  if (!runs.has_value()) return absl::OkStatus();
  const PathSegment field = at.Field("runsMs");
  if (runs->kind() != ValueKind::kArray) {
    return ci::TypeError(*runs, field, "array");
  }
  size_t index = 0;
  return runs->ForEachElement([&](const JsonValue& element) {
    int64_t run = 0;
    const PathSegment item = field.Index(index++);
    if (!element.GetInt64(&run)) return ci::TypeError(element, item, "integer");
    if (run < 0) {
      return ci::FieldError(element.line(), item, "a run cannot be negative");
    }
    out->push_back(run);
    return absl::OkStatus();
  });
}

absl::StatusOr<RuntimeLog::Entry> ReadEntry(const JsonValue& element,
                                            const PathSegment& at) {
  if (auto s = ci::ExpectObject(element, at); !s.ok()) return s;
  RuntimeLog::Entry entry;
  std::string_view queue, shape;
  if (auto s = ci::RequiredString(element, at, "clusterQueue", &queue);
      !s.ok()) {
    return s;
  }
  if (auto s = ci::RequiredString(element, at, "shape", &shape); !s.ok()) {
    return s;
  }
  entry.cluster_queue.assign(queue);
  entry.shape.assign(shape);
  if (auto s = ci::OptionalInt64(element, at, "lastEndedMs", &entry.last_ms);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadRuns(element, at, &entry.runs_ms); !s.ok()) return s;
  return entry;
}

}  // namespace

std::string EncodeRuntimeHistory(
    const std::vector<RuntimeLog::Entry>& entries) {
  JsonWriter w;
  w.Raw(R"({"entries":[)");
  bool first = true;
  for (const RuntimeLog::Entry& entry : entries) {
    if (!first) w.Raw(",");
    first = false;
    w.Raw("{").Key("clusterQueue").String(entry.cluster_queue);
    w.Raw(",").Key("shape").String(entry.shape);
    w.Raw(",").Key("runsMs").Raw("[");
    for (size_t i = 0; i < entry.runs_ms.size(); ++i) {
      if (i > 0) w.Raw(",");
      w.Int(entry.runs_ms[i]);
    }
    w.Raw("],").Key("lastEndedMs").Int(entry.last_ms).Raw("}");
  }
  w.Raw("]}");
  return w.Take();
}

absl::StatusOr<std::vector<RuntimeLog::Entry>> DecodeRuntimeHistory(
    std::string_view text) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      ci::ParseJsonObject(parser, text, kRuntimeHistoryKey);
  if (!root.ok()) return root.status();
  const PathSegment at = PathSegment::Root(kRuntimeHistoryKey);
  std::vector<RuntimeLog::Entry> out;
  std::optional<JsonValue> entries = ci::Member(JsonValue(*root), "entries");
  if (!entries.has_value()) return out;
  const PathSegment field = at.Field("entries");
  if (entries->kind() != ValueKind::kArray) {
    return ci::TypeError(*entries, field, "array");
  }
  size_t index = 0;
  absl::Status status = entries->ForEachElement([&](const JsonValue& e) {
    absl::StatusOr<RuntimeLog::Entry> entry =
        ReadEntry(e, field.Index(index++));
    if (!entry.ok()) return entry.status();
    out.push_back(*std::move(entry));
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return out;
}

absl::StatusOr<std::optional<std::string>> RuntimeHistoryOfConfigMap(
    std::string_view body) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      ci::ParseJsonObject(parser, body, "ConfigMap");
  if (!root.ok()) return root.status();
  std::optional<JsonValue> data = ci::Member(JsonValue(*root), "data");
  if (!data.has_value()) return std::optional<std::string>();
  const PathSegment root_at = PathSegment::Root("ConfigMap");
  const PathSegment at = root_at.Field("data");
  if (auto s = ci::ExpectObject(*data, at); !s.ok()) return s;
  std::string_view text;
  if (auto s = ci::OptionalString(*data, at, kRuntimeHistoryKey, &text);
      !s.ok()) {
    return s;
  }
  if (!ci::Member(*data, kRuntimeHistoryKey).has_value()) {
    return std::optional<std::string>();
  }
  return std::optional<std::string>(std::string(text));
}

std::string EncodeRuntimeHistoryConfigMap(std::string_view namespace_name,
                                          std::string_view name,
                                          std::string_view history) {
  JsonWriter w;
  w.Raw(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{)");
  w.Key("name").String(name).Raw(",").Key("namespace").String(namespace_name);
  w.Raw(R"(,"labels":{"app.kubernetes.io/name":"gpusched"}},"data":{)");
  w.Key(kRuntimeHistoryKey).String(history).Raw("}}");
  return w.Take();
}

std::string EncodeRuntimeHistoryPatch(std::string_view history) {
  JsonWriter w;
  w.Raw(R"({"data":{)").Key(kRuntimeHistoryKey).String(history).Raw("}}");
  return w.Take();
}

}  // namespace gpusched
