#include "api/codec/provisioning_request_json.h"

#include <openssl/sha.h>

#include <array>
#include <cctype>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;
using codec_internal::ValueKind;

// Kueue's objNameHashLength and objNameMaxPrefixLength (252 - 5).
constexpr size_t kHashLength = 5;
constexpr size_t kMaxPrefixLength = 252 - kHashLength;

std::string LimitObjectName(std::string full) {
  if (full.size() <= kMaxPrefixLength) return full;
  std::array<unsigned char, SHA_DIGEST_LENGTH> digest;
  SHA1(reinterpret_cast<const unsigned char*>(full.data()), full.size(),
       digest.data());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hash;
  for (unsigned char byte : digest) {
    hash += kHex[byte >> 4];
    hash += kHex[byte & 0xf];
  }
  return absl::StrCat(full.substr(0, kMaxPrefixLength), "-",
                      hash.substr(0, kHashLength));
}

void WriteOwner(JsonWriter& w, const OwnerReference& owner) {
  w.Raw("{").Key("apiVersion").String(owner.api_version);
  w.Raw(",").Key("kind").String(owner.kind);
  w.Raw(",").Key("name").String(owner.name);
  w.Raw(",").Key("uid").String(owner.uid);
  if (owner.controller) w.Raw(",").Key("controller").Bool(true);
  w.Raw("}");
}

// `name`'s metadata: the request's namespace, label and owners.
void WriteMetadata(JsonWriter& w, const ProvisioningRequestSpec& spec,
                   std::string_view name) {
  w.Key("metadata").Raw("{").Key("name").String(name);
  w.Raw(",").Key("namespace").String(spec.namespace_name);
  w.Raw(",").Key("labels").Raw("{").Key(kManagedByKueueLabel).String("true");
  w.Raw("}");
  if (!spec.owners.empty()) {
    w.Raw(",").Key("ownerReferences").Raw("[");
    for (size_t i = 0; i < spec.owners.size(); ++i) {
      if (i > 0) w.Raw(",");
      WriteOwner(w, spec.owners[i]);
    }
    w.Raw("]");
  }
  w.Raw("}");
}

// One status condition: which of the five it is, if True.
absl::Status ReadCondition(const JsonValue& condition, const PathSegment& at,
                           RequestConditions* out) {
  std::string_view type, status, message;
  absl::Status s = codec_internal::RequiredString(condition, at, "type", &type);
  if (s.ok()) {
    s = codec_internal::RequiredString(condition, at, "status", &status);
  }
  if (s.ok()) {
    s = codec_internal::OptionalString(condition, at, "message", &message);
  }
  if (!s.ok() || status != "True") return s;
  const std::string text(message);
  if (type == "Accepted") out->accepted = true;
  if (type == "Provisioned") {
    out->provisioned = true;
    out->provisioned_message = text;
  } else if (type == "Failed") {
    out->failed = true;
    out->failed_message = text;
  } else if (type == "BookingExpired") {
    out->booking_expired = true;
    out->booking_expired_message = text;
  } else if (type == "CapacityRevoked") {
    out->capacity_revoked = true;
    out->capacity_revoked_message = text;
  }
  return absl::OkStatus();
}

// status.provisioningClassDetails: a map of strings (the CRD's Detail).
// `object`.`key`, an object of strings, into `out`; missing or null is
// empty.
template <typename Map>
absl::Status ReadStringMap(const JsonValue& object, const PathSegment& at,
                           std::string_view key, Map* out) {
  std::optional<JsonValue> map = codec_internal::Member(object, key);
  if (!map.has_value() || map->kind() == ValueKind::kNull) {
    return absl::OkStatus();
  }
  const PathSegment map_at = at.Field(key);
  if (absl::Status s = codec_internal::ExpectObject(*map, map_at); !s.ok()) {
    return s;
  }
  return map->ForEachField([&](std::string_view name, const JsonValue&) {
    std::string_view text;
    absl::Status s = codec_internal::RequiredString(*map, map_at, name, &text);
    if (s.ok()) out->emplace(std::string(name), std::string(text));
    return s;
  });
}

// The request's `key` (spec, status): nullopt when missing; an error
// naming it when it, or the request, is no object.
absl::StatusOr<std::optional<JsonValue>> ObjectOfRequest(
    const JsonValue& request, const PathSegment& at, std::string_view key) {
  if (absl::Status s = codec_internal::ExpectObject(request, at); !s.ok()) {
    return s;
  }
  std::optional<JsonValue> member = codec_internal::Member(request, key);
  if (!member.has_value()) return member;
  if (absl::Status s = codec_internal::ExpectObject(*member, at.Field(key));
      !s.ok()) {
    return s;
  }
  return member;
}

absl::Status ReadClassDetails(const JsonValue& status, const PathSegment& at,
                              RequestConditions* out) {
  return ReadStringMap(status, at, "provisioningClassDetails",
                       &out->class_details);
}

}  // namespace

std::string ProvisioningRequestName(std::string_view workload,
                                    std::string_view check, int attempt) {
  return LimitObjectName(
      absl::StrCat(Sv(workload), "-", Sv(check), "-", attempt));
}

