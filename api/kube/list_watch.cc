#include "api/kube/list_watch.h"

#include <string>

#include "api/codec/kube_list_json.h"
#include "api/kube/sync_util.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

// A restarting API server answers 403 for seconds before its authorizer
// has loaded the roles; only a run of them means the role lacks the rule.
constexpr int kForbiddenTries = 8;

class Loop {
 public:
  Loop(KubeClient& client, const ListWatchOptions& options, ListWatchSink& sink,
       std::stop_token stop)
      : client_(client),
        options_(options),
        sink_(sink),
        stop_(stop),
        backoff_(options.initial_backoff, options.max_backoff) {}

  void Run() {
    while (!stop_.stop_requested()) {
      absl::StatusOr<std::string> version = List();
      if (version.ok()) {
        backoff_.Reset();
        forbidden_ = 0;
        said_absent_ = false;
        if (!WatchUntilRelist(*version)) return;
      } else if (!WaitAfterListFailure(version.status())) {
        return;
      }
    }
  }

 private:
  absl::StatusOr<std::string> List() {
    sink_.BeginList();
    size_t count = 0;
    absl::StatusOr<std::string> version =
        ListEveryPage(client_, options_.path, options_.list_page_size, stop_,
                      [&](const std::string& body) {
                        return VisitListItems(body, options_.what,
                                              [&](simdjson::dom::element item) {
                                                ++count;
                                                sink_.ListItem(item);
                                              });
                      });
    if (!version.ok()) return version;
    sink_.EndList();
    spdlog::info("kube sync: listed {} {} at resourceVersion {}", count,
                 options_.what, *version);
    return version;
  }

  // Absent APIs are said once and polled; other failures back off.
  bool WaitAfterListFailure(const absl::Status& status) {
    if (stop_.stop_requested()) return false;
    if (!absl::IsPermissionDenied(status)) forbidden_ = 0;
    const bool absent =
        absl::IsNotFound(status) ||
        (absl::IsPermissionDenied(status) && ++forbidden_ >= kForbiddenTries);
    if (!absent) {
      auto wait = backoff_.Next();
      spdlog::warn("kube sync: listing {} failed, retrying in {} ms: {}",
                   options_.what, wait.count(), Message(status));
      return SleepFor(wait, stop_);
    }
    if (!said_absent_) {
      spdlog::info(
          "kube sync: {} are {}: taken as none, asked again every {} s",
          options_.what,
          absl::IsNotFound(status) ? "not served" : "forbidden (RBAC)",
          options_.absent_poll.count() / 1000);
      said_absent_ = true;
      sink_.Absent(status);
    }
    return SleepFor(options_.absent_poll, stop_);
  }

  // False when stopped; true when the history is gone or the watch broke
  // (then after a pause): list again.
  bool WatchUntilRelist(std::string& version) {
    while (true) {
      const std::string before = version;
      absl::Status watched = Watch(version);
      if (stop_.stop_requested()) return false;
      // A watch that delivered events worked: its end is a first failure.
      if (watched.ok() || version != before) backoff_.Reset();
      if (watched.ok()) continue;
      if (IsGone(watched)) {
        spdlog::info("kube sync: relisting {}: {}", options_.what,
                     Message(watched));
        return true;
      }
      auto wait = backoff_.Next();
      spdlog::warn("kube sync: watching {} failed, relisting in {} ms: {}",
                   options_.what, wait.count(), Message(watched));
      return SleepFor(wait, stop_);
    }
  }

  absl::Status Watch(std::string& version) {
    return client_.Watch(
        options_.path, version,
        [&](const WatchEvent& event) {
          if (!event.resource_version.empty()) {
            version = std::string(event.resource_version);
          }
          if (event.type != WatchEventType::kBookmark) {
            sink_.Event(event.type, event.object);
          }
          return absl::OkStatus();
        },
        stop_);
  }

  KubeClient& client_;
  const ListWatchOptions& options_;
  ListWatchSink& sink_;
  std::stop_token stop_;
  Backoff backoff_;
  int forbidden_ = 0;
  bool said_absent_ = false;
};

}  // namespace

void RunListWatch(KubeClient& client, const ListWatchOptions& options,
                  ListWatchSink& sink, std::stop_token stop) {
  Loop(client, options, sink, stop).Run();
}

}  // namespace gpusched::kube
