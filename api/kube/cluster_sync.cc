#include "api/kube/cluster_sync.h"

#include <algorithm>
#include <iterator>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/codec/k8s_json.h"
#include "api/codec/kube_list_json.h"
#include "api/kube/model_updater.h"
#include "api/kube/sync_util.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

using internal::ModelUpdater;

// What differs between the node and the pod loop.
template <class T>
struct Kind;

template <>
struct Kind<Node> {
  static constexpr char kName[] = "nodes";
  static constexpr char kPath[] = "/api/v1/nodes";
  static absl::StatusOr<Node> Decode(simdjson::dom::element object) {
    return DecodeNode(object, "Node");
  }
  static absl::StatusOr<DecodedList<Node>> DecodeList(std::string_view body) {
    return DecodeNodeList(body);
  }
  static void Replace(ModelUpdater& updater, SyncListener* listener,
                      std::vector<Node> all,
                      const std::vector<std::string>& undecodable) {
    updater.ReplaceNodes(std::move(all), undecodable);
    if (listener != nullptr) listener->OnNodesListed(undecodable);
  }
  static void Apply(ModelUpdater& updater, SyncListener* listener,
                    WatchEventType type, Node node) {
    if (listener == nullptr) return updater.ApplyNode(type, std::move(node));
    updater.ApplyNode(type, node);
    listener->OnNode(type, node);
  }
};

template <>
struct Kind<Pod> {
  static constexpr char kName[] = "pods";
  static constexpr char kPath[] = "/api/v1/pods";
  static absl::StatusOr<Pod> Decode(simdjson::dom::element object) {
    return DecodePod(object, "Pod");
  }
  static absl::StatusOr<DecodedList<Pod>> DecodeList(std::string_view body) {
    return DecodePodList(body);
  }
  static void Replace(ModelUpdater& updater, SyncListener* listener,
                      std::vector<Pod> all,
                      const std::vector<std::string>& undecodable) {
    updater.ReplacePods(all, undecodable);
    if (listener != nullptr) listener->OnPodsListed(all, undecodable);
  }
  static void Apply(ModelUpdater& updater, SyncListener* listener,
                    WatchEventType type, Pod pod) {
    updater.ApplyPod(type, pod);
    if (listener != nullptr) listener->OnPod(type, pod);
  }
};

// Decodes every item of a List body into `out`; an item that does not
// decode is logged and skipped rather than failing the whole list, and its
// name goes to `skipped` (the object exists: it is kept as it was).
template <class T>
absl::Status DecodeItems(const std::string& body, std::vector<T>& out,
                         std::vector<std::string>& skipped_names) {
  absl::StatusOr<DecodedList<T>> list = Kind<T>::DecodeList(body);
  if (!list.ok()) {
    return absl::DataLossError(
        absl::StrFormat("list %s: %s", Kind<T>::kName, Message(list.status())));
  }
  for (const SkippedItem& skipped : list->skipped) {
    spdlog::warn("kube sync: {} {} does not decode, kept as it was: {}",
                 Kind<T>::kName, skipped.name, Message(skipped.error));
    skipped_names.push_back(skipped.key);
  }
  std::move(list->items.begin(), list->items.end(), std::back_inserter(out));
  return absl::OkStatus();
}

// What the claims of a pod gave it: a change means it is applied again.
std::string ClaimsKey(const Pod& pod) {
  std::string key;
  for (const auto& [name, amount] : pod.claim_requests.entries()) {
    absl::StrAppend(&key, name, "=", amount, ",");
  }
  absl::StrAppend(&key, "|", static_cast<int>(pod.claim_hold.kind), ":",
                  pod.claim_hold.reason, "|");
  if (pod.dra_demand != nullptr) {
    absl::StrAppend(&key, DraDemandSignature(*pod.dra_demand));
  }
  return key;
}

bool HasLiveClaims(const Pod& pod) {
  return !pod.resource_claims.empty() && !IsTerminal(pod);
}

internal::DraDeviceSource DraSourceOf(const DraAttacher& dra) {
  return {.published = dra.sync().Nodes(),
          .devices_of = [&dra](const std::string& node) {
            return dra.DevicesOf(node);
          }};
}

}  // namespace

ClusterSync::ClusterSync(KubeClient& client, ExtenderService& service,
                         ClusterSyncOptions options)
    : client_(client),
      options_(options),
      updater_(std::make_unique<ModelUpdater>(service)) {}

