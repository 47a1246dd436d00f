#include "api/kube/podgroup_sync.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_format.h"
#include "api/codec/kube_list_json.h"
#include "api/codec/podgroup_decode.h"
#include "api/kube/podgroup_api.h"
#include "api/kube/sync_util.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

std::string_view ApiName(PodGroup::Flavor flavor) {
  return PodGroupApiOf(flavor).group_version;
}

// The CRD that defines an API, and the version gpusched lists.
CrdWatchOptions CrdOf(const PodGroupApi& api,
                      const PodGroupSyncOptions& options) {
  return CrdWatchOptions{.name = std::string(api.crd),
                         .version = std::string(api.crd_version),
                         .initial_backoff = options.initial_backoff,
                         .max_backoff = options.max_backoff,
                         .forbidden_retry = options.absent_poll};
}

// An item that does not decode is logged and skipped, as for pods.
absl::Status DecodeItems(const std::string& body, PodGroup::Flavor flavor,
                         std::vector<PodGroup>& out) {
  absl::StatusOr<DecodedList<PodGroup>> list =
      DecodePodGroupList(body, ApiName(flavor));
  if (!list.ok()) {
    return absl::DataLossError(absl::StrFormat(
        "list %s podgroups: %s", ApiName(flavor), Message(list.status())));
  }
  for (const SkippedItem& skipped : list->skipped) {
    spdlog::warn("kube sync: skipped {} PodGroup {}: {}", ApiName(flavor),
                 skipped.name, Message(skipped.error));
  }
  std::move(list->items.begin(), list->items.end(), std::back_inserter(out));
  return absl::OkStatus();
}

}  // namespace

std::string_view PodGroupListPath(PodGroup::Flavor flavor) {
  return PodGroupApiOf(flavor).list_path;
}

PodGroupSync::PodGroupSync(KubeClient& client, PodGroupListener& listener,
                           PodGroupSyncOptions options)
    : client_(client), listener_(listener), options_(options) {
  for (const PodGroupApi& api : kPodGroupApis) {
    if (api.crd.empty()) continue;  // built in: no CRD to watch
    crds_[FlavorIndex(api.flavor)] =
        std::make_unique<CrdWatch>(client_, CrdOf(api, options_));
  }
}

PodGroupSync::~PodGroupSync() { Stop(); }

void PodGroupSync::Start() {
  for (std::unique_ptr<CrdWatch>& crd : crds_) {
    if (crd) crd->Start();
  }
  for (const PodGroupApi& api : kPodGroupApis) {
    threads_[FlavorIndex(api.flavor)] =
        std::jthread([this, flavor = api.flavor](std::stop_token stop) {
          Run(flavor, stop);
        });
  }
}

void PodGroupSync::Stop() {
  for (std::jthread& thread : threads_) thread.request_stop();
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  for (std::unique_ptr<CrdWatch>& crd : crds_) {
    if (crd) crd->Stop();  // after the threads: they use it
  }
}

bool PodGroupSync::settled(PodGroup::Flavor flavor) const {
  return settled_[FlavorIndex(flavor)];
}

// List, then watch until the history or the API is gone. An absent API is
// listed again when its CRD is established (the built-in one at the next
// poll): said once when it goes missing, once when it comes back.
void PodGroupSync::Run(PodGroup::Flavor flavor, std::stop_token stop) {
  const CrdWatch* crd = crds_[FlavorIndex(flavor)].get();  // null: built in
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  ListRun run;
  while (!stop.stop_requested()) {
    // Noted before the list, so that a CRD established or removed while
    // the list runs is not missed.
    const CrdWatch::Mark mark = crd ? crd->mark() : CrdWatch::Mark{};
    absl::StatusOr<std::string> version = ListAll(flavor, stop);
    if (stop.stop_requested()) return;
    if (CountsAsAbsent(version.status(), run.forbidden)) {
      if (!run.absent) ReportAbsent(flavor, version.status());
      run.absent = true;
      settled_[FlavorIndex(flavor)] = true;
      if (!WaitToAskAgain(flavor, version.status(), mark, backoff, stop)) {
        return;
      }
      continue;
    }
    if (!version.ok()) {
      if (!ListFailed(flavor, version.status(), backoff, run, stop)) return;
      continue;
    }
    NoteListed(flavor, run);
    backoff.Reset();
    bool gone = false;
    if (!WatchUntilRelist(flavor, *version, backoff, mark.removal, stop,
                          gone)) {
      return;
    }
    if (gone) listener_.OnPodGroupsRelisting(flavor);
  }
}

