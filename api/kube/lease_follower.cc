#include "api/kube/lease_follower.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/kube/sync_util.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

std::string LeasePath(const LeaseFollowerOptions& o) {
  // A field selector, so the watch carries this Lease only (kube-system's
  // hold a Lease per node and per controller).
  return absl::StrFormat(
      "/apis/coordination.k8s.io/v1/namespaces/%s/leases?fieldSelector=%s",
      o.namespace_name, PercentEncode("metadata.name=" + o.name));
}

}  // namespace

bool HeldBy(const LeaseState& state, std::string_view identity,
            absl::Time now) {
  if (identity.empty() || !state.renewed.has_value()) return false;
  if (!state.holder.starts_with(std::string(identity) + "_")) return false;
  return now < *state.renewed + absl::Seconds(state.duration_seconds);
}

LeaseFollower::LeaseFollower(KubeClient& client, LeaseFollowerOptions options)
    : client_(client), options_(std::move(options)) {}

LeaseFollower::~LeaseFollower() { Stop(); }

void LeaseFollower::Start() {
  watcher_ = std::jthread([this](std::stop_token stop) { Watch(stop); });
  ticker_ = std::jthread([this](std::stop_token stop) { Tick(stop); });
}

void LeaseFollower::Stop() {
  watcher_.request_stop();
  ticker_.request_stop();
  if (watcher_.joinable()) watcher_.join();
  if (ticker_.joinable()) ticker_.join();
}

bool LeaseFollower::active() const {
  std::lock_guard lock(mu_);
  return active_;
}

std::string LeaseFollower::holder() const {
  std::lock_guard lock(mu_);
  return state_.has_value() ? state_->holder : "";
}

absl::Time LeaseFollower::Now() const {
  return options_.now ? options_.now() : absl::Now();
}

void LeaseFollower::Tick(std::stop_token stop) {
  while (SleepFor(options_.recheck, stop)) Evaluate();
}

// List, then watch from the list's version; any failure lists again after
// a backoff (a Lease is one small object: relisting is cheap).
void LeaseFollower::Watch(std::stop_token stop) {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  while (!stop.stop_requested()) {
    absl::StatusOr<std::string> version = List(stop);
    absl::Status watched = version.status();
    while (watched.ok() && !stop.stop_requested()) {
      backoff.Reset();
      watched = client_.Watch(
          LeasePath(options_), *version,
          [&](const WatchEvent& event) {
            if (!event.resource_version.empty()) {
              *version = std::string(event.resource_version);
            }
            if (event.type == WatchEventType::kBookmark) {
              return absl::OkStatus();
            }
            if (event.type == WatchEventType::kDeleted) {
              Observe(std::nullopt);
              return absl::OkStatus();
            }
            absl::StatusOr<LeaseState> state = DecodeLease(event.object);
            if (!state.ok()) return state.status();
            Observe(*std::move(state));
            return absl::OkStatus();
          },
          stop);
    }
    if (stop.stop_requested()) return;
    auto wait = backoff.Next();
    spdlog::warn("leader lease {}/{}: relisting in {} ms: {}",
                 options_.namespace_name, options_.name, wait.count(),
                 Message(watched));
    if (!SleepFor(wait, stop)) return;
  }
}

absl::StatusOr<std::string> LeaseFollower::List(std::stop_token stop) {
  absl::StatusOr<ListResult> list =
      client_.List(LeasePath(options_), {.stop = stop});
  if (!list.ok()) return list.status();
  absl::StatusOr<std::optional<LeaseState>> state = DecodeLeaseList(list->body);
  if (!state.ok()) {
    return absl::DataLossError(
        absl::StrCat("leases list: ", state.status().message()));
  }
  Observe(*std::move(state));
  return list->resource_version;
}

void LeaseFollower::Observe(std::optional<LeaseState> state) {
  {
    std::lock_guard lock(mu_);
    state_ = std::move(state);
  }
  Evaluate();
}

void LeaseFollower::Evaluate() {
  std::lock_guard serial(evaluate_mu_);
  bool active = false;
  std::string holder;
  {
    std::lock_guard lock(mu_);
    active = state_.has_value() && HeldBy(*state_, options_.identity, Now());
    holder = state_.has_value() ? state_->holder : "";
    if (active == active_) return;
    active_ = active;
  }
  spdlog::info("leader lease {}/{}: {} (holder \"{}\")",
               options_.namespace_name, options_.name,
               active ? "this replica's kube-scheduler leads: deciding"
                      : "another kube-scheduler leads: standing by",
               holder);
  if (options_.on_change) options_.on_change(active, holder);
}

}  // namespace gpusched::kube
