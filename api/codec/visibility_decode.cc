#include "api/codec/visibility_decode.h"

#include <initializer_list>
#include <utility>

#include "api/codec/json_fields.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

namespace ci = codec_internal;
using ci::JsonValue;
using ci::PathSegment;
using ci::ValueKind;

struct StringField {
  std::string_view key;
  std::string* out;
};
struct IntField {
  std::string_view key;
  int64_t* out;
};

// Missing members leave their outputs as they are: the server leaves out
// what does not apply (a cohort of a ClusterQueue without one).
absl::Status ReadStrings(const JsonValue& object, const PathSegment& at,
                         std::initializer_list<StringField> fields) {
  for (const StringField& field : fields) {
    std::string_view value;
    if (auto s = ci::OptionalString(object, at, field.key, &value); !s.ok()) {
      return s;
    }
    if (!value.empty()) field.out->assign(value);
  }
  return absl::OkStatus();
}

absl::Status ReadInts(const JsonValue& object, const PathSegment& at,
                      std::initializer_list<IntField> fields) {
  for (const IntField& field : fields) {
    if (auto s = ci::OptionalInt64(object, at, field.key, field.out); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadOptionalInt(const JsonValue& object, const PathSegment& at,
                             std::string_view key,
                             std::optional<int64_t>* out) {
  if (!ci::Member(object, key).has_value()) return absl::OkStatus();
  int64_t value = 0;
  if (auto s = ci::OptionalInt64(object, at, key, &value); !s.ok()) return s;
  *out = value;
  return absl::OkStatus();
}

// An RFC 3339 time; missing or empty leaves `out` unset.
absl::Status ReadTime(const JsonValue& object, const PathSegment& at,
                      std::string_view key, std::optional<int64_t>* out) {
  std::string_view text;
  if (auto s = ci::OptionalString(object, at, key, &text); !s.ok()) return s;
  if (text.empty()) return absl::OkStatus();
  absl::StatusOr<int64_t> seconds = ci::ParseRfc3339Seconds(text);
  if (!seconds.ok()) {
    return ci::FieldError(0, at.Field(key), Message(seconds.status()));
  }
  *out = *seconds;
  return absl::OkStatus();
}

// Decodes each object of the array `key` (missing or null: none) with
// `decode(element, path, T&)`.
template <typename T, typename F>
absl::Status ReadArray(const JsonValue& object, const PathSegment& at,
                       std::string_view key, std::vector<T>* out, F&& decode) {
  std::optional<JsonValue> member = ci::Member(object, key);
  if (!member.has_value()) return absl::OkStatus();
  const PathSegment field = at.Field(key);
  if (member->kind() != ValueKind::kArray) {
    return ci::TypeError(*member, field, "array");
  }
  size_t index = 0;
  return member->ForEachElement([&](const JsonValue& element) {
    const PathSegment item = field.Index(index++);
    if (auto s = ci::ExpectObject(element, item); !s.ok()) return s;
    T value;
    if (auto s = decode(element, item, value); !s.ok()) return s;
    out->push_back(std::move(value));
    return absl::OkStatus();
  });
}

absl::Status ReadStringArray(const JsonValue& object, const PathSegment& at,
                             std::string_view key,
                             std::vector<std::string>* out) {
  std::optional<JsonValue> member = ci::Member(object, key);
  if (!member.has_value()) return absl::OkStatus();
  const PathSegment field = at.Field(key);
  if (member->kind() != ValueKind::kArray) {
    return ci::TypeError(*member, field, "array");
  }
  size_t index = 0;
  return member->ForEachElement([&](const JsonValue& element) {
    std::string_view text;
    if (!element.GetString(&text)) {
      return ci::TypeError(element, field.Index(index), "string");
    }
    ++index;
    out->emplace_back(text);
    return absl::OkStatus();
  });
}

// metadata.name and metadata.namespace (the latter may be absent).
absl::Status ReadMetadata(const JsonValue& object, const PathSegment& at,
                          std::string* name, std::string* namespace_name) {
  absl::StatusOr<JsonValue> metadata =
      ci::RequiredObject(object, at, "metadata");
  if (!metadata.ok()) return metadata.status();
  const PathSegment path = at.Field("metadata");
  std::string_view text;
  if (auto s = ci::RequiredString(*metadata, path, "name", &text); !s.ok()) {
    return s;
  }
  name->assign(text);
  if (namespace_name == nullptr) return absl::OkStatus();
  return ReadStrings(*metadata, path, {{"namespace", namespace_name}});
}

// `status`, which may be absent (an object the server has no status for).
std::optional<JsonValue> StatusOf(const JsonValue& object) {
  return ci::Member(object, "status");
}

absl::Status DecodeResource(const JsonValue& v, const PathSegment& at,
                            ResourceUsage& out) {
  if (auto s = ReadStrings(v, at, {{"name", &out.name}}); !s.ok()) return s;
  return ReadInts(v, at,
                  {{"nominal", &out.nominal},
                   {"used", &out.used},
                   {"borrowed", &out.borrowed},
                   {"lent", &out.lent}});
}

absl::Status DecodeFlavor(const JsonValue& v, const PathSegment& at,
                          FlavorUsage& out) {
  if (auto s = ReadStrings(v, at, {{"name", &out.name}}); !s.ok()) return s;
  return ReadArray(v, at, "resources", &out.resources, DecodeResource);
}

absl::Status DecodeClusterQueue(const JsonValue& v, const PathSegment& at,
                                ClusterQueueStatus& out) {
  if (auto s = ReadMetadata(v, at, &out.name, nullptr); !s.ok()) return s;
  std::optional<JsonValue> status = StatusOf(v);
  if (!status.has_value()) return absl::OkStatus();
  const PathSegment path = at.Field("status");
  if (auto s = ReadStrings(*status, path, {{"cohort", &out.cohort}}); !s.ok()) {
    return s;
  }
  if (auto s = ReadInts(*status, path,
                        {{"pendingWorkloads", &out.pending},
                         {"admittedWorkloads", &out.admitted}});
      !s.ok()) {
    return s;
  }
  return ReadArray(*status, path, "flavorsUsage", &out.flavors, DecodeFlavor);
}

absl::Status DecodeCohort(const JsonValue& v, const PathSegment& at,
                          CohortStatus& out) {
  if (auto s = ReadMetadata(v, at, &out.name, nullptr); !s.ok()) return s;
  std::optional<JsonValue> status = StatusOf(v);
  if (!status.has_value()) return absl::OkStatus();
  const PathSegment path = at.Field("status");
  if (auto s = ReadStrings(*status, path, {{"parent", &out.parent}}); !s.ok()) {
    return s;
  }
  return ReadArray(*status, path, "flavorsUsage", &out.flavors, DecodeFlavor);
}

absl::Status DecodeLocalQueue(const JsonValue& v, const PathSegment& at,
                              LocalQueueStatus& out) {
  if (auto s = ReadMetadata(v, at, &out.name, &out.namespace_name); !s.ok()) {
    return s;
  }
  std::optional<JsonValue> status = StatusOf(v);
  if (!status.has_value()) return absl::OkStatus();
  const PathSegment path = at.Field("status");
  if (auto s =
          ReadStrings(*status, path, {{"clusterQueue", &out.cluster_queue}});
      !s.ok()) {
    return s;
  }
  return ReadInts(*status, path,
                  {{"pendingWorkloads", &out.pending},
                   {"admittedWorkloads", &out.admitted}});
}

absl::Status DecodePendingItem(const JsonValue& v, const PathSegment& at,
                               PendingItem& out) {
  if (auto s = ReadMetadata(v, at, &out.name, &out.namespace_name); !s.ok()) {
    return s;
  }
  if (auto s = ReadTime(*ci::Member(v, "metadata"), at.Field("metadata"),
                        "creationTimestamp", &out.created);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadStrings(v, at,
                           {{"localQueueName", &out.local_queue},
                            {"reasonCode", &out.reason_code},
                            {"startUnknownReason", &out.start_unknown_reason}});
      !s.ok()) {
    return s;
  }
  if (auto s =
          ReadInts(v, at,
                   {{"priority", &out.priority},
                    {"positionInClusterQueue", &out.position_in_cluster_queue},
                    {"positionInLocalQueue", &out.position_in_local_queue}});
      !s.ok()) {
    return s;
  }
  if (auto s = ReadTime(v, at, "expectedStart", &out.expected_start); !s.ok()) {
    return s;
  }
  return ReadTime(v, at, "latestStart", &out.latest_start);
}

absl::Status DecodeQuotaLine(const JsonValue& v, const PathSegment& at,
                             QuotaLine& out) {
  if (auto s = ReadStrings(v, at,
                           {{"level", &out.level},
                            {"flavor", &out.flavor},
                            {"resource", &out.resource}});
      !s.ok()) {
    return s;
  }
  if (ci::Member(v, "cohort").has_value()) {
    if (auto s = ci::RequiredBool(v, at, "cohort", &out.cohort); !s.ok()) {
      return s;
    }
  }
  if (auto s = ReadInts(v, at,
                        {{"nominal", &out.nominal},
                         {"used", &out.used},
                         {"borrowed", &out.borrowed},
                         {"available", &out.available},
                         {"mostEver", &out.most_ever},
                         {"asks", &out.asks}});
      !s.ok()) {
    return s;
  }
  return ReadOptionalInt(v, at, "borrowingLimit", &out.borrowing_limit);
}

absl::Status DecodePlacementLine(const JsonValue& v, const PathSegment& at,
                                 PlacementLine& out) {
  if (auto s = ReadStrings(v, at, {{"verdict", &out.verdict}}); !s.ok()) {
    return s;
  }
  if (auto s = ReadInts(v, at, {{"nodes", &out.nodes}}); !s.ok()) return s;
  if (auto s = ReadStrings(v, at, {{"dra", &out.dra}}); !s.ok()) return s;
  return ReadStringArray(v, at, "examples", &out.examples);
}

absl::Status DecodeDraRequest(const JsonValue& v, const PathSegment& at,
                              DraRequestItem& out) {
  if (auto s = ReadStrings(v, at,
                           {{"claim", &out.claim},
                            {"request", &out.request},
                            {"deviceClass", &out.device_class},
                            {"checkedBy", &out.checked_by},
                            {"reason", &out.reason}});
      !s.ok()) {
    return s;
  }
  if (auto s = ReadInts(v, at, {{"count", &out.count}}); !s.ok()) return s;
  return ReadStringArray(v, at, "selectors", &out.selectors);
}

absl::Status DecodeDraMember(const JsonValue& v, const PathSegment& at,
                             DraMemberItem& out) {
  if (auto s = ReadStrings(v, at, {{"pod", &out.pod}, {"node", &out.node}});
      !s.ok()) {
    return s;
  }
  for (auto [key, list] :
       {std::pair{"allocated", &out.allocated},
        std::pair{"claims", &out.claims}, std::pair{"planned", &out.planned}}) {
    if (auto s = ReadStringArray(v, at, key, list); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status DecodeCharge(const JsonValue& v, const PathSegment& at,
                          std::pair<std::string, int64_t>& out) {
  if (auto s = ReadStrings(v, at, {{"resource", &out.first}}); !s.ok()) {
    return s;
  }
  return ReadInts(v, at, {{"amount", &out.second}});
}

absl::Status DecodeDra(const JsonValue& v, const PathSegment& at,
                       DraSection& out) {
  if (auto s = ci::ExpectObject(v, at); !s.ok()) return s;
  if (auto s = ReadStrings(v, at,
                           {{"pod", &out.pod},
                            {"allocatedNode", &out.allocated_node},
                            {"held", &out.held}});
      !s.ok()) {
    return s;
  }
  for (auto [key, list] : {std::pair{"allocatedClaims", &out.allocated_claims},
                           std::pair{"missing", &out.missing},
                           std::pair{"uncharged", &out.uncharged}}) {
    if (auto s = ReadStringArray(v, at, key, list); !s.ok()) return s;
  }
  if (auto s = ReadArray(v, at, "requests", &out.requests, DecodeDraRequest);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadArray(v, at, "charged", &out.charged, DecodeCharge);
      !s.ok()) {
    return s;
  }
  return ReadArray(v, at, "members", &out.members, DecodeDraMember);
}

absl::Status DecodeAhead(const JsonValue& v, const PathSegment& at,
                         AheadEntry& out) {
  if (auto s = ReadStrings(v, at,
                           {{"namespace", &out.namespace_name},
                            {"name", &out.name},
                            {"reasonCode", &out.reason_code}});
      !s.ok()) {
    return s;
  }
  if (auto s = ReadInts(
          v, at, {{"positionInClusterQueue", &out.position_in_cluster_queue}});
      !s.ok()) {
    return s;
  }
  return ReadTime(v, at, "expectedStart", &out.expected_start);
}

absl::Status DecodeStart(const JsonValue& v, const PathSegment& at,
                         ForecastedStart& out) {
  if (auto s = ci::ExpectObject(v, at); !s.ok()) return s;
  if (auto s = ReadStrings(v, at, {{"unknownReason", &out.unknown_reason}});
      !s.ok()) {
    return s;
  }
  for (auto [key, time] : {std::pair{"forecastAt", &out.forecast_at},
                           std::pair{"expected", &out.expected},
                           std::pair{"latest", &out.latest}}) {
    if (auto s = ReadTime(v, at, key, time); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// The scalar fields of a WorkloadExplanation.
absl::Status DecodeExplanationFields(const JsonValue& v, const PathSegment& at,
                                     ExplainedWorkload& out) {
  if (auto s = ReadMetadata(v, at, &out.name, &out.namespace_name); !s.ok()) {
    return s;
  }
  if (auto s = ReadStrings(v, at,
                           {{"state", &out.state},
                            {"localQueue", &out.local_queue},
                            {"clusterQueue", &out.cluster_queue},
                            {"cohort", &out.cohort},
                            {"reasonCode", &out.reason_code},
                            {"message", &out.message},
                            {"preemption", &out.preemption}});
      !s.ok()) {
    return s;
  }
  return ReadInts(v, at,
                  {{"positionInClusterQueue", &out.position_in_cluster_queue},
                   {"pendingInClusterQueue", &out.pending_in_cluster_queue},
                   {"positionInLocalQueue", &out.position_in_local_queue},
                   {"pendingInLocalQueue", &out.pending_in_local_queue},
                   {"members", &out.members},
                   {"minMember", &out.min_member}});
}

// preemptionDryRun's verdict and summary (its victims are in the summary).
absl::Status DecodeDryRun(const JsonValue& v, const PathSegment& at,
                          ExplainedWorkload& out) {
  std::optional<JsonValue> dry_run = ci::Member(v, "preemptionDryRun");
  if (!dry_run.has_value()) return absl::OkStatus();
  const PathSegment field = at.Field("preemptionDryRun");
  if (auto s = ci::ExpectObject(*dry_run, field); !s.ok()) return s;
  return ReadStrings(
      *dry_run, field,
      {{"verdict", &out.dry_run_verdict}, {"summary", &out.dry_run_summary}});
}

absl::Status DecodeExplanation(const JsonValue& v, const PathSegment& at,
                               ExplainedWorkload& out) {
  if (auto s = DecodeExplanationFields(v, at, out); !s.ok()) return s;
  if (auto s = DecodeDryRun(v, at, out); !s.ok()) return s;
  if (auto s = ReadArray(v, at, "quota", &out.quota, DecodeQuotaLine);
      !s.ok()) {
    return s;
  }
  if (auto s =
          ReadArray(v, at, "placement", &out.placement, DecodePlacementLine);
      !s.ok()) {
    return s;
  }
  if (auto s = ReadArray(v, at, "ahead", &out.ahead, DecodeAhead); !s.ok()) {
    return s;
  }
  if (std::optional<JsonValue> dra = ci::Member(v, "dra")) {
    out.dra.emplace();
    if (auto s = DecodeDra(*dra, at.Field("dra"), *out.dra); !s.ok()) return s;
  }
  if (std::optional<JsonValue> start = ci::Member(v, "start")) {
    out.start.emplace();
    return DecodeStart(*start, at.Field("start"), *out.start);
  }
  return absl::OkStatus();
}

// Parses `json` as an object and decodes its `items` with `decode`.
template <typename T, typename F>
absl::StatusOr<std::vector<T>> DecodeItems(std::string_view json,
                                           std::string_view root, F&& decode) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> document =
      ci::ParseJsonObject(parser, json, root);
  if (!document.ok()) return document.status();
  std::vector<T> items;
  if (auto s = ReadArray(JsonValue(*document), PathSegment::Root(root), "items",
                         &items, decode);
      !s.ok()) {
    return s;
  }
  return items;
}

}  // namespace

absl::StatusOr<std::vector<PendingItem>> DecodePendingWorkloads(
    std::string_view json) {
  return DecodeItems<PendingItem>(json, "PendingWorkloadsSummary",
                                  DecodePendingItem);
}

absl::StatusOr<std::vector<ClusterQueueStatus>> DecodeClusterQueueList(
    std::string_view json) {
  return DecodeItems<ClusterQueueStatus>(json, "ClusterQueueList",
                                         DecodeClusterQueue);
}

absl::StatusOr<std::vector<CohortStatus>> DecodeCohortList(
    std::string_view json) {
  return DecodeItems<CohortStatus>(json, "CohortList", DecodeCohort);
}

absl::StatusOr<std::vector<LocalQueueStatus>> DecodeLocalQueueList(
    std::string_view json) {
  return DecodeItems<LocalQueueStatus>(json, "LocalQueueList",
                                       DecodeLocalQueue);
}

absl::StatusOr<ExplainedWorkload> DecodeWorkloadExplanation(
    std::string_view json) {
  constexpr std::string_view kRoot = "WorkloadExplanation";
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> document =
      ci::ParseJsonObject(parser, json, kRoot);
  if (!document.ok()) return document.status();
  ExplainedWorkload out;
  if (auto s = DecodeExplanation(JsonValue(*document), PathSegment::Root(kRoot),
                                 out);
      !s.ok()) {
    return s;
  }
  return out;
}

}  // namespace gpusched