void PodGroupSync::NoteListed(PodGroup::Flavor flavor, ListRun& run) {
  if (run.absent) {
    spdlog::info("kube sync: {} PodGroups are served now", ApiName(flavor));
  }
  if (run.told_failing) {
    spdlog::info("kube sync: {} PodGroups are listed again", ApiName(flavor));
  }
  run = ListRun{};
  settled_[FlavorIndex(flavor)] = true;
}

bool PodGroupSync::ListFailed(PodGroup::Flavor flavor,
                              const absl::Status& status, Backoff& backoff,
                              ListRun& run, std::stop_token stop) {
  const Clock::time_point now = Clock::now();
  if (!run.failing_since) run.failing_since = now;
  const Clock::time_point since = *run.failing_since;
  auto wait = backoff.Next();
  spdlog::warn("kube sync: listing {} PodGroups failed, retrying in {} ms: {}",
               ApiName(flavor), wait.count(), Message(status));
  if (!run.told_failing && now - since >= options_.failing_after) {
    run.told_failing = true;
    spdlog::error(
        "kube sync: {} PodGroups cannot be listed ({} s of failures): their "
        "gangs wait, every other workload is admitted: {}",
        ApiName(flavor),
        std::chrono::duration_cast<std::chrono::seconds>(now - since).count(),
        Message(status));
    listener_.OnPodGroupListFailing(flavor, std::string(Message(status)));
  }
  return SleepFor(wait, stop);
}

// A forbidden API waits out the poll: no CRD event changes a role. So
// does the missing built-in API: it appears when kube-apiserver restarts
// with the runtime-config that serves it, which no object announces. A
// missing CRD API waits for its CRD (the poll only while the CRD watch has
// no answer), unless the CRD is established already: then this API server
// has not caught up with it yet, and it is asked again after a backoff.
bool PodGroupSync::WaitToAskAgain(PodGroup::Flavor flavor,
                                  const absl::Status& status,
                                  const CrdWatch::Mark& mark, Backoff& backoff,
                                  std::stop_token stop) {
  const CrdWatch* crd = crds_[FlavorIndex(flavor)].get();
  if (absl::IsPermissionDenied(status) || crd == nullptr) {
    return SleepFor(options_.absent_poll, stop);
  }
  if (crd->ready()) return SleepFor(backoff.Next(), stop);
  return crd->WaitUntilReady(mark, options_.absent_poll, stop) !=
         CrdWatch::Wake::kStopped;
}

// Not served (404), or forbidden (403) kForbiddenTries lists in a row.
// Forbidden counts as absent, said loudly, so that the queueing core,
// which waits for every PodGroup list before it decides, does not wait for
// ever on a role that lacks this API; but only after some tries, since a
// restarting API server answers 403 for seconds before its authorizer has
// loaded the roles, and that must not look like a missing API.
bool PodGroupSync::CountsAsAbsent(const absl::Status& status,
                                  int& forbidden) const {
  constexpr int kForbiddenTries = 8;  // about 13 s with the default backoff
  if (!absl::IsPermissionDenied(status)) forbidden = 0;
  if (absl::IsNotFound(status)) return true;
  return absl::IsPermissionDenied(status) && ++forbidden >= kForbiddenTries;
}

