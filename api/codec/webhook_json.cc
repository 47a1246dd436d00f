#include "api/codec/webhook_json.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "api/codec/json_fields.h"
#include "api/codec/json_writer.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using codec_internal::JsonValue;
using codec_internal::PathSegment;
using simdjson::dom::element;

// data[key]: base64 of non-empty PEM text.
absl::StatusOr<std::string> SecretPem(const JsonValue& data,
                                      const PathSegment& at,
                                      std::string_view key) {
  std::string_view text;
  absl::Status status = codec_internal::RequiredString(data, at, key, &text);
  if (!status.ok()) return status;
  std::string decoded;
  if (!absl::Base64Unescape(Sv(text), &decoded) || decoded.empty()) {
    return codec_internal::FieldError(0, at.Field(key), "not base64 PEM");
  }
  return decoded;
}

// One webhook with clientConfig.caBundle set to `want`; true in `changed`
// when it held something else. Other fields are copied verbatim.
void WriteWebhook(JsonWriter& w, element webhook, std::string_view want,
                  bool& changed) {
  if (!webhook.is_object()) {
    w.Raw(simdjson::minify(webhook));
    return;
  }
  std::string_view held;
  if (webhook.at_pointer("/clientConfig/caBundle").get_string().get(held) ||
      held != want) {
    changed = true;
  }
  w.Raw("{");
  bool first = true;
  element client_config;
  for (auto [key, value] : simdjson::dom::object(webhook)) {
    if (key == "clientConfig") {
      client_config = value;
      continue;
    }
    w.Raw(first ? "" : ",").Key(key).Raw(simdjson::minify(value));
    first = false;
  }
  w.Raw(first ? "" : ",").Key("clientConfig").Raw("{");
  if (client_config.is_object()) {
    for (auto [key, value] : simdjson::dom::object(client_config)) {
      if (key != "caBundle") w.Key(key).Raw(simdjson::minify(value)).Raw(",");
    }
  }
  w.Key("caBundle").String(want).Raw("}}");
}

}  // namespace

// Keys in the order nlohmann::json wrote them (sorted).
std::string EncodeWebhookSecret(std::string_view namespace_name,
                                std::string_view name,
                                const WebhookCerts& certs) {
  JsonWriter w;
  w.Raw("{").Key("apiVersion").String("v1").Raw(",").Key("data").Raw("{");
  w.Key("ca.crt").String(absl::Base64Escape(certs.ca_pem)).Raw(",");
  w.Key("tls.crt").String(absl::Base64Escape(certs.cert_pem)).Raw(",");
  w.Key("tls.key").String(absl::Base64Escape(certs.key_pem)).Raw("},");
  w.Key("kind").String("Secret").Raw(",").Key("metadata").Raw("{");
  w.Key("labels").Raw(R"({"app.kubernetes.io/name":"gpusched"},)");
  w.Key("name").String(name).Raw(",").Key("namespace").String(namespace_name);
  w.Raw("},").Key("type").String("kubernetes.io/tls").Raw("}");
  return w.Take();
}

absl::StatusOr<WebhookCerts> DecodeWebhookSecret(std::string_view json) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root =
      codec_internal::ParseJsonObject(parser, json, "Secret");
  if (!root.ok()) return root.status();
  const PathSegment at = PathSegment::Root("Secret");
  const PathSegment data_at = at.Field("data");
  absl::StatusOr<JsonValue> data =
      codec_internal::RequiredObject(JsonValue(*root), at, "data");
  if (!data.ok()) return data.status();
  absl::StatusOr<std::string> ca = SecretPem(*data, data_at, "ca.crt");
  absl::StatusOr<std::string> cert = SecretPem(*data, data_at, "tls.crt");
  absl::StatusOr<std::string> key = SecretPem(*data, data_at, "tls.key");
  if (!ca.ok()) return ca.status();
  if (!cert.ok()) return cert.status();
  if (!key.ok()) return key.status();
  return WebhookCerts{.ca_pem = *std::move(ca),
                      .cert_pem = *std::move(cert),
                      .key_pem = *std::move(key)};
}

absl::StatusOr<std::optional<std::string>> EncodeCaBundlePatch(
    std::string_view config_json, std::string_view ca_pem) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root = codec_internal::ParseJson(parser, config_json);
  if (!root.ok()) return root.status();
  const PathSegment at = PathSegment::Root("MutatingWebhookConfiguration");
  simdjson::dom::array webhooks;
  if (!root->is_object() || (*root)["webhooks"].get_array().get(webhooks)) {
    return codec_internal::FieldError(0, at.Field("webhooks"),
                                      "missing or not a list");
  }
  const std::string want = absl::Base64Escape(Sv(ca_pem));
  JsonWriter list;
  bool changed = false;
  for (element webhook : webhooks) {
    if (!list.out().empty()) list.Raw(",");
    WriteWebhook(list, webhook, want, changed);
  }
  if (!changed) return std::nullopt;
  std::string_view version;
  if (root->at_pointer("/metadata/resourceVersion").get_string().get(version)) {
    return codec_internal::FieldError(
        0, at.Field("metadata").Field("resourceVersion"), "missing");
  }
  JsonWriter w;
  w.Raw(R"({"metadata":{"resourceVersion":)").String(version);
  w.Raw(R"(},"webhooks":[)").Raw(list.out()).Raw("]}");
  return w.Take();
}

absl::StatusOr<std::optional<std::string>> EncodeApiServiceCaBundlePatch(
    std::string_view apiservice_json, std::string_view ca_pem) {
  simdjson::dom::parser parser;
  absl::StatusOr<element> root =
      codec_internal::ParseJsonObject(parser, apiservice_json, "APIService");
  if (!root.ok()) return root.status();
  const std::string want = absl::Base64Escape(Sv(ca_pem));
  std::string_view held;
  if (!root->at_pointer("/spec/caBundle").get_string().get(held) &&
      held == want) {
    return std::nullopt;
  }
  std::string_view version;
  if (root->at_pointer("/metadata/resourceVersion").get_string().get(version)) {
    return codec_internal::FieldError(0,
                                      PathSegment::Root("APIService")
                                          .Field("metadata")
                                          .Field("resourceVersion"),
                                      "missing");
  }
  JsonWriter w;
  w.Raw(R"({"metadata":{"resourceVersion":)").String(version);
  w.Raw(R"(},"spec":{"caBundle":)").String(want).Raw("}}");
  return w.Take();
}

}  // namespace gpusched
