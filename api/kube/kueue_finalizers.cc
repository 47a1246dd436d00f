#include "api/kube/kueue_finalizers.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched::kube {
namespace {

constexpr char kManagedPods[] =
    "/api/v1/pods?labelSelector=kueue.x-k8s.io%2Fmanaged%3Dtrue";

std::string GroupKey(const KueueManagedPod& pod) {
  return absl::StrCat(pod.namespace_name, "/", pod.group);
}

// Per pod group: whether every member has ended or is being deleted.
std::map<std::string, bool> GroupsEnded(
    const std::map<std::string, KueueManagedPod>& pods) {
  std::map<std::string, bool> ended;
  for (const auto& [key, pod] : pods) {
    if (pod.group.empty()) continue;
    auto [it, unused] = ended.try_emplace(GroupKey(pod), true);
    it->second = it->second && (pod.terminal || pod.deleting);
  }
  return ended;
}

}  // namespace

std::vector<std::string> FinalizersToRelease(
    const std::map<std::string, KueueManagedPod>& pods) {
  const std::map<std::string, bool> ended = GroupsEnded(pods);
  std::vector<std::string> out;
  for (const auto& [key, pod] : pods) {
    if (!pod.has_finalizer) continue;
    const bool done =
        pod.group.empty() ? pod.terminal : ended.at(GroupKey(pod));
    if (pod.deleting || done) out.push_back(key);
  }
  return out;
}

KueueFinalizers::KueueFinalizers(KubeClient& client,
                                 KueueFinalizersOptions options)
    : client_(client), options_(std::move(options)) {}

KueueFinalizers::~KueueFinalizers() { Stop(); }

void KueueFinalizers::Start() {
  ListWatchOptions watch{.path = kManagedPods,
                         .what = "Kueue-managed pods",
                         .initial_backoff = options_.initial_backoff,
                         .max_backoff = options_.max_backoff,
                         .absent_poll = options_.absent_poll};
  watch_ = std::jthread([this, watch](std::stop_token stop) {
    RunListWatch(client_, watch, *this, stop);
  });
  writer_ = std::jthread([this](std::stop_token stop) { ReleaseLoop(stop); });
}

void KueueFinalizers::Stop() {
  for (std::jthread* t : {&watch_, &writer_}) {
    t->request_stop();
    if (t->joinable()) t->join();
  }
}

int64_t KueueFinalizers::released() const {
  std::lock_guard lock(mu_);
  return released_;
}

void KueueFinalizers::Poke() {
  {
    std::lock_guard lock(mu_);
    ++version_;
  }
  changed_.notify_all();
}

void KueueFinalizers::BeginList() {
  std::lock_guard lock(mu_);
  listing_.clear();
}

void KueueFinalizers::ListItem(simdjson::dom::element item) {
  std::lock_guard lock(mu_);
  Put(item, listing_);
}

void KueueFinalizers::EndList() {
  {
    std::lock_guard lock(mu_);
    pods_ = std::move(listing_);
    listing_.clear();
    ++version_;
  }
  changed_.notify_all();
}

void KueueFinalizers::Event(WatchEventType type,
                            simdjson::dom::element object) {
  {
    std::lock_guard lock(mu_);
    if (type == WatchEventType::kDeleted) {
      absl::StatusOr<KueueManagedPod> pod = DecodeKueueManagedPod(object);
      if (pod.ok()) {
        pods_.erase(pod->Key());
        released_uids_.erase(pod->uid);
      }
    } else {
      Put(object, pods_);
    }
    ++version_;
  }
  changed_.notify_all();
}

void KueueFinalizers::Absent(const absl::Status& why) {
  spdlog::info("kueue finalizers: no Kueue-managed pods to watch: {}",
               Message(why));
  std::lock_guard lock(mu_);
  pods_.clear();
}

// mu_ held.
void KueueFinalizers::Put(simdjson::dom::element object,
                          std::map<std::string, KueueManagedPod>& into) {
  absl::StatusOr<KueueManagedPod> pod = DecodeKueueManagedPod(object);
  if (!pod.ok()) {
    spdlog::warn("kueue finalizers: a pod left alone: {}",
                 Message(pod.status()));
    return;
  }
  if (!pod->has_finalizer) released_uids_.erase(pod->uid);
  into.insert_or_assign(pod->Key(), *std::move(pod));
}

std::vector<KueueManagedPod> KueueFinalizers::Due() {
  std::vector<KueueManagedPod> due;
  for (const std::string& key : FinalizersToRelease(pods_)) {
    const KueueManagedPod& pod = pods_.at(key);
    if (!released_uids_.contains(pod.uid)) due.push_back(pod);
  }
  return due;
}

void KueueFinalizers::ReleaseLoop(std::stop_token stop) {
  uint64_t seen = 0;
  while (!stop.stop_requested()) {
    std::vector<KueueManagedPod> due;
    {
      std::unique_lock lock(mu_);
      changed_.wait_for(lock, stop, options_.retry_after,
                        [&] { return version_ != seen; });
      if (stop.stop_requested()) return;
      seen = version_;
      if (options_.writing && !options_.writing()) continue;
      due = Due();
    }
    for (const KueueManagedPod& pod : due) {
      if (!Release(pod, stop)) continue;
      std::lock_guard lock(mu_);
      released_uids_.insert(pod.uid);
      ++released_;
    }
  }
}

// The uid in the patch keeps a release off a pod that replaced the one
// seen under the same name (the API server refuses a changed uid).
bool KueueFinalizers::Release(const KueueManagedPod& pod,
                              std::stop_token stop) {
  const std::string path = absl::StrCat("/api/v1/namespaces/",
                                        pod.namespace_name, "/pods/", pod.name);
  absl::StatusOr<std::string> done = client_.StrategicPatch(
      path, ReleaseKueueFinalizerPatch(pod.uid), {.stop = stop});
  if (done.ok()) {
    spdlog::info("kueue finalizers: released {} ({})", pod.Key(),
                 pod.deleting ? "being deleted" : "ended");
    return true;
  }
  std::optional<HttpFailure> failure = HttpFailureOf(done.status());
  if (failure && failure->code == 404) return true;  // gone: nothing held
  spdlog::warn("kueue finalizers: releasing {} failed, retried in {} ms: {}",
               pod.Key(), options_.retry_after.count(), Message(done.status()));
  return false;
}

}  // namespace gpusched::kube
