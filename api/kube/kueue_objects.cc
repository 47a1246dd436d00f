#include "api/kube/kueue_objects.h"

#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/codec/json_render.h"
#include "api/codec/kube_list_json.h"
#include "api/json/json_escape.h"
#include "scheduler/base/strings.h"
#include "scheduler/quantity.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

constexpr std::string_view kApi = "/apis/kueue.x-k8s.io/v1beta2/";
// The order documents are handed out in: flavors and classes before the
// queues that name them, as an admin would write one file.
constexpr std::array<std::string_view, KueueObjects::kKinds> kResources = {
    "topologies",
    "resourceflavors",
    "workloadpriorityclasses",
    "cohorts",
    "provisioningrequestconfigs",
    "admissionchecks",
    "clusterqueues",
    "localqueues"};

// "namespace/name", or "name" for a cluster-scoped object; "" when the
// object has no name (it is then skipped).
std::string KeyOf(simdjson::dom::element object) {
  simdjson::dom::element metadata;
  std::string_view name, namespace_name;
  if (object["metadata"].get(metadata) != simdjson::SUCCESS ||
      metadata["name"].get(name) != simdjson::SUCCESS) {
    return "";
  }
  if (metadata["namespace"].get(namespace_name) != simdjson::SUCCESS ||
      namespace_name.empty()) {
    return std::string(name);
  }
  return absl::StrCat(Sv(namespace_name), "/", Sv(name));
}

// The object without its status and with only its name and namespace of
// metadata: what the policy reads, so that a status write or a label does
// not read as a change of policy.
void AppendQuoted(std::string& out, std::string_view text) {
  out += '"';
  AppendJsonEscaped(out, text);
  out += '"';
}

std::string PolicyJsonOf(simdjson::dom::object object) {
  std::string out = "{";
  for (auto [key, value] : object) {
    if (key == "status") continue;
    if (out.size() > 1) out += ',';
    AppendQuoted(out, key);
    out += ':';
    if (key != "metadata") {
      out += simdjson::minify(value);
      continue;
    }
    out += '{';
    std::string_view name, namespace_name;
    if (value["name"].get(name) == simdjson::SUCCESS) {
      out += "\"name\":";
      AppendQuoted(out, name);
    }
    if (value["namespace"].get(namespace_name) == simdjson::SUCCESS) {
      out += name.empty() ? "\"namespace\":" : ",\"namespace\":";
      AppendQuoted(out, namespace_name);
    }
    out += '}';
  }
  return out + "}";
}

// The object as block YAML, so that an error names a useful line.
std::optional<std::string> TextOf(simdjson::dom::element object,
                                  std::string_view kind) {
  simdjson::dom::object fields;
  if (object.get(fields) != simdjson::SUCCESS) return std::nullopt;
  absl::StatusOr<std::string> yaml = JsonToYaml(PolicyJsonOf(fields));
  if (yaml.ok()) return *std::move(yaml);
  spdlog::warn("kueue objects: skipped {} {}: {}", kind,
               ObjectNameForLogs(object), Message(yaml.status()));
  return std::nullopt;
}

// A LocalQueue's status.fairSharing.admissionFairSharingStatus
// .consumedResources, when it has one; a quantity that does not parse is
// left out (Kueue wrote it, so it does not happen but by hand).
std::optional<AfsConsumed> AfsConsumedOf(simdjson::dom::element object) {
  simdjson::dom::object consumed;
  if (object
          .at_pointer("/status/fairSharing/admissionFairSharingStatus/"
                      "consumedResources")
          .get(consumed) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  AfsConsumed out;
  for (auto [resource, value] : consumed) {
    std::string_view text;
    if (value.get(text) != simdjson::SUCCESS) continue;
    // Micro units: decayed amounts are fractions; memory in bytes still
    // fits int64 up to exabytes / 1e6.
    absl::StatusOr<int64_t> micro = ParseQuantity(text, 1'000'000);
    if (micro.ok()) out[std::string(resource)] = *micro / 1e6;
  }
  return out;
}

// Collects a list until it is complete, then replaces the kind at once: a
// list that fails half-way changes nothing.
class KindSink : public ListWatchSink {
 public:
  KindSink(KueueObjects& objects, size_t kind)
      : objects_(objects), kind_(kind) {}

  void BeginList() override { pending_.clear(); }
  void ListItem(simdjson::dom::element item) override {
    std::string key = KeyOf(item);
    NoteAfsUsage(key, item);
    std::optional<std::string> text = TextOf(item, kResources[kind_]);
    if (!key.empty() && text) pending_[std::move(key)] = *std::move(text);
  }
  void EndList() override {
    objects_.ReplaceKind(kind_, std::move(pending_));
    pending_.clear();
  }
  void Event(WatchEventType type, simdjson::dom::element item) override {
    const std::string key = KeyOf(item);
    if (key.empty()) return;
    if (type == WatchEventType::kDeleted) {
      objects_.RemoveObject(kind_, key);
      objects_.PutAfsUsage(key, std::nullopt);
      return;
    }
    NoteAfsUsage(key, item);
    if (std::optional<std::string> text = TextOf(item, kResources[kind_])) {
      objects_.PutObject(kind_, key, *std::move(text));
    }
  }
  void Absent(const absl::Status&) override {
    pending_.clear();
    objects_.ReplaceKind(kind_, {});
  }

 private:
  void NoteAfsUsage(const std::string& key, simdjson::dom::element item) {
    if (kResources[kind_] == "localqueues" && !key.empty()) {
      objects_.PutAfsUsage(key, AfsConsumedOf(item));
    }
  }

  KueueObjects& objects_;
  const size_t kind_;
  std::map<std::string, std::string> pending_;
};

}  // namespace