ClusterSync::~ClusterSync() { Stop(); }

void ClusterSync::Start() {
  nodes_thread_ = std::jthread(
      [this](std::stop_token stop) { Run<Node>(stop, nodes_synced_); });
  pods_thread_ = std::jthread(
      [this](std::stop_token stop) { Run<Pod>(stop, pods_synced_); });
  if (options_.dra != nullptr) {
    dra_thread_ =
        std::jthread([this](std::stop_token stop) { RunDraRefresher(stop); });
  }
}

void ClusterSync::Stop() {
  for (std::jthread* thread : {&nodes_thread_, &pods_thread_, &dra_thread_}) {
    thread->request_stop();
  }
  for (std::jthread* thread : {&nodes_thread_, &pods_thread_, &dra_thread_}) {
    if (thread->joinable()) thread->join();
  }
}

void ClusterSync::CountSkipped(std::string_view kind, size_t count) {
  (kind == "nodes" ? node_decode_errors_ : pod_decode_errors_) +=
      static_cast<int64_t>(count);
}

template <class T>
std::unique_lock<std::mutex> ClusterSync::ApplyLock() {
  if constexpr (std::is_same_v<T, Pod>) {
    return std::unique_lock<std::mutex>(pods_mu_);
  }
  return {};
}

template <class T>
void ClusterSync::Track(const std::vector<T>& all) {
  if constexpr (std::is_same_v<T, Pod>) {
    claim_pods_.clear();
    for (const Pod& pod : all) {
      if (HasLiveClaims(pod)) claim_pods_[pod.Key()] = {pod, ClaimsKey(pod)};
    }
  }
}

template <class T>
void ClusterSync::Track(WatchEventType type, const T& object) {
  if constexpr (std::is_same_v<T, Pod>) {
    if (type == WatchEventType::kDeleted || !HasLiveClaims(object)) {
      claim_pods_.erase(object.Key());
    } else {
      claim_pods_[object.Key()] = {object, ClaimsKey(object)};
    }
  }
}

void ClusterSync::PokeDra() {
  {
    std::lock_guard lock(dra_mu_);
    dra_dirty_ = true;
  }
  dra_poked_.notify_one();
}

// Re-reads the DRA devices of the nodes a change touched, at most once per
// dra_refresh_interval (a burst of claim updates is one pass), and every
// node every few seconds regardless: a node event may have attached
// devices read just before a change it then overwrote.
void ClusterSync::RunDraRefresher(std::stop_token stop) {
  constexpr auto kSweep = std::chrono::seconds(5);
  auto last_sweep = std::chrono::steady_clock::now() - kSweep;
  while (!stop.stop_requested()) {
    {
      std::unique_lock lock(dra_mu_);
      dra_poked_.wait_for(lock, stop, kSweep, [this] { return dra_dirty_; });
      dra_dirty_ = false;
    }
    if (stop.stop_requested()) return;
    if (nodes_synced_) {
      internal::DraDeviceSource source = DraSourceOf(*options_.dra);
      if (options_.take_dra_touched) {
        DraTouched touched = options_.take_dra_touched();
        source.all = touched.all;
        source.only = std::move(touched.nodes);
      }
      const auto now = std::chrono::steady_clock::now();
      if (now - last_sweep >= kSweep) source.all = true;
      if (source.all) last_sweep = now;
      updater_->RefreshDraDevices(source);
    }
    ReattachClaimPods();
    if (!SleepFor(options_.dra_refresh_interval, stop)) return;
  }
}

// The queueing core decides nothing before it hears OnDraListed: a pod
// adopted before its claims could be read would be charged short.
void ClusterSync::ReattachClaimPods() {
  const bool settled = options_.dra->sync().settled();
  const uint64_t version = options_.dra->ClaimsVersion();
  if (version != reattached_version_) {
    reattached_version_ = version;
    std::lock_guard lock(pods_mu_);
    for (auto& [key, tracked] : claim_pods_) {
      Pod pod = tracked.pod;
      Attach(pod);
      std::string now = ClaimsKey(pod);
      if (now == tracked.key) continue;
      tracked = {pod, std::move(now)};
      Kind<Pod>::Apply(*updater_, options_.listener, WatchEventType::kModified,
                       std::move(pod));
    }
  }
  if (settled && !told_dra_listed_ && options_.listener != nullptr) {
    told_dra_listed_ = true;
    options_.listener->OnDraListed();
  }
}

