#include "api/kube/crd_watch.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/kube/sync_util.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

constexpr std::string_view kCrdPath =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

absl::Status FieldError(std::string_view crd, std::string_view field,
                        std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(
      "CustomResourceDefinition ", Sv(crd), ": ", Sv(field), ": ", Sv(what)));
}

// spec.versions: whether `version` is among them with served: true.
absl::StatusOr<bool> ServesVersion(simdjson::dom::element crd,
                                   std::string_view name,
                                   std::string_view version) {
  simdjson::dom::array versions;
  if (crd.at_pointer("/spec/versions").get_array().get(versions)) {
    return FieldError(name, "spec.versions", "missing or not a list");
  }
  size_t i = 0;
  for (simdjson::dom::element entry : versions) {
    const std::string field = absl::StrCat("spec.versions[", i++, "]");
    std::string_view entry_name;
    bool served = false;
    if (entry["name"].get_string().get(entry_name)) {
      return FieldError(name, field + ".name", "missing or not a string");
    }
    if (entry["served"].get_bool().get(served)) {
      return FieldError(name, field + ".served", "missing or not a boolean");
    }
    if (entry_name == version && served) return true;
  }
  return false;
}

// status.conditions: whether Established is "True". A CRD just created has
// no status yet: not established.
absl::StatusOr<bool> IsEstablished(simdjson::dom::element crd,
                                   std::string_view name) {
  simdjson::dom::element status, conditions;
  if (crd["status"].get(status) || status.is_null()) return false;
  if (!status.is_object()) return FieldError(name, "status", "not an object");
  if (status["conditions"].get(conditions) || conditions.is_null()) {
    return false;
  }
  if (!conditions.is_array()) {
    return FieldError(name, "status.conditions", "not a list");
  }
  size_t i = 0;
  for (simdjson::dom::element condition : conditions.get_array()) {
    const std::string field = absl::StrCat("status.conditions[", i++, "]");
    std::string_view type, value;
    if (condition["type"].get_string().get(type)) {
      return FieldError(name, field + ".type", "missing or not a string");
    }
    if (condition["status"].get_string().get(value)) {
      return FieldError(name, field + ".status", "missing or not a string");
    }
    if (type == "Established") return value == "True";
  }
  return false;
}

}  // namespace

absl::StatusOr<CrdServing> DecodeCrd(simdjson::dom::element crd,
                                     std::string_view version) {
  std::string_view name;
  if (!crd.is_object()) {
    return absl::InvalidArgumentError(
        "CustomResourceDefinition: not an object");
  }
  if (crd.at_pointer("/metadata/name").get_string().get(name)) {
    return absl::InvalidArgumentError(
        "CustomResourceDefinition: metadata.name: missing or not a string");
  }
  absl::StatusOr<bool> served = ServesVersion(crd, name, version);
  if (!served.ok()) return served.status();
  absl::StatusOr<bool> established = IsEstablished(crd, name);
  if (!established.ok()) return established.status();
  return CrdServing{.name = std::string(name),
                    .established = *established,
                    .version_served = *served};
}

CrdWatch::CrdWatch(KubeClient& client, CrdWatchOptions options)
    : client_(client),
      options_(std::move(options)),
      path_(absl::StrFormat("%s?fieldSelector=%s", kCrdPath,
                            PercentEncode("metadata.name=" + options_.name))) {}

CrdWatch::~CrdWatch() { Stop(); }

void CrdWatch::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void CrdWatch::Stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

CrdWatch::Mark CrdWatch::mark() const {
  std::lock_guard lock(mu_);
  return Mark{.readied = readied_, .removal = removal_.get_token()};
}

bool CrdWatch::ready() const {
  std::lock_guard lock(mu_);
  return ready_;
}

CrdWatch::Wake CrdWatch::WaitUntilReady(const Mark& since,
                                        std::chrono::milliseconds poll,
                                        std::stop_token stop) const {
  const auto deadline = std::chrono::steady_clock::now() + poll;
  std::unique_lock lock(mu_);
  while (!stop.stop_requested()) {
    if (readied_ != since.readied) return Wake::kReady;
    if (answering_) {
      // The CRD watch will say when: no poll.
      changed_.wait(lock, stop, [&] {
        return readied_ != since.readied || !answering_;
      });
    } else if (std::chrono::steady_clock::now() >= deadline) {
      return Wake::kPollDue;
    } else {
      changed_.wait_until(lock, stop, deadline, [&] {
        return readied_ != since.readied || answering_;
      });
    }
  }
  return Wake::kStopped;
}