// Watches until the history is gone, the CRD is removed (`removal`), or
// the watch fails (which may also mean the CRD was removed, so it relists
// after a pause). False when stopped.
bool PodGroupSync::WatchUntilRelist(PodGroup::Flavor flavor,
                                    std::string& version, Backoff& backoff,
                                    std::stop_token removal,
                                    std::stop_token stop, bool& gone) {
  std::stop_source ended;  // whichever comes first ends the watch
  std::stop_callback on_stop(stop, [&] { ended.request_stop(); });
  std::stop_callback on_removal(removal, [&] { ended.request_stop(); });
  while (true) {
    const std::string before = version;
    absl::Status watched = WatchFrom(flavor, version, ended.get_token());
    if (stop.stop_requested()) return false;
    if (removal.stop_requested()) {
      spdlog::info("kube sync: the {} PodGroup CRD was removed: relisting",
                   ApiName(flavor));
      return true;
    }
    // As in ClusterSync::Run: a watch that delivered events worked.
    if (watched.ok() || version != before) backoff.Reset();
    if (watched.ok()) continue;
    if (IsGone(watched)) {
      gone = true;
      return true;
    }
    auto wait = backoff.Next();
    spdlog::warn(
        "kube sync: watching {} PodGroups failed, relisting in {} "
        "ms: {}",
        ApiName(flavor), wait.count(), Message(watched));
    return SleepFor(wait, stop);
  }
}

// Said once when the API goes missing; its groups are then none.
void PodGroupSync::ReportAbsent(PodGroup::Flavor flavor,
                                const absl::Status& status) {
  if (absl::IsNotFound(status) && PodGroupApiOf(flavor).crd.empty()) {
    spdlog::info(
        "kube sync: {} PodGroups are not served (kube-apiserver needs "
        "--runtime-config=scheduling.k8s.io/v1beta1=true and the "
        "GenericWorkload feature gate): asked again every {} ms",
        ApiName(flavor), options_.absent_poll.count());
  } else if (absl::IsNotFound(status)) {
    spdlog::info(
        "kube sync: {} PodGroups are not served (CRD not "
        "installed): skipped until the CRD is established",
        ApiName(flavor));
  } else {
    spdlog::error(
        "kube sync: {} PodGroups may not be listed (RBAC): taken "
        "as none, asked again every {} s: {}",
        ApiName(flavor), options_.absent_poll.count() / 1000, Message(status));
  }
  listener_.OnPodGroupsListed(flavor, {});
}

absl::StatusOr<std::string> PodGroupSync::ListAll(PodGroup::Flavor flavor,
                                                  std::stop_token stop) {
  std::vector<PodGroup> all;
  absl::StatusOr<std::string> version = ListEveryPage(
      client_, PodGroupListPath(flavor), options_.list_page_size, stop,
      [&](const std::string& body) { return DecodeItems(body, flavor, all); });
  if (!version.ok()) return version.status();
  spdlog::info("kube sync: listed {} {} PodGroups at resourceVersion {}",
               all.size(), ApiName(flavor), *version);
  listener_.OnPodGroupsListed(flavor, std::move(all));
  return version;
}

absl::Status PodGroupSync::WatchFrom(PodGroup::Flavor flavor,
                                     std::string& version,
                                     std::stop_token stop) {
  return client_.Watch(
      PodGroupListPath(flavor), version,
      [&](const WatchEvent& event) {
        if (!event.resource_version.empty()) {
          version = std::string(event.resource_version);
        }
        if (event.type == WatchEventType::kBookmark) return absl::OkStatus();
        absl::StatusOr<PodGroup> group =
            DecodePodGroupItem(event.object, ApiName(flavor));
        if (!group.ok()) {
          spdlog::warn("kube sync: skipped {} event for {} PodGroup {}: {}",
                       WatchEventTypeName(event.type), ApiName(flavor),
                       ObjectNameForLogs(event.object),
                       Message(group.status()));
          return absl::OkStatus();
        }
        listener_.OnPodGroup(event.type, *std::move(group));
        return absl::OkStatus();
      },
      stop);
}

}  // namespace gpusched::kube