KueueObjects::KueueObjects(KubeClient& client, KueueObjectsOptions options)
    : client_(client), options_(std::move(options)) {
  for (size_t i = 0; i < kKinds; ++i) {
    sinks_[i] = std::make_unique<KindSink>(*this, i);
    watches_[i] =
        ListWatchOptions{.path = absl::StrCat(Sv(kApi), Sv(kResources[i])),
                         .what = absl::StrCat("Kueue ", Sv(kResources[i])),
                         .initial_backoff = options_.initial_backoff,
                         .max_backoff = options_.max_backoff,
                         .absent_poll = options_.absent_poll,
                         .list_page_size = options_.list_page_size};
  }
}

KueueObjects::~KueueObjects() { Stop(); }

void KueueObjects::Start() {
  for (size_t i = 0; i < kKinds; ++i) {
    threads_[i] = std::jthread([this, i](std::stop_token stop) {
      RunListWatch(client_, watches_[i], *sinks_[i], stop);
    });
  }
}

void KueueObjects::Stop() {
  for (std::jthread& thread : threads_) thread.request_stop();
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

bool KueueObjects::listed() const {
  std::lock_guard lock(mu_);
  for (bool kind : listed_) {
    if (!kind) return false;
  }
  return true;
}

bool KueueObjects::WaitListed(std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  return listed_cv_.wait_for(lock, timeout, [this] {
    for (bool kind : listed_) {
      if (!kind) return false;
    }
    return true;
  });
}

std::optional<KueueObjectsSnapshot> KueueObjects::SnapshotIfNewer(
    uint64_t seen) const {
  std::lock_guard lock(mu_);
  if (version_ == seen) return std::nullopt;
  for (bool kind : listed_) {
    if (!kind) return std::nullopt;
  }
  KueueObjectsSnapshot snapshot{.version = version_};
  for (size_t i = 0; i < kKinds; ++i) {
    for (const auto& [key, text] : objects_[i]) {
      snapshot.documents.push_back(
          {.name = absl::StrCat(Sv(kResources[i]), "/", key), .text = text});
    }
  }
  return snapshot;
}

void KueueObjects::ReplaceKind(size_t kind,
                               std::map<std::string, std::string> objects) {
  std::unique_lock lock(mu_);
  const bool first = !listed_[kind];
  if (!first && objects == objects_[kind]) return;  // a relist, no change
  objects_[kind] = std::move(objects);
  listed_[kind] = true;
  Changed();
  lock.unlock();
  listed_cv_.notify_all();
  if (options_.on_change) options_.on_change();
}

void KueueObjects::PutObject(size_t kind, const std::string& key,
                             std::string text) {
  std::unique_lock lock(mu_);
  std::string& slot = objects_[kind][key];
  if (slot == text) return;
  slot = std::move(text);
  Changed();
  lock.unlock();
  if (options_.on_change) options_.on_change();
}

void KueueObjects::RemoveObject(size_t kind, const std::string& key) {
  std::unique_lock lock(mu_);
  if (objects_[kind].erase(key) == 0) return;
  Changed();
  lock.unlock();
  if (options_.on_change) options_.on_change();
}

void KueueObjects::Changed() { ++version_; }

std::map<std::string, AfsConsumed> KueueObjects::AfsUsages() const {
  std::lock_guard lock(mu_);
  return afs_usages_;
}

void KueueObjects::PutAfsUsage(const std::string& key,
                               std::optional<AfsConsumed> usage) {
  std::lock_guard lock(mu_);
  if (usage) {
    afs_usages_[key] = *std::move(usage);
  } else {
    afs_usages_.erase(key);
  }
}

}  // namespace gpusched::kube