// List, then watch from the list's version; any failure lists again after
// a backoff (one small object: relisting is cheap).
void CrdWatch::Run(std::stop_token stop) {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  while (!stop.stop_requested()) {
    absl::StatusOr<std::string> version = List(stop);
    absl::Status watched = version.status();
    if (stop.stop_requested()) return;
    SetAnswering(watched.ok());
    while (watched.ok() && !stop.stop_requested()) {
      watched = WatchFrom(*version, stop);
      if (watched.ok()) backoff.Reset();  // the server ended it: re-watch
    }
    if (stop.stop_requested()) return;
    if (!WaitAfterFailure(watched, backoff, stop)) return;
  }
}

absl::StatusOr<std::string> CrdWatch::List(std::stop_token stop) {
  absl::StatusOr<ListResult> list = client_.List(path_, {.stop = stop});
  if (!list.ok()) return list.status();
  simdjson::dom::parser parser;
  simdjson::dom::element root, items;
  if (parser.parse(list->body).get(root)) {
    return absl::DataLossError(absl::StrCat(
        "list CustomResourceDefinition ", options_.name, ": malformed JSON"));
  }
  bool ready = false;
  if (!root["items"].get(items) && !items.is_null()) {
    if (!items.is_array()) {
      return absl::DataLossError(absl::StrCat(
          "list CustomResourceDefinition ", options_.name, ": items: not a list"));
    }
    for (simdjson::dom::element item : items.get_array()) {
      absl::StatusOr<CrdServing> crd = DecodeCrd(item, options_.version);
      if (!crd.ok()) return crd.status();
      ready = ready || (crd->name == options_.name && crd->ready());
    }
  }
  Observe(ready);
  return list->resource_version;
}

// A CRD that cannot be decoded ends the watch: the relist reports it and,
// while it lasts, waiters fall back to the poll.
absl::Status CrdWatch::WatchFrom(std::string& version, std::stop_token stop) {
  return client_.Watch(
      path_, version,
      [&](const WatchEvent& event) {
        if (!event.resource_version.empty()) {
          version = std::string(event.resource_version);
        }
        if (event.type == WatchEventType::kBookmark) return absl::OkStatus();
        if (event.type == WatchEventType::kDeleted) {
          Observe(false);
          return absl::OkStatus();
        }
        absl::StatusOr<CrdServing> crd = DecodeCrd(event.object, options_.version);
        if (!crd.ok()) return crd.status();
        Observe(crd->name == options_.name && crd->ready());
        return absl::OkStatus();
      },
      stop);
}

// 403: the role lacks the CRD rule (an older deploy/). Said once; the
// CRD is asked for again every `forbidden_retry`, so a role updated later
// is picked up without a restart.
bool CrdWatch::WaitAfterFailure(const absl::Status& status, Backoff& backoff,
                                std::stop_token stop) {
  if (absl::IsPermissionDenied(status)) {
    if (!forbidden_logged_) {
      spdlog::warn(
          "kube sync: may not watch CustomResourceDefinition {} (the RBAC of "
          "an older gpusched?): its PodGroup API, while not served, is asked "
          "for again every {} s instead of at once when the CRD is "
          "established: {}",
          options_.name, options_.forbidden_retry.count() / 1000,
          Message(status));
      forbidden_logged_ = true;
    }
    return SleepFor(options_.forbidden_retry, stop);
  }
  auto wait = backoff.Next();
  spdlog::warn("kube sync: watching CustomResourceDefinition {} failed, "
               "relisting in {} ms: {}",
               options_.name, wait.count(), Message(status));
  return SleepFor(wait, stop);
}

void CrdWatch::Observe(bool ready) {
  std::stop_source removed{std::nostopstate};
  {
    std::lock_guard lock(mu_);
    if (ready == ready_) return;
    ready_ = ready;
    if (ready) ++readied_;
    if (!ready) removed = std::exchange(removal_, std::stop_source());
    changed_.notify_all();
  }
  if (ready) {
    spdlog::info("kube sync: CustomResourceDefinition {} is established and "
                 "serves {}", options_.name, options_.version);
  } else {
    spdlog::info("kube sync: CustomResourceDefinition {} was removed or no "
                 "longer serves {}", options_.name, options_.version);
  }
  // Outside the lock: ends the PodGroup watches of the period that ended.
  removed.request_stop();
}

void CrdWatch::SetAnswering(bool answering) {
  if (answering && forbidden_logged_) {
    spdlog::info("kube sync: CustomResourceDefinition {} may be watched now",
                 options_.name);
    forbidden_logged_ = false;
  }
  std::lock_guard lock(mu_);
  if (answering == answering_) return;
  answering_ = answering;
  changed_.notify_all();
}

}  // namespace gpusched::kube
