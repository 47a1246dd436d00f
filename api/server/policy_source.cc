#include "api/server/policy_source.h"

#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/file_text.h"
#include "policies/policy_loader.h"
#include "spdlog/spdlog.h"

namespace gpusched {
namespace {

std::string JoinErrors(const std::vector<PolicyError>& errors) {
  std::string text;
  for (const PolicyError& e : errors) absl::StrAppend(&text, "\n  ", e.message);
  return text;
}

}  // namespace

PolicySource::PolicySource(PolicySourceOptions options)
    : options_(std::move(options)) {}

PolicySource::~PolicySource() { Stop(); }

absl::StatusOr<std::unique_ptr<PolicySource>> PolicySource::Open(
    PolicySourceOptions options) {
  if (options.kueue && options.client == nullptr) {
    return absl::InvalidArgumentError(
        "--policy-source=kueue reads the cluster: it needs --kubeconfig or "
        "--in-cluster");
  }
  std::unique_ptr<PolicySource> source(new PolicySource(std::move(options)));
  if (!source->options_.kueue) return source;
  source->objects_ = std::make_unique<kube::KueueObjects>(
      *source->options_.client, source->options_.watch);
  source->objects_->Start();
  if (!source->objects_->WaitListed(source->options_.first_list_wait)) {
    spdlog::warn(
        "policy: Kueue's objects are not all listed after {} ms; starting "
        "with what is there, and reloading as they arrive",
        source->options_.first_list_wait.count());
  }
  return source;
}

absl::StatusOr<Policy> PolicySource::First() {
  FileChanged();  // notes the file's time
  TakeObjects();
  PolicyResult result = Load();
  if (result.policy && objects_ != nullptr) {
    // Admission Fair Sharing's usage survives a restart in LocalQueue
    // status, as in Kueue.
    result.policy->afs_usage_at_start = objects_->AfsUsages();
  }
  if (result.policy) return *std::move(result.policy);
  if (!options_.kueue) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy ", options_.file, " is invalid:", JoinErrors(result.errors)));
  }
  spdlog::error(
      "policy: the Kueue objects and file {} do not load; no ClusterQueue "
      "admits until the file is fixed:{}",
      options_.file, JoinErrors(result.errors));
  return Policy{};
}

std::optional<PolicyResult> PolicySource::Changed() {
  const bool file = FileChanged();
  const bool objects = TakeObjects();
  if (!file && !objects) return std::nullopt;
  return Load();
}

std::string PolicySource::Describe() const {
  if (!options_.kueue) return absl::StrCat("file ", options_.file);
  if (options_.file.empty()) return "Kueue objects";
  return absl::StrCat("Kueue objects and file ", options_.file);
}

void PolicySource::Stop() {
  if (objects_ != nullptr) objects_->Stop();
}

PolicyResult PolicySource::Load() {
  std::vector<PolicyText> file;
  if (!options_.file.empty()) {
    absl::StatusOr<std::string> text = ReadTextFile(options_.file);
    if (!text.ok()) {
      return PolicyResult{
          .errors = {{.file = options_.file,
                      .message = std::string(text.status().message())}}};
    }
    file.push_back({.name = options_.file, .text = *std::move(text)});
  }
  if (!options_.kueue) return ParsePolicyTexts(file);
  PolicyResult result = ParsePolicyTextsSettingAside(documents_, file);
  if (result.ok() && result.set_aside != set_aside_) {
    for (const SetAsideDocument& doc : result.set_aside) {
      spdlog::error("policy: {} is left out (inactive) until it is fixed: {}",
                    doc.name, doc.message);
    }
    set_aside_ = result.set_aside;
  }
  return result;
}

// True when the Kueue objects changed since they were last taken.
bool PolicySource::TakeObjects() {
  if (objects_ == nullptr) return false;
  std::optional<kube::KueueObjectsSnapshot> snapshot =
      objects_->SnapshotIfNewer(objects_seen_);
  if (!snapshot) return false;
  objects_seen_ = snapshot->version;
  if (snapshot->documents == documents_) return false;
  documents_ = std::move(snapshot->documents);
  return true;
}

// True when the file's modification time differs from the one last seen.
bool PolicySource::FileChanged() {
  if (options_.file.empty()) return false;
  std::error_code error;
  auto mtime = std::filesystem::last_write_time(options_.file, error);
  if (error || mtime == file_mtime_) return false;
  file_mtime_ = mtime;
  return true;
}

}  // namespace gpusched
