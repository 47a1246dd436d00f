#include "api/codec/delegated_auth_json.h"

#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;
using simdjson::dom::element;

// A data value that holds a JSON list of strings, as kube-apiserver writes
// the header names and allowed names ("[\"X-Remote-User\"]"). Missing or
// empty: no strings.
absl::StatusOr<std::vector<std::string>> StringListValue(const JsonValue& data,
                                                         const PathSegment& at,
                                                         std::string_view key) {
  std::string_view text;
  if (absl::Status s = codec_internal::OptionalString(data, at, key, &text);
      !s.ok() || text.empty()) {
    if (!s.ok()) return s;
    return std::vector<std::string>{};
  }
  simdjson::dom::parser parser;
  simdjson::dom::array list;
  std::vector<std::string> out;
  if (parser.parse(text.data(), text.size()).get_array().get(list)) {
    return codec_internal::FieldError(0, at.Field(key),
                                      "not a JSON list of strings");
  }
  for (element item : list) {
    std::string_view value;
    if (item.get_string().get(value)) {
      return codec_internal::FieldError(0, at.Field(key),
                                        "not a JSON list of strings");
    }
    out.emplace_back(value);
  }
  return out;
}

absl::Status ReadLists(const JsonValue& data, const PathSegment& at,
                       RequestHeaderConfig& config) {
  const std::pair<std::string_view, std::vector<std::string>*> lists[] = {
      {"requestheader-allowed-names", &config.allowed_names},
      {"requestheader-username-headers", &config.username_headers},
      {"requestheader-group-headers", &config.group_headers},
      {"requestheader-extra-headers-prefix", &config.extra_headers_prefixes}};
  for (const auto& [key, out] : lists) {
    absl::StatusOr<std::vector<std::string>> list =
        StringListValue(data, at, key);
    if (!list.ok()) return list.status();
    *out = *std::move(list);
  }
  return absl::OkStatus();
}

void WriteStringList(JsonWriter& w, const std::vector<std::string>& list) {
  w.Raw("[");
  for (size_t i = 0; i < list.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.String(list[i]);
  }
  w.Raw("]");
}

// Only the non-empty attributes, as kubectl auth can-i sends them.
void WriteResourceAttributes(JsonWriter& w, const ResourceAttributes& a) {
  const std::pair<std::string_view, const std::string*> fields[] = {
      {"verb", &a.verb},
      {"group", &a.group},
      {"version", &a.version},
      {"resource", &a.resource},
      {"subresource", &a.subresource},
      {"namespace", &a.namespace_name},
      {"name", &a.name}};
  w.Key("resourceAttributes").Raw("{");
  bool first = true;
  for (const auto& [key, value] : fields) {
    if (value->empty()) continue;
    w.Raw(first ? "" : ",").Key(key).String(*value);
    first = false;
  }
  w.Raw("}");
}

}  // namespace

absl::StatusOr<RequestHeaderConfig> DecodeRequestHeaderConfig(
    std::string_view configmap_json) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root =
      codec_internal::ParseJsonObject(parser, configmap_json, "ConfigMap");
  if (!root.ok()) return root.status();
  const PathSegment at = PathSegment::Root("ConfigMap");
  const PathSegment data_at = at.Field("data");
  absl::StatusOr<JsonValue> data =
      codec_internal::RequiredObject(JsonValue(*root), at, "data");
  if (!data.ok()) return data.status();
  RequestHeaderConfig config;
  std::string_view ca;
  if (absl::Status s = codec_internal::OptionalString(
          *data, data_at, "requestheader-client-ca-file", &ca);
      !s.ok()) {
    return s;
  }
  if (ca.empty()) {
    return absl::FailedPreconditionError(
        "ConfigMap.data.requestheader-client-ca-file: missing; kube-apiserver "
        "has no front proxy (--requestheader-client-ca-file)");
  }
  config.client_ca_pem = std::string(ca);
  if (absl::Status s = ReadLists(*data, data_at, config); !s.ok()) return s;
  return config;
}

std::string EncodeSubjectAccessReview(const RequestUser& user,
                                      const ResourceAttributes& attributes) {
  JsonWriter w;
  w.Raw(R"({"apiVersion":"authorization.k8s.io/v1",)");
  w.Raw(R"("kind":"SubjectAccessReview","spec":{)");
  WriteResourceAttributes(w, attributes);
  w.Raw(",").Key("user").String(user.name).Raw(",").Key("groups");
  WriteStringList(w, user.groups);
  if (!user.extra.empty()) {
    w.Raw(",").Key("extra").Raw("{");
    for (size_t i = 0; i < user.extra.size(); ++i) {
      w.Raw(i > 0 ? "," : "").Key(user.extra[i].first);
      WriteStringList(w, user.extra[i].second);
    }
    w.Raw("}");
  }
  w.Raw("}}");
  return w.Take();
}

absl::StatusOr<AccessVerdict> DecodeSubjectAccessReview(std::string_view json) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root =
      codec_internal::ParseJsonObject(parser, json, "SubjectAccessReview");
  if (!root.ok()) return root.status();
  const PathSegment at = PathSegment::Root("SubjectAccessReview");
  const PathSegment status_at = at.Field("status");
  absl::StatusOr<JsonValue> status =
      codec_internal::RequiredObject(JsonValue(*root), at, "status");
  if (!status.ok()) return status.status();
  AccessVerdict verdict;
  if (absl::Status s = codec_internal::RequiredBool(
          *status, status_at, "allowed", &verdict.allowed);
      !s.ok()) {
    return s;
  }
  std::string_view reason;
  if (absl::Status s =
          codec_internal::OptionalString(*status, status_at, "reason", &reason);
      !s.ok()) {
    return s;
  }
  verdict.reason = std::string(reason);
  return verdict;
}

}  // namespace gpusched