std::string ProvisioningPodTemplateName(std::string_view request,
                                        std::string_view pod_set) {
  return LimitObjectName(absl::StrCat("ppt-", Sv(request), "-", Sv(pod_set)));
}

std::optional<int> ProvisioningRequestAttempt(std::string_view name,
                                              std::string_view workload,
                                              std::string_view check) {
  const std::string prefix =
      LimitObjectName(absl::StrCat(Sv(workload), "-", Sv(check), "-"));
  if (!name.starts_with(prefix) || name.size() == prefix.size()) {
    return std::nullopt;
  }
  const std::string_view digits = name.substr(prefix.size());
  for (char c : digits) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  int attempt = 0;
  if (!absl::SimpleAtoi(Sv(digits), &attempt)) return std::nullopt;
  return attempt;
}

std::string ProvisioningRequestJson(const ProvisioningRequestSpec& spec) {
  JsonWriter w;
  w.Raw("{").Key("apiVersion").String("autoscaling.x-k8s.io/v1");
  w.Raw(",").Key("kind").String("ProvisioningRequest").Raw(",");
  WriteMetadata(w, spec, spec.name);
  w.Raw(",").Key("spec").Raw("{");
  w.Key("provisioningClassName").String(spec.class_name);
  w.Raw(",").Key("parameters").Raw("{");
  bool first = true;
  for (const auto& [key, value] : spec.parameters) {
    if (!first) w.Raw(",");
    first = false;
    w.Key(key).String(value);
  }
  w.Raw("}").Raw(",").Key("podSets").Raw("[");
  for (size_t i = 0; i < spec.pod_sets.size(); ++i) {
    if (i > 0) w.Raw(",");
    w.Raw("{")
        .Key("podTemplateRef")
        .Raw("{")
        .Key("name")
        .String(spec.pod_sets[i].pod_template);
    w.Raw("},").Key("count").Int(spec.pod_sets[i].count).Raw("}");
  }
  w.Raw("]}}");
  return w.Take();
}

std::string ProvisioningPodTemplateJson(const ProvisioningRequestSpec& request,
                                        std::string_view name,
                                        std::string_view pod_spec_json) {
  JsonWriter w;
  w.Raw("{").Key("apiVersion").String("v1");
  w.Raw(",").Key("kind").String("PodTemplate").Raw(",");
  WriteMetadata(w, request, name);
  w.Raw(",").Key("template").Raw("{").Key("spec").Raw(pod_spec_json);
  w.Raw("}}");
  return w.Take();
}

absl::StatusOr<RequestConditions> DecodeProvisioningRequestConditions(
    simdjson::dom::element request, std::string_view path) {
  const PathSegment at = PathSegment::Root(path);
  absl::StatusOr<std::optional<JsonValue>> status =
      ObjectOfRequest(JsonValue(request), at, "status");
  if (!status.ok()) return status.status();
  RequestConditions out;
  if (!status->has_value()) return out;
  const PathSegment status_at = at.Field("status");
  if (absl::Status s = ReadClassDetails(**status, status_at, &out); !s.ok()) {
    return s;
  }
  std::optional<JsonValue> conditions =
      codec_internal::Member(**status, "conditions");
  if (!conditions.has_value()) return out;
  const PathSegment list_at = status_at.Field("conditions");
  if (conditions->kind() != ValueKind::kArray) {
    return codec_internal::TypeError(*conditions, list_at, "array");
  }
  size_t index = 0;
  absl::Status read = conditions->ForEachElement([&](const JsonValue& c) {
    const PathSegment item_at = list_at.Index(index++);
    if (absl::Status s = codec_internal::ExpectObject(c, item_at); !s.ok()) {
      return s;
    }
    return ReadCondition(c, item_at, &out);
  });
  if (!read.ok()) return read;
  return out;
}

absl::StatusOr<RequestMadeWith> DecodeProvisioningRequestMadeWith(
    simdjson::dom::element request, std::string_view path) {
  const PathSegment at = PathSegment::Root(path);
  absl::StatusOr<std::optional<JsonValue>> spec =
      ObjectOfRequest(JsonValue(request), at, "spec");
  if (!spec.ok()) return spec.status();
  RequestMadeWith out;
  if (!spec->has_value()) return out;
  const PathSegment spec_at = at.Field("spec");
  std::string_view class_name;
  if (absl::Status s = codec_internal::OptionalString(
          **spec, spec_at, "provisioningClassName", &class_name);
      !s.ok()) {
    return s;
  }
  out.class_name = std::string(class_name);
  if (absl::Status s =
          ReadStringMap(**spec, spec_at, "parameters", &out.parameters);
      !s.ok()) {
    return s;
  }
  return out;
}

bool RequestSyncedWithConfig(const RequestMadeWith& request,
                             const ProvisioningRequestConfig& config) {
  if (request.class_name != config.provisioning_class_name) return false;
  for (const auto& [key, value] : config.parameters) {
    auto it = request.parameters.find(key);
    if (it == request.parameters.end() || it->second != value) return false;
  }
  return true;
}

}  // namespace gpusched
