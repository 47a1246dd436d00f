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
  return ci::DecodeListDocument<RuntimeLog::Entry>(text, kRuntimeHistoryKey,
                                                   "entries", ReadEntry);
}

}  // namespace gpusched
