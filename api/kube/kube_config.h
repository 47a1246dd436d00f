// How to reach and authenticate to the Kubernetes API server: from inside a
// pod (service account) or from a kubeconfig file, as kubectl does.
//
// Certificates and keys are kept in memory as PEM text rather than written to
// temporary files: the image runs with a read-only root filesystem, and a
// private key should not outlive the process on disk.
#ifndef GPUSCHED_API_KUBE_KUBE_CONFIG_H_
#define GPUSCHED_API_KUBE_KUBE_CONFIG_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched::kube {

inline constexpr char kServiceAccountDir[] =
    "/var/run/secrets/kubernetes.io/serviceaccount";

struct KubeConfig {
  // Where the API server listens; `base_path` is a proxy prefix such as
  // "/k8s/clusters/c-1" (empty for a direct connection).
  std::string host;
  uint16_t port = 443;
  bool tls = true;  // false only for "http://" servers (tests)
  std::string base_path;
  // Name the server certificate must carry; defaults to `host`.
  std::string tls_server_name;

  // PEM text. An empty CA uses the system trust store.
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;

  // Bearer token: fixed text, or a file re-read periodically because
  // projected service account tokens rotate (about hourly).
  std::string token;
  std::string token_file;

  // The pod's namespace in-cluster, or the context's namespace; may be empty.
  std::string namespace_name;
  // For logs: "in-cluster" or "kubeconfig FILE, context NAME".
  std::string source;
};

// True when KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are set,
// i.e. the process runs in a pod.
bool InClusterAvailable();

// The service account configuration of the pod this process runs in.
// `account_dir` holds token, ca.crt and namespace (overridable for tests).
absl::StatusOr<KubeConfig> LoadInClusterConfig(
    std::string_view account_dir = kServiceAccountDir);

// The current context of a kubeconfig file. Errors name the file and the
// field path, e.g. `users["alice"].user.client-key-data: invalid base64`.
// Relative file references resolve against the kubeconfig's directory.
absl::StatusOr<KubeConfig> LoadKubeconfig(std::string_view path);

// As LoadKubeconfig, from text; `dir` resolves relative file references and
// `name` prefixes error messages.
absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text,
                                           std::string_view dir,
                                           std::string_view name);

// Splits "https://host[:port][/prefix]" into host, port, tls and base_path.
// http:// is accepted (port 80 by default) for tests and local proxies.
absl::Status ParseServerUrl(std::string_view url, KubeConfig& config);

// The whole content of `path`, or an error naming it.
absl::StatusOr<std::string> ReadFileText(std::string_view path);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_KUBE_CONFIG_H_
