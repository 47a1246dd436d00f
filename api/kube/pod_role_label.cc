#include "api/kube/pod_role_label.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/pod_admission_json.h"
#include "api/kube/sync_util.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

std::string_view RoleName(bool deciding) {
  return deciding ? "deciding" : "standby";
}

}  // namespace

PodRoleLabel::PodRoleLabel(KubeClient& client, PodRoleLabelOptions options)
    : client_(client), options_(std::move(options)) {}

PodRoleLabel::~PodRoleLabel() { Stop(); }

void PodRoleLabel::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void PodRoleLabel::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  changed_.notify_all();
  thread_.join();
}

void PodRoleLabel::Set(bool deciding) {
  {
    std::lock_guard lock(mu_);
    wanted_ = deciding;
  }
  changed_.notify_all();
}

std::optional<bool> PodRoleLabel::written() const {
  std::lock_guard lock(mu_);
  return written_;
}

std::optional<bool> PodRoleLabel::NextToWrite(std::stop_token stop) {
  std::unique_lock lock(mu_);
  changed_.wait(lock, stop,
                [this] { return wanted_.has_value() && wanted_ != written_; });
  if (stop.stop_requested()) return std::nullopt;
  return wanted_;
}

void PodRoleLabel::Run(std::stop_token stop) {
  const std::string path = absl::StrCat(
      "/api/v1/namespaces/", options_.namespace_name, "/pods/", options_.name);
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  while (std::optional<bool> role = NextToWrite(stop)) {
    absl::StatusOr<std::string> patched = client_.Patch(
        path, EncodeLabelPatch(kRoleLabel, RoleName(*role)), {.stop = stop});
    if (!patched.ok()) {
      spdlog::warn("labelling pod {}/{} {}={}: {}", options_.namespace_name,
                   options_.name, kRoleLabel, RoleName(*role),
                   patched.status().ToString());
      if (!SleepFor(backoff.Next(), stop)) return;
      continue;
    }
    backoff.Reset();
    spdlog::info("pod {}/{} labelled {}={}", options_.namespace_name,
                 options_.name, kRoleLabel, RoleName(*role));
    std::lock_guard lock(mu_);
    written_ = role;
  }
}

}  // namespace gpusched::kube
