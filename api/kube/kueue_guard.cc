#include "api/kube/kueue_guard.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/kueue_presence_json.h"
#include "api/codec/lease_json.h"
#include "api/kube/sync_util.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

constexpr std::string_view kMutating =
    "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
constexpr std::string_view kValidating =
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

bool IsHttp(const absl::Status& status, int code) {
  std::optional<HttpFailure> failure = HttpFailureOf(status);
  return failure.has_value() && failure->code == code;
}

std::string Why(const std::optional<std::string>& holder,
                const std::vector<std::string>& webhooks,
                std::string_view lease) {
  std::vector<std::string> reasons;
  if (holder) {
    reasons.push_back(
        absl::StrCat("its leader Lease ", Sv(lease), " is held by ", *holder));
  }
  if (!webhooks.empty()) {
    reasons.push_back(absl::StrCat("webhook configurations on ",
                                   Sv(kKueueApiGroup), " are installed (",
                                   absl::StrJoin(webhooks, ", "), ")"));
  }
  if (reasons.empty()) return "";
  return absl::StrCat(
      "a Kueue manager is active: ", absl::StrJoin(reasons, "; "),
      "; gpusched decides nothing until it is stopped and "
      "its webhook configurations are removed");
}

}  // namespace

// A role without the rule cannot tell: said once, and read as "not
// there", so that an install with an older role keeps deciding.
bool KueueGuard::CannotTell(const absl::Status& status, std::string_view what) {
  if (!IsHttp(status, 403)) return false;
  if (!forbidden_said_) {
    spdlog::warn(
        "kueue guard: may not read {} ({}); cannot tell whether a Kueue "
        "manager uses it: give the role the rule deploy/ has",
        what, Message(status));
  }
  forbidden_said_ = true;
  return true;
}

KueueGuard::KueueGuard(KubeClient& client, KueueGuardOptions options)
    : client_(client), options_(std::move(options)) {}

KueueGuard::~KueueGuard() { Stop(); }

void KueueGuard::Start() {
  thread_ = std::jthread([this](std::stop_token stop) {
    do {
      Record(CheckOnce(stop));
    } while (SleepFor(options_.period, stop));
  });
}

void KueueGuard::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

KueuePresence KueueGuard::presence() const {
  std::lock_guard lock(mu_);
  return presence_.value_or(KueuePresence{});
}

absl::StatusOr<KueuePresence> KueueGuard::CheckOnce(std::stop_token stop) {
  absl::StatusOr<std::optional<std::string>> holder = LeaseHolder(stop);
  if (!holder.ok()) return holder.status();
  absl::StatusOr<std::vector<std::string>> webhooks = KueueWebhooks(stop);
  if (!webhooks.ok()) return webhooks.status();
  std::string why =
      Why(*holder, *webhooks,
          absl::StrCat(options_.lease_namespace, "/", options_.lease_name));
  return KueuePresence{.active = !why.empty(), .why = std::move(why)};
}

// The holder while the Lease is held and not expired.
absl::StatusOr<std::optional<std::string>> KueueGuard::LeaseHolder(
    std::stop_token stop) {
  if (options_.lease_name.empty()) return std::nullopt;
  const std::string path =
      absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                   options_.lease_namespace, "/leases/", options_.lease_name);
  absl::StatusOr<std::string> body = client_.Get(path, {.stop = stop});
  if (!body.ok()) {
    if (IsHttp(body.status(), 404)) return std::nullopt;
    if (CannotTell(body.status(), "Kueue's leader Lease")) return std::nullopt;
    return body.status();
  }
  simdjson::dom::parser parser;
  simdjson::dom::element lease;
  if (parser.parse(*body).get(lease) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("Kueue's leader Lease: not JSON");
  }
  absl::StatusOr<LeaseState> state = DecodeLease(lease);
  if (!state.ok()) return state.status();
  const absl::Time now = options_.now ? options_.now() : absl::Now();
  if (state->holder.empty() || !state->renewed ||
      *state->renewed + absl::Seconds(state->duration_seconds) <= now) {
    return std::nullopt;
  }
  return state->holder;
}

absl::StatusOr<std::vector<std::string>> KueueGuard::KueueWebhooks(
    std::stop_token stop) {
  std::vector<std::string> names;
  for (std::string_view path : {kMutating, kValidating}) {
    absl::StatusOr<std::string> body = client_.Get(path, {.stop = stop});
    if (!body.ok()) {
      if (CannotTell(body.status(), path)) continue;
      return body.status();
    }
    absl::StatusOr<std::vector<std::string>> found =
        WebhookConfigurationsOnGroup(*body, kKueueApiGroup);
    if (!found.ok()) return found.status();
    names.insert(names.end(), found->begin(), found->end());
  }
  return names;
}

void KueueGuard::Record(const absl::StatusOr<KueuePresence>& found) {
  if (!found.ok()) {
    if (!failing_) {
      spdlog::warn("kueue guard: check failed, keeping what it found last: {}",
                   Message(found.status()));
    }
    failing_ = true;
    return;
  }
  failing_ = false;
  {
    std::lock_guard lock(mu_);
    if (presence_ == *found) return;
    presence_ = *found;
  }
  if (found->active) {
    spdlog::error("{}", found->why);
  } else {
    spdlog::info("kueue guard: no Kueue manager is active; gpusched decides");
  }
  if (options_.on_change) options_.on_change(*found);
}

}  // namespace gpusched::kube
