// How to reach and authenticate to the Kubernetes API server: from inside a
// pod (service account) or from a kubeconfig file, as kubectl does.
//
// Certificates and keys are kept in memory as PEM text rather than written to
// temporary files: the image runs with a read-only root filesystem, and a
// private key should not outlive the process on disk.
#ifndef GPUSCHED_API_KUBE_KUBE_CONFIG_H_
#define GPUSCHED_API_KUBE_KUBE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace gpusched::kube {

inline constexpr char kServiceAccountDir[] =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// The versions of client.authentication.k8s.io an exec plugin may speak
// (v1alpha1 left kubectl in 1.24).
inline constexpr char kExecApiV1[] = "client.authentication.k8s.io/v1";
inline constexpr char kExecApiV1Beta1[] =
    "client.authentication.k8s.io/v1beta1";

// users[].user.exec.interactiveMode: whether the plugin may have this
// process's standard input to prompt on (exec_credential.h says when).
enum class ExecInteractiveMode { kNever, kIfAvailable, kAlways };

// users[].user.exec: a credential plugin, the program that logs EKS, GKE,
// AKS and OIDC users in and prints an ExecCredential (exec_credential.h
// runs it).
struct ExecCredentialSpec {
  // A bare name is looked up on PATH when run; a path with a '/' is used as
  // is, a relative one already resolved against its kubeconfig's directory.
  std::string command;
  std::vector<std::string> args;
  // Added to (or replacing) this process's environment for the plugin.
  std::vector<std::pair<std::string, std::string>> env;
  std::string api_version;  // kExecApiV1 or kExecApiV1Beta1
  // v1 requires it; v1beta1 defaults to IfAvailable (as kubectl reads it).
  ExecInteractiveMode interactive_mode = ExecInteractiveMode::kIfAvailable;
  // Whether KUBERNETES_EXEC_INFO carries spec.cluster (server, CA, name).
  bool provide_cluster_info = false;
  // Printed when the command is not found: how to install it.
  std::string install_hint;
};

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
  // A credential plugin, asked for a token or a client certificate when no
  // token is set (and again when the API server refuses it).
  std::optional<ExecCredentialSpec> exec;

  // The pod's namespace in-cluster, or the context's namespace; may be empty.
  std::string namespace_name;
  // For logs: "in-cluster" or "kubeconfig FILE, context NAME".
  std::string source;
  // The cluster's server URL as the kubeconfig wrote it, for plugins that
  // ask for the cluster (provideClusterInfo).
  std::string server_url;
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
// `name` prefixes error messages. Parses only: an exec plugin is recorded
// in KubeConfig::exec, never run.
absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text,
                                           std::string_view dir,
                                           std::string_view name);

// Which kubeconfig files, context and namespace to use, as kubectl's
// flags and environment select them.
struct KubeconfigSelection {
  // --kubeconfig: this file alone (it must exist).
  std::string kubeconfig;
  // $KUBECONFIG: a ':'-separated list of files, read when `kubeconfig` is
  // empty; empty entries and missing files are skipped.
  std::string kubeconfig_env;
  // $HOME: ~/.kube/config is read when both of the above are empty.
  std::string home;
  // --context: used instead of the files' current-context.
  std::string context;
  // -n/--namespace: used instead of the context's namespace.
  std::string namespace_name;

  // kubeconfig_env and home from this process's environment.
  static KubeconfigSelection FromEnvironment();
};

// kubectl's loading rules. With a list of files, each named cluster, user
// and context comes from the first file that defines the name, and
// current-context from the first file that sets it; file references
// resolve against the directory of the file they are written in. The
// namespace is the override, else the context's, else "default". Errors
// name the file and the field path, e.g.
// `kubeconfig /x/config: users["alice"].user.exec.apiVersion: missing`.
absl::StatusOr<KubeConfig> LoadKubeconfigs(
    const KubeconfigSelection& selection);

// Splits "https://host[:port][/prefix]" into host, port, tls and base_path.
// http:// is accepted (port 80 by default) for tests and local proxies.
absl::Status ParseServerUrl(std::string_view url, KubeConfig& config);

// The whole content of `path`, or an error naming it.
absl::StatusOr<std::string> ReadFileText(std::string_view path);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_KUBE_CONFIG_H_
