// kubectl's loading rules (client-go's ClientConfigLoadingRules): which
// files are read, and how several merge into one configuration.
//
// Steps:
//   1. The files: --kubeconfig alone; else $KUBECONFIG's list (empty
//      entries and repeats dropped); else ~/.kube/config.
//   2. Each file that exists is parsed; a missing one is skipped, except
//      --kubeconfig's. An unreadable or malformed one is an error.
//   3. The first file to define a cluster, user or context name supplies
//      that entry whole; the first to set current-context supplies it.
//   4. The context (--context, else current-context) is resolved, each
//      entry against the directory of its own file.
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "api/kube/kube_config.h"
#include "api/kube/kubeconfig_internal.h"

namespace gpusched::kube {
namespace {

using internal::MergedKubeconfig;
using internal::NamedEntry;

// Entries are kept in the order kubectl gives precedence, so an entry
// already present (from an earlier file, or earlier in this one) stays.
void AddEntries(const YAML::Node& root, const char* list, const char* inner,
                size_t doc,
                std::map<std::string, NamedEntry, std::less<>>& to) {
  if (!root.IsMap()) return;
  const YAML::Node entries = root[list];
  if (!entries || !entries.IsSequence()) return;
  for (const YAML::Node& entry : entries) {
    if (!entry.IsMap()) continue;
    std::string name = internal::Scalar(entry, "name");
    if (name.empty() || to.contains(name)) continue;
    const YAML::Node value = entry[inner];
    to.emplace(std::move(name),
               NamedEntry{.value = value ? value : YAML::Node(), .doc = doc});
  }
}

// Step 1.
std::vector<std::string> Candidates(const KubeconfigSelection& selection) {
  if (!selection.kubeconfig.empty()) return {selection.kubeconfig};
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (absl::string_view entry :
       absl::StrSplit(selection.kubeconfig_env, ':', absl::SkipEmpty())) {
    if (seen.emplace(entry).second) files.emplace_back(entry);
  }
  if (!files.empty() || !selection.kubeconfig_env.empty()) return files;
  if (selection.home.empty()) return {};
  return {selection.home + "/.kube/config"};
}

// Step 2 for one file: false when it is skipped as missing.
absl::StatusOr<bool> ReadInto(const std::string& file, bool required,
                              MergedKubeconfig& merged) {
  std::error_code error;
  if (!required && !std::filesystem::exists(file, error)) return false;
  absl::StatusOr<std::string> text = ReadFileText(file);
  if (!text.ok()) return text.status();
  absl::StatusOr<internal::KubeconfigDoc> doc =
      internal::ParseDoc(*text, internal::DirOf(file), file);
  if (!doc.ok()) return doc.status();
  internal::Merge(*std::move(doc), merged);
  return true;
}

}  // namespace

KubeconfigSelection KubeconfigSelection::FromEnvironment() {
  KubeconfigSelection selection;
  if (const char* list = std::getenv("KUBECONFIG")) {
    selection.kubeconfig_env = list;
  }
  if (const char* home = std::getenv("HOME")) selection.home = home;
  return selection;
}

absl::StatusOr<KubeConfig> LoadKubeconfigs(
    const KubeconfigSelection& selection) {
  const std::vector<std::string> files = Candidates(selection);
  MergedKubeconfig merged;
  std::vector<std::string> read;
  for (const std::string& file : files) {
    absl::StatusOr<bool> found =
        ReadInto(file, !selection.kubeconfig.empty(), merged);
    if (!found.ok()) return found.status();
    if (*found) read.push_back(file);
  }
  if (read.empty()) {
    return absl::NotFoundError(absl::StrFormat(
        "no kubeconfig: none of [%s] exists; set --kubeconfig or KUBECONFIG",
        absl::StrJoin(files, ", ")));
  }
  merged.name = absl::StrJoin(read, ":");
  return internal::Resolve(merged, {.context = selection.context,
                                    .namespace_name = selection.namespace_name,
                                    .default_namespace = true});
}

}  // namespace gpusched::kube

namespace gpusched::kube::internal {

void Merge(KubeconfigDoc doc, MergedKubeconfig& merged) {
  const size_t index = merged.docs.size();
  if (merged.current_context.empty()) {
    merged.current_context = Scalar(doc.root, "current-context");
  }
  AddEntries(doc.root, "clusters", "cluster", index, merged.clusters);
  AddEntries(doc.root, "users", "user", index, merged.users);
  AddEntries(doc.root, "contexts", "context", index, merged.contexts);
  merged.docs.push_back(std::move(doc));
}

}  // namespace gpusched::kube::internal
