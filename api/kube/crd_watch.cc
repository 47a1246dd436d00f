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

}  // namespace

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
      changed_.wait(lock, stop,
                    [&] { return readied_ != since.readied || !answering_; });
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
  absl::StatusOr<std::vector<CrdServing>> crds =
      DecodeCrdList(list->body, options_.version);
  if (!crds.ok()) {
    return absl::DataLossError(absl::StrCat("list CustomResourceDefinition ",
                                            options_.name, ": ",
                                            crds.status().message()));
  }
  bool ready = false;
  for (const CrdServing& crd : *crds) {
    ready = ready || (crd.name == options_.name && crd.ready());
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
        absl::StatusOr<CrdServing> crd =
            DecodeCrd(event.object, options_.version);
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
  spdlog::warn(
      "kube sync: watching CustomResourceDefinition {} failed, "
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
    spdlog::info(
        "kube sync: CustomResourceDefinition {} is established and "
        "serves {}",
        options_.name, options_.version);
  } else {
    spdlog::info(
        "kube sync: CustomResourceDefinition {} was removed or no "
        "longer serves {}",
        options_.name, options_.version);
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