template <class T>
void ClusterSync::Attach(T& object) const {
  if (options_.dra != nullptr) options_.dra->AttachTo(object);
}

void ClusterSync::NotifyIfSynced() {
  if (!synced()) return;
  std::call_once(notified_, [this] {
    spdlog::info("kube sync: model synced with the cluster");
    if (options_.on_synced) options_.on_synced();
  });
}

// List, then watch until the history is gone, then list again.
template <class T>
void ClusterSync::Run(std::stop_token stop, std::atomic<bool>& synced) {
  Backoff backoff(options_.initial_backoff, options_.max_backoff);
  while (!stop.stop_requested()) {
    absl::StatusOr<std::string> version = ListAll<T>(stop);
    if (!version.ok()) {
      if (stop.stop_requested()) return;
      auto wait = backoff.Next();
      spdlog::warn("kube sync: listing {} failed, retrying in {} ms: {}",
                   Kind<T>::kName, wait.count(), Message(version.status()));
      if (!SleepFor(wait, stop)) return;
      continue;
    }
    synced = true;
    NotifyIfSynced();
    backoff.Reset();
    while (true) {
      const std::string before = *version;
      absl::Status watched = WatchFrom<T>(*version, stop);
      if (stop.stop_requested()) return;
      // A watch that delivered events worked: its break (an API server
      // restart) is a first failure, not one more of a series (three
      // restarts had grown the wait to 10 s, on a stale model).
      if (watched.ok() || *version != before) backoff.Reset();
      if (watched.ok()) continue;
      if (IsGone(watched)) {
        spdlog::info("kube sync: relisting {}: {}", Kind<T>::kName,
                     Message(watched));
        if (options_.listener != nullptr) {
          options_.listener->OnRelisting(Kind<T>::kName);
        }
        break;
      }
      auto wait = backoff.Next();
      spdlog::warn("kube sync: watching {} failed, retrying in {} ms: {}",
                   Kind<T>::kName, wait.count(), Message(watched));
      if (!SleepFor(wait, stop)) return;
    }
  }
}

// All pages of the list, applied as the complete state; returns the
// resourceVersion to watch from.
template <class T>
absl::StatusOr<std::string> ClusterSync::ListAll(std::stop_token stop) {
  std::vector<T> all;
  std::vector<std::string> undecodable;
  absl::StatusOr<std::string> version =
      ListEveryPage(client_, Kind<T>::kPath, options_.list_page_size, stop,
                    [&](const std::string& body) {
                      return DecodeItems(body, all, undecodable);
                    });
  if (!version.ok()) return version.status();
  CountSkipped(Kind<T>::kName, undecodable.size());
  const size_t count = all.size();
  {
    std::unique_lock<std::mutex> lock = ApplyLock<T>();
    for (T& object : all) Attach(object);
    Track(all);
    Kind<T>::Replace(*updater_, options_.listener, std::move(all), undecodable);
  }
  spdlog::info("kube sync: listed {} {} at resourceVersion {}{}", count,
               Kind<T>::kName, *version,
               undecodable.empty()
                   ? ""
                   : absl::StrFormat(" (%d kept as they were: they do not "
                                     "decode)",
                                     undecodable.size()));
  return version;
}

// Watches until the server ends the stream or an error; `resource_version`
// follows every event (bookmarks included) so a re-watch resumes there.
template <class T>
absl::Status ClusterSync::WatchFrom(std::string& resource_version,
                                    std::stop_token stop) {
  return client_.Watch(
      Kind<T>::kPath, resource_version,
      [&](const WatchEvent& event) {
        if (!event.resource_version.empty()) {
          resource_version = std::string(event.resource_version);
        }
        if (event.type == WatchEventType::kBookmark) return absl::OkStatus();
        absl::StatusOr<T> object = Kind<T>::Decode(event.object);
        if (!object.ok()) {
          CountSkipped(Kind<T>::kName, 1);
          spdlog::warn("kube sync: skipped {} event for {}: {}",
                       WatchEventTypeName(event.type),
                       ObjectNameForLogs(event.object),
                       Message(object.status()));
          return absl::OkStatus();
        }
        std::unique_lock<std::mutex> lock = ApplyLock<T>();
        Attach(*object);
        Track(event.type, *object);
        Kind<T>::Apply(*updater_, options_.listener, event.type,
                       *std::move(object));
        return absl::OkStatus();
      },
      stop);
}

}  // namespace gpusched::kube
