// kubeconfig parsing: a context -> its cluster + user, as kubectl reads it.
// Tokens, token files, client certificates and exec credential plugins are
// supported; the other credential kinds are rejected by name so that the
// operator knows what to change.
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "api/kube/kube_config.h"
#include "api/kube/kubeconfig_internal.h"
#include "policies/yaml_guard.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube::internal {
namespace {

// `status` with "kubeconfig NAME: " in front of its message.
absl::Status InFile(std::string_view name, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrFormat("kubeconfig %s: %s", name,
                                                     Message(status)));
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
  absl::StatusOr<std::string> pem = ReadFileText(ResolvePath(dir, file));
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
  config.server_url = server;
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
  for (const char* key : {"auth-provider", "username", "password"}) {
    if (user[key]) {
      return FieldError(path + "." + key,
                        "not supported: use exec (a credential plugin), a "
                        "token, tokenFile or a client certificate");
    }
  }
  return absl::OkStatus();
}

absl::Status ReadUser(const YAML::Node& user, const std::string& path,
                      std::string_view dir, KubeConfig& config) {
  if (absl::Status s = RejectUnsupported(user, path); !s.ok()) return s;
  config.token = Scalar(user, "token");
  config.token_file = Scalar(user, "tokenFile");
  if (!config.token_file.empty()) {
    config.token_file = ResolvePath(dir, config.token_file);
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
  if (const YAML::Node exec = user["exec"]; exec && !exec.IsNull()) {
    config.exec.emplace();
    return ReadExec(exec, path + ".exec", dir, *config.exec);
  }
  return absl::OkStatus();
}

// The entry `name` of `entries` (the `list` of the merged files, whose
// entries hold an `inner` map), with its field path in `path`. An unknown
// name is the whole set's error, a malformed entry its file's.
absl::StatusOr<const NamedEntry*> Find(
    const MergedKubeconfig& merged,
    const std::map<std::string, NamedEntry, std::less<>>& entries,
    const char* list, const char* inner, const std::string& name,
    std::string& path) {
  auto it = entries.find(name);
  if (it == entries.end()) {
    return InFile(
        merged.name,
        FieldError(absl::StrFormat("%s[\"%s\"]", list, name), "no such entry"));
  }
  path = absl::StrFormat("%s[\"%s\"].%s", list, name, inner);
  if (!it->second.value.IsMap()) {
    return InFile(merged.docs[it->second.doc].name,
                  FieldError(path, "missing"));
  }
  return &it->second;
}

// Reads `entry` with `read`, in the directory of the file that defined it,
// and names that file on error.
template <typename F>
absl::Status ReadEntry(const MergedKubeconfig& merged, const NamedEntry& entry,
                       const std::string& path, KubeConfig& config, F read) {
  const KubeconfigDoc& doc = merged.docs[entry.doc];
  absl::Status status = read(entry.value, path, doc.dir, config);
  return status.ok() ? status : InFile(doc.name, status);
}

// The cluster and user of the context at `path`.
absl::Status ReadContext(const MergedKubeconfig& merged,
                         const NamedEntry& context, const std::string& path,
                         KubeConfig& config) {
  const std::string cluster_name = Scalar(context.value, "cluster");
  if (cluster_name.empty()) {
    return InFile(merged.docs[context.doc].name,
                  FieldError(path + ".cluster", "missing"));
  }
  std::string at;
  absl::StatusOr<const NamedEntry*> cluster =
      Find(merged, merged.clusters, "clusters", "cluster", cluster_name, at);
  if (!cluster.ok()) return cluster.status();
  if (auto s = ReadEntry(merged, **cluster, at, config, ReadCluster); !s.ok()) {
    return s;
  }
  const std::string user_name = Scalar(context.value, "user");
  if (user_name.empty()) return absl::OkStatus();
  absl::StatusOr<const NamedEntry*> user =
      Find(merged, merged.users, "users", "user", user_name, at);
  if (!user.ok()) return user.status();
  return ReadEntry(merged, **user, at, config, ReadUser);
}

}  // namespace

absl::Status FieldError(std::string_view path, std::string_view problem) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", path, problem));
}

std::string Scalar(const YAML::Node& map, const char* key) {
  if (!map.IsMap()) return std::string();
  const YAML::Node value = map[key];
  return value && value.IsScalar() ? value.as<std::string>() : std::string();
}

std::string ResolvePath(std::string_view dir, std::string_view file) {
  if (!file.empty() && file.front() == '/') return std::string(file);
  return absl::StrFormat("%s/%s", dir, file);
}

std::string DirOf(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

absl::StatusOr<KubeconfigDoc> ParseDoc(std::string_view text,
                                       std::string_view dir,
                                       std::string_view name) {
  KubeconfigDoc doc{.name = std::string(name), .dir = std::string(dir)};
  if (absl::Status refused = CheckYamlText(text); !refused.ok()) {
    return InFile(name, refused);
  }
  try {  // yaml-cpp reports syntax errors only by exception
    doc.root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return InFile(name, absl::InvalidArgumentError(e.what()));
  }
  // An empty file is an empty configuration, as kubectl reads it.
  if (!doc.root.IsMap() && !doc.root.IsNull()) {
    return InFile(name, absl::InvalidArgumentError("not a YAML mapping"));
  }
  return doc;
}

absl::StatusOr<KubeConfig> Resolve(const MergedKubeconfig& merged,
                                   const ContextOverrides& overrides) {
  const std::string context_name =
      overrides.context.empty() ? merged.current_context : overrides.context;
  if (context_name.empty()) {
    return InFile(merged.name, FieldError("current-context", "missing"));
  }
  std::string path;
  absl::StatusOr<const NamedEntry*> context =
      Find(merged, merged.contexts, "contexts", "context", context_name, path);
  if (!context.ok()) return context.status();
  KubeConfig config;
  try {  // the reads check node types first; this is a second net
    if (auto s = ReadContext(merged, **context, path, config); !s.ok()) {
      return s;
    }
  } catch (const YAML::Exception& e) {
    return InFile(merged.name, absl::InvalidArgumentError(e.what()));
  }
  config.namespace_name = overrides.namespace_name.empty()
                              ? Scalar((*context)->value, "namespace")
                              : overrides.namespace_name;
  if (config.namespace_name.empty() && overrides.default_namespace) {
    config.namespace_name = "default";
  }
  config.source =
      absl::StrFormat("kubeconfig %s, context %s", merged.name, context_name);
  return config;
}

}  // namespace gpusched::kube::internal

namespace gpusched::kube {

absl::StatusOr<KubeConfig> ParseKubeconfig(std::string_view text,
                                           std::string_view dir,
                                           std::string_view name) {
  absl::StatusOr<internal::KubeconfigDoc> doc =
      internal::ParseDoc(text, dir, name);
  if (!doc.ok()) return doc.status();
  internal::MergedKubeconfig merged{.name = std::string(name)};
  internal::Merge(*std::move(doc), merged);
  return internal::Resolve(merged, {});
}

absl::StatusOr<KubeConfig> LoadKubeconfig(std::string_view path) {
  absl::StatusOr<std::string> text = ReadFileText(path);
  if (!text.ok()) return text.status();
  return ParseKubeconfig(*text, internal::DirOf(path), path);
}

}  // namespace gpusched::kube
