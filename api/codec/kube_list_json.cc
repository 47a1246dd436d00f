#include "api/codec/kube_list_json.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "api/codec/k8s_json.h"
#include "api/codec/podgroup_decode.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;

// The causes' messages of a Status, "; "-joined.
std::string CauseMessages(simdjson::dom::element status) {
  simdjson::dom::array causes;
  std::string told;
  if (status["details"]["causes"].get_array().get(causes)) return told;
  for (simdjson::dom::element cause : causes) {
    std::string_view text;
    if (cause["message"].get_string().get(text) || text.empty()) continue;
    absl::StrAppend(&told, told.empty() ? "" : "; ", Sv(text));
  }
  return told;
}

}  // namespace

std::string_view ObjectNameForLogs(simdjson::dom::element object) {
  std::string_view name;
  if (object.at_pointer("/metadata/name").get_string().get(name)) return "?";
  return name;
}

std::string ObjectKeyForLogs(simdjson::dom::element object) {
  std::string_view ns;
  if (object.at_pointer("/metadata/namespace").get_string().get(ns) ||
      ns.empty()) {
    return std::string(ObjectNameForLogs(object));
  }
  std::string key(ns);
  key += '/';
  key += ObjectNameForLogs(object);
  return key;
}

absl::StatusOr<ListMeta> DecodeListMeta(std::string_view body) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJsonObject(parser, body, "List");
  if (!root.ok()) return root.status();
  const JsonValue list(*root);
  const PathSegment at = PathSegment::Root("List");
  ListMeta meta;
  std::optional<JsonValue> metadata = codec_internal::Member(list, "metadata");
  if (!metadata.has_value()) return meta;
  const PathSegment meta_at = at.Field("metadata");
  std::string_view version, next;
  absl::Status status = codec_internal::OptionalString(
      *metadata, meta_at, "resourceVersion", &version);
  if (status.ok()) {
    status =
        codec_internal::OptionalString(*metadata, meta_at, "continue", &next);
  }
  if (!status.ok()) return status;
  meta.resource_version = std::string(version);
  meta.continue_token = std::string(next);
  return meta;
}

absl::StatusOr<WatchEventJson> WatchEventDecoder::Decode(
    std::string_view line) {
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJsonObject(parser_, line, "WatchEvent");
  if (!root.ok()) return root.status();
  const JsonValue event(*root);
  const PathSegment at = PathSegment::Root("WatchEvent");
  WatchEventJson out;
  absl::Status status =
      codec_internal::RequiredString(event, at, "type", &out.type);
  if (status.ok() && (*root)["object"].get(out.object)) {
    status = codec_internal::FieldError(0, at.Field("object"), "missing");
  }
  if (!status.ok()) return status;
  if (out.type == "ERROR") {
    // A Status: its fields are read leniently, as the API server's error
    // is what matters, not the shape of its report.
    if (out.object["code"].get_int64().get(out.error_code)) {
      out.error_code = 500;
    }
    if (out.object["message"].get_string().get(out.error_message)) {
      out.error_message = {};
    }
    return out;
  }
  if (out.object.at_pointer("/metadata/resourceVersion")
          .get_string()
          .get(out.resource_version)) {
    out.resource_version = {};
  }
  return out;
}

absl::StatusOr<std::string> DecodeStatusMessage(std::string_view body) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJsonObject(parser, body, "Status");
  if (!root.ok()) return root.status();
  std::string_view from_status;
  absl::Status status = codec_internal::RequiredString(
      JsonValue(*root), PathSegment::Root("Status"), "message", &from_status);
  if (!status.ok()) return status;
  std::string message(from_status);
  if (std::string causes = CauseMessages(*root); !causes.empty()) {
    absl::StrAppend(&message, " (", causes, ")");
  }
  return message;
}

absl::Status VisitListItems(
    std::string_view body, std::string_view kind,
    const std::function<void(simdjson::dom::element)>& visit) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJson(parser, body);
  if (!root.ok()) return root.status();
  absl::StatusOr<std::optional<simdjson::dom::array>> items =
      codec_internal::ListItems(*root, PathSegment::Root(kind));
  if (!items.ok()) return items.status();
  if (!items->has_value()) return absl::OkStatus();
  for (simdjson::dom::element item : **items) visit(item);
  return absl::OkStatus();
}

absl::StatusOr<DecodedList<Node>> DecodeNodeList(std::string_view body) {
  return DecodeListItems<Node>(
      body, "NodeList",
      [](simdjson::dom::element item) { return DecodeNode(item, "Node"); });
}

absl::StatusOr<DecodedList<Pod>> DecodePodList(std::string_view body) {
  return DecodeListItems<Pod>(body, "PodList", [](simdjson::dom::element item) {
    return DecodePod(item, "Pod");
  });
}

// Without apiVersion the item is written back with it. A CRD's list keeps
// apiVersion on its items, so for Volcano and coscheduling this path is
// rare; the API server's own list of native PodGroups leaves it out on
// every item, which costs a copy of each at a list (watch events carry it).
absl::StatusOr<PodGroup> DecodePodGroupItem(simdjson::dom::element item,
                                            std::string_view api_version) {
  // A non-object has no apiVersion to add: the decoder says what it is.
  if (!item["apiVersion"].error() || !item.is_object()) {
    return DecodePodGroup(item, "PodGroup");
  }
  std::string json = simdjson::minify(item);
  json.insert(1, absl::StrCat("\"apiVersion\":\"", Sv(api_version), "\"",
                              json.size() > 2 ? "," : ""));
  return PodGroupFromJson(json);
}

absl::StatusOr<DecodedList<PodGroup>> DecodePodGroupList(
    std::string_view body, std::string_view api_version) {
  return DecodeListItems<PodGroup>(
      body, "PodGroupList", [&](simdjson::dom::element item) {
        return DecodePodGroupItem(item, api_version);
      });
}

}  // namespace gpusched
