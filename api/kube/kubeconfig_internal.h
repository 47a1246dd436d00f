// Internal to the kubeconfig readers: kubeconfig_file.cc (one file, and a
// context's cluster and user), kubeconfig_exec.cc (users[].user.exec) and
// kubeconfig_merge.cc (kubectl's loading rules over several files). Include
// only from those .cc files: it exposes yaml-cpp.
#ifndef GPUSCHED_API_KUBE_KUBECONFIG_INTERNAL_H_
#define GPUSCHED_API_KUBE_KUBECONFIG_INTERNAL_H_

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/kube/kube_config.h"

namespace gpusched::kube::internal {

// One kubeconfig file, parsed.
struct KubeconfigDoc {
  std::string name;  // errors read "kubeconfig NAME: ..."
  std::string dir;   // relative file references resolve here
  YAML::Node root;
};

// A named cluster, user or context: its inner map (null when the entry has
// none, an error only if it is used) and the file that defined it.
struct NamedEntry {
  YAML::Node value;
  size_t doc = 0;  // index into MergedKubeconfig::docs
};

// Several files seen as one, as kubectl merges them: the first file that
// defines a name, or sets current-context, wins.
struct MergedKubeconfig {
  std::vector<KubeconfigDoc> docs;
  std::string name;  // for errors about the whole: the files, ':'-joined
  std::string current_context;
  std::map<std::string, NamedEntry, std::less<>> clusters, users, contexts;
};

// What the command line changes in the chosen context.
struct ContextOverrides {
  std::string context;
  std::string namespace_name;
  // Use "default" when neither the override nor the context names one
  // (kubectl does; LoadKubeconfig leaves it empty, as it always has).
  bool default_namespace = false;
};

// Parses `text`; errors are prefixed "kubeconfig NAME: ".
absl::StatusOr<KubeconfigDoc> ParseDoc(std::string_view text,
                                       std::string_view dir,
                                       std::string_view name);

// Adds a file's entries that no earlier file defined.
void Merge(KubeconfigDoc doc, MergedKubeconfig& merged);

// The chosen context's cluster and user, read with the directory of the
// file that defined each. Parses only; runs nothing.
absl::StatusOr<KubeConfig> Resolve(const MergedKubeconfig& merged,
                                   const ContextOverrides& overrides);

// users[...].user.exec at `path` into `spec`; `dir` resolves a relative
// command that has a '/'.
absl::Status ReadExec(const YAML::Node& exec, const std::string& path,
                      std::string_view dir, ExecCredentialSpec& spec);

// "PATH: PROBLEM", InvalidArgument; the caller prefixes the file.
absl::Status FieldError(std::string_view path, std::string_view problem);

// The text of the scalar `key` of `map`; empty when missing or not scalar.
std::string Scalar(const YAML::Node& map, const char* key);

// `file` when absolute, else `dir`/`file`.
std::string ResolvePath(std::string_view dir, std::string_view file);

// The directory of `path` ("." for a bare name).
std::string DirOf(std::string_view path);

}  // namespace gpusched::kube::internal

#endif  // GPUSCHED_API_KUBE_KUBECONFIG_INTERNAL_H_
