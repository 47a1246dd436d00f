#include "api/codec/exec_credential_json.h"

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

// Only the fields that are set, as client-go writes them (omitempty).
void WriteCluster(JsonWriter& w, const ExecClusterInfo& cluster) {
  w.Raw(",").Key("cluster").Raw("{").Key("server").String(cluster.server);
  if (!cluster.tls_server_name.empty()) {
    w.Raw(",").Key("tls-server-name").String(cluster.tls_server_name);
  }
  if (!cluster.ca_pem.empty()) {
    w.Raw(",")
        .Key("certificate-authority-data")
        .String(absl::Base64Escape(cluster.ca_pem));
  }
  w.Raw("}");
}

// kind and apiVersion: a plugin answering in another version than asked
// may mean something else by its fields, so it is refused as kubectl does.
absl::Status CheckType(const JsonValue& root, const PathSegment& at,
                       std::string_view api_version) {
  std::string_view kind;
  if (auto s = codec_internal::RequiredString(root, at, "kind", &kind);
      !s.ok()) {
    return s;
  }
  if (kind != "ExecCredential") {
    return codec_internal::FieldError(
        0, at.Field("kind"),
        absl::StrCat("\"", Sv(kind), "\", expected ExecCredential"));
  }
  std::string_view version;
  if (auto s = codec_internal::RequiredString(root, at, "apiVersion", &version);
      !s.ok()) {
    return s;
  }
  if (version != api_version) {
    return absl::InvalidArgumentError(absl::StrCat(
        "exec plugin is configured to use API version ", Sv(api_version),
        ", plugin returned version ", Sv(version)));
  }
  return absl::OkStatus();
}

absl::Status ReadStatus(const JsonValue& status, const PathSegment& at,
                        ExecCredentialStatus& out) {
  const std::pair<std::string_view, std::string*> strings[] = {
      {"token", &out.token},
      {"clientCertificateData", &out.client_certificate_pem},
      {"clientKeyData", &out.client_key_pem}};
  for (const auto& [key, field] : strings) {
    std::string_view value;
    if (auto s = codec_internal::OptionalString(status, at, key, &value);
        !s.ok()) {
      return s;
    }
    *field = std::string(value);
  }
  std::string_view expiration;
  if (auto s = codec_internal::OptionalString(status, at, "expirationTimestamp",
                                              &expiration);
      !s.ok() || expiration.empty()) {
    return s;
  }
  absl::StatusOr<int64_t> seconds =
      codec_internal::ParseRfc3339Seconds(expiration);
  if (!seconds.ok()) {
    return codec_internal::FieldError(0, at.Field("expirationTimestamp"),
                                      Message(seconds.status()));
  }
  out.expiration_unix_seconds = *seconds;
  return absl::OkStatus();
}

}  // namespace

std::string EncodeExecCredentialRequest(const ExecCredentialRequest& request) {
  JsonWriter w;
  w.Raw("{").Key("apiVersion").String(request.api_version);
  w.Raw(",").Key("kind").String("ExecCredential");
  w.Raw(",").Key("spec").Raw("{").Key("interactive").Bool(request.interactive);
  if (request.cluster.has_value()) WriteCluster(w, *request.cluster);
  w.Raw("}}");
  return w.Take();
}

absl::StatusOr<ExecCredentialStatus> DecodeExecCredential(
    std::string_view json, std::string_view api_version) {
  simdjson::dom::parser parser;
  absl::StatusOr<simdjson::dom::element> root =
      codec_internal::ParseJsonObject(parser, json, "ExecCredential");
  if (!root.ok()) return root.status();
  const PathSegment at = PathSegment::Root("ExecCredential");
  if (auto s = CheckType(JsonValue(*root), at, api_version); !s.ok()) return s;
  absl::StatusOr<JsonValue> status =
      codec_internal::RequiredObject(JsonValue(*root), at, "status");
  if (!status.ok()) return status.status();
  ExecCredentialStatus out;
  if (auto s = ReadStatus(*status, at.Field("status"), out); !s.ok()) return s;
  if (out.token.empty() && out.client_certificate_pem.empty() &&
      out.client_key_pem.empty()) {
    return absl::InvalidArgumentError(
        "ExecCredential.status: no token and no clientCertificateData and "
        "clientKeyData");
  }
  if (out.client_certificate_pem.empty() != out.client_key_pem.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ExecCredential.status.",
        out.client_key_pem.empty() ? "clientKeyData" : "clientCertificateData",
        ": missing: a client certificate needs its key"));
  }
  return out;
}

}  // namespace gpusched
