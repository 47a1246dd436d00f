// The ExecCredential object of client.authentication.k8s.io (v1 and
// v1beta1) that kubectl's credential plugins speak: the request a plugin
// reads from $KUBERNETES_EXEC_INFO, and the credential it prints on stdout
// (api/kube/exec_credential.h runs the plugin).
#ifndef GPUSCHED_API_CODEC_EXEC_CREDENTIAL_JSON_H_
#define GPUSCHED_API_CODEC_EXEC_CREDENTIAL_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched {

// spec.cluster, sent to plugins whose kubeconfig sets provideClusterInfo:
// the cluster the credential is for (one plugin may serve many clusters).
struct ExecClusterInfo {
  std::string server;           // as written in the kubeconfig
  std::string tls_server_name;  // empty: omitted
  std::string ca_pem;           // sent base64 as certificate-authority-data
};

struct ExecCredentialRequest {
  std::string api_version;  // client.authentication.k8s.io/v1 or v1beta1
  bool interactive = false;
  std::optional<ExecClusterInfo> cluster;
};

// The value of KUBERNETES_EXEC_INFO.
std::string EncodeExecCredentialRequest(const ExecCredentialRequest& request);

// status of the plugin's answer: a bearer token, a client certificate and
// key (PEM text, not base64), or both.
struct ExecCredentialStatus {
  std::string token;
  std::string client_certificate_pem;
  std::string client_key_pem;
  // status.expirationTimestamp in Unix seconds; unset: no expiry.
  std::optional<int64_t> expiration_unix_seconds;
};

// The plugin's stdout. It must be an object of kind ExecCredential and of
// `api_version` (the one the kubeconfig asked for), whose status carries a
// token or a certificate with its key. Errors name the field
// ("ExecCredential.status.token: expected string, got number").
absl::StatusOr<ExecCredentialStatus> DecodeExecCredential(
    std::string_view json, std::string_view api_version);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_EXEC_CREDENTIAL_JSON_H_
