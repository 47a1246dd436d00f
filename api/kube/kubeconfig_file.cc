// kubeconfig parsing: current-context -> cluster + user, as kubectl reads it.
// Only the credential kinds a long-running service can use without external
// programs are supported; the others are rejected by name so that the
// operator knows what to change.
#include <yaml-cpp/yaml.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "api/kube/kube_config.h"
#include "policies/yaml_guard.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

// Errors carry the field path; the caller prefixes the file name.
absl::Status FieldError(std::string_view path, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, problem));
}

std::string Scalar(const YAML::Node& map, const char* key) {
  const YAML::Node value = map[key];
  return value && value.IsScalar() ? value.as<std::string>() : std::string();
}

// The `inner` map (cluster/user/context) of the entry of `list` named `name`,
// and its field path in `path`.
absl::StatusOr<YAML::Node> FindNamed(const YAML::Node& root, const char* list,
                                     const char* inner, const std::string& name,
                                     std::string& path) {
  path = absl::StrFormat("%s[\"%s\"].%s", list, name, inner);
  const YAML::Node entries = root[list];
  if (entries && entries.IsSequence()) {
    for (const YAML::Node& entry : entries) {
      if (!entry.IsMap() || Scalar(entry, "name") != name) continue;
      const YAML::Node value = entry[inner];
      if (!value || !value.IsMap()) return FieldError(path, "missing");
      return value;
    }
  }
  return FieldError(absl::StrFormat("%s[\"%s\"]", list, name), "no such entry");
}

// PEM text from `<key>-data` (base64) or `<key>` (a file path); empty when
// neither is set.
absl::StatusOr<std::string> LoadPem(const YAML::Node& map,
                                    const std::string& key,
                                    const std::string& path,
                                    std::string_view dir) {
  const std::string data_key = key + "-data";
  if (std::string data = Scalar(map, data_key.c_str()); !data.empty()) {
    std::string pem;
    if (!absl::Base64Unescape(data, &pem)) {
      return FieldError(path + "." + data_key, "invalid base64");
    }
    return pem;
  }
  std::string file = Scalar(map, key.c_str());
  if (file.empty()) return std::string();
  if (file.front() != '/') file = absl::StrFormat("%s/%s", dir, file);
  absl::StatusOr<std::string> pem = ReadFileText(file);
  if (!pem.ok()) return FieldError(path + "." + key, Message(pem.status()));
  return pem;
}

absl::Status ReadCluster(const YAML::Node& cluster, const std::string& path,
                         std::string_view dir, KubeConfig& config) {
  const std::string server = Scalar(cluster, "server");
  if (server.empty()) return FieldError(path + ".server", "missing");
  if (absl::Status s = ParseServerUrl(server, config); !s.ok()) {
    return FieldError(path + ".server", Message(s));
  }
  if (Scalar(cluster, "insecure-skip-tls-verify") == "true") {
    return FieldError(path + ".insecure-skip-tls-verify",
                      "not supported: set certificate-authority-data");
  }
  config.tls_server_name = Scalar(cluster, "tls-server-name");
  absl::StatusOr<std::string> ca =
      LoadPem(cluster, "certificate-authority", path, dir);
  if (!ca.ok()) return ca.status();
  config.ca_pem = *std::move(ca);
  return absl::OkStatus();
}

absl::Status RejectUnsupported(const YAML::Node& user,
                               const std::string& path) {
  for (const char* key : {"exec", "auth-provider", "username", "password"}) {
    if (user[key]) {
      return FieldError(path + "." + key,
                        "not supported: use a token, tokenFile or a client "
                        "certificate (e.g. a service account token)");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadUser(const YAML::Node& user, const std::string& path,
                      std::string_view dir, KubeConfig& config) {
  if (absl::Status s = RejectUnsupported(user, path); !s.ok()) return s;
  config.token = Scalar(user, "token");
  config.token_file = Scalar(user, "tokenFile");
  if (!config.token_file.empty() && config.token_file.front() != '/') {
    config.token_file = absl::StrFormat("%s/%s", dir, config.token_file);
  }
  absl::StatusOr<std::string> cert =
      LoadPem(user, "client-certificate", path, dir);
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = LoadPem(user, "client-key", path, dir);
  if (!key.ok()) return key.status();
  if (cert->empty() != key->empty()) {
    return FieldError(path + (cert->empty() ? ".client-certificate-data"
                                            : ".client-key-data"),
                      "missing: a client certificate needs its key");
  }
  config.client_cert_pem = *std::move(cert);
  config.client_key_pem = *std::move(key);
  return absl::OkStatus();
}

absl::StatusOr<KubeConfig> FromRoot(const YAML::Node& root,
                                    std::string_view dir) {
  const std::string context_name = Scalar(root, "current-context");
  if (context_name.empty()) return FieldError("current-context", "missing");
  std::string path;
  absl::StatusOr<YAML::Node> context =
      FindNamed(root, "contexts", "context", context_name, path);
  if (!context.ok()) return context.status();
  const std::string cluster_name = Scalar(*context, "cluster");
  if (cluster_name.empty()) return FieldError(path + ".cluster", "missing");
  const std::string user_name = Scalar(*context, "user");
  KubeConfig config;
  config.namespace_name = Scalar(*context, "namespace");
  absl::StatusOr<YAML::Node> cluster =
      FindNamed(root, "clusters", "cluster", cluster_name, path);
  if (!cluster.ok()) return cluster.status();
  if (auto s = ReadCluster(*cluster, path, dir, config); !s.ok()) return s;
  if (!user_name.empty()) {
    absl::StatusOr<YAML::Node> user =
        FindNamed(root, "users", "user", user_name, path);
    if (!user.ok()) return user.status();
    if (auto s = ReadUser(*user, path, dir, config); !s.ok()) return s;
  }
  config.source = absl::StrFormat("context %s", context_name);
  return config;
}

absl::StatusOr<KubeConfig> ParseYaml(std::string_view text,
                                     std::string_view dir) {
  if (absl::Status refused = CheckYamlText(text); !refused.ok()) {
    return refused;
  }
  try {  // yaml-cpp reports syntax errors only by exception
    const YAML::Node root = YAML::Load(std::string(text));
    if (!root.IsMap()) return absl::InvalidArgumentError("not a YAML mapping");
    return FromRoot(root, dir);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
}

}  // namespace

absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text,
                                           std::string_view dir,
                                           std::string_view name) {
  absl::StatusOr<KubeConfig> config = ParseYaml(text, dir);
  if (!config.ok()) {
    return absl::Status(
        config.status().code(),
        absl::StrFormat("kubeconfig %s: %s", name, Message(config.status())));
  }
  config->source = absl::StrFormat("kubeconfig %s, %s", name, config->source);
  return config;
}

absl::StatusOr<KubeConfig> LoadKubeconfig(std::string_view path) {
  absl::StatusOr<std::string> text = ReadFileText(path);
  if (!text.ok()) return text.status();
  size_t slash = path.rfind('/');
  std::string_view dir =
      slash == std::string_view::npos ? "." : path.substr(0, slash);
  if (dir.empty()) dir = "/";
  return ParseKubeconfig(*text, dir, path);
}

}  // namespace gpusched::kube
