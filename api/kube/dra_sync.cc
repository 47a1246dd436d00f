#include "api/kube/dra_sync.h"

#include <utility>

#include "api/codec/dra_json.h"
#include "api/codec/kube_list_json.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {
namespace {

constexpr char kApi[] = "/apis/resource.k8s.io/v1/";

// Per kind: where it is served, how it decodes, how it changes the state.
template <class T>
struct Kind;

template <>
struct Kind<ResourceSlice> {
  static constexpr char kResource[] = "resourceslices";
  static constexpr bool kCatalog = false;
  static constexpr char kName[] = "ResourceSlice";
  static absl::StatusOr<ResourceSlice> Decode(simdjson::dom::element item) {
    return DecodeResourceSlice(item, kName);
  }
  static void Replace(DraState& state, std::vector<ResourceSlice> all) {
    state.touched.All();
    state.inventory.ClearSlices();
    for (ResourceSlice& slice : all)
      state.inventory.UpsertSlice(std::move(slice));
  }
  static void Apply(DraState& state, WatchEventType type, ResourceSlice slice) {
    state.touched.Node(slice.node_name);  // immutable in a slice's life
    if (type == WatchEventType::kDeleted) {
      state.inventory.DeleteSlice(slice.meta.name);
    } else {
      state.inventory.UpsertSlice(std::move(slice));
    }
  }
};

template <>
struct Kind<ResourceClaim> {
  static constexpr char kResource[] = "resourceclaims";
  static constexpr bool kCatalog = true;
  static constexpr char kName[] = "ResourceClaim";
  static absl::StatusOr<ResourceClaim> Decode(simdjson::dom::element item) {
    return DecodeResourceClaim(item, kName);
  }
  static void Replace(DraState& state, std::vector<ResourceClaim> all) {
    state.touched.All();
    state.inventory.ClearClaims();
    state.catalog.claims.clear();
    for (ResourceClaim& claim : all) {
      Apply(state, WatchEventType::kAdded, std::move(claim));
    }
  }
  static void Apply(DraState& state, WatchEventType type, ResourceClaim claim) {
    std::string key = DraKey(claim.meta);
    Touch(state, claim);
    if (auto before = state.catalog.claims.find(key);
        before != state.catalog.claims.end()) {
      Touch(state, before->second);
    }
    if (type == WatchEventType::kDeleted) {
      state.inventory.DeleteClaim(key);
      state.catalog.claims.erase(key);
      return;
    }
    state.inventory.UpsertClaim(claim);
    state.catalog.claims.insert_or_assign(std::move(key), std::move(claim));
  }
  // An allocation holds devices on its node; one not bound to a node
  // (network-attached devices) is looked for everywhere.
  static void Touch(DraState& state, const ResourceClaim& claim) {
    if (!claim.allocated) return;
    if (claim.allocated_node.empty()) {
      state.touched.All();
    } else {
      state.touched.Node(claim.allocated_node);
    }
  }
};

template <>
struct Kind<DeviceTaintRule> {
  static constexpr char kResource[] = "devicetaintrules";
  static constexpr bool kCatalog = false;
  static constexpr char kName[] = "DeviceTaintRule";
  static absl::StatusOr<DeviceTaintRule> Decode(simdjson::dom::element item) {
    return DecodeDeviceTaintRule(item, kName);
  }
  static void Replace(DraState& state, std::vector<DeviceTaintRule> all) {
    state.touched.All();
    state.inventory.ClearTaintRules();
    for (DeviceTaintRule& rule : all) {
      state.inventory.UpsertTaintRule(std::move(rule));
    }
  }
  static void Apply(DraState& state, WatchEventType type,
                    DeviceTaintRule rule) {
    state.touched.All();  // its selector may name devices anywhere
    if (type == WatchEventType::kDeleted) {
      state.inventory.DeleteTaintRule(rule.meta.name);
    } else {
      state.inventory.UpsertTaintRule(std::move(rule));
    }
  }
};

// The catalog's maps by DraKey: DeviceClasses and ResourceClaimTemplates.
template <class T, auto kMap, const char* kResourceName, const char* kKindName,
          auto kDecode>
struct CatalogKind {
  static constexpr const char* kResource = kResourceName;
  static constexpr bool kCatalog = true;
  static constexpr const char* kName = kKindName;
  static absl::StatusOr<T> Decode(simdjson::dom::element item) {
    return kDecode(item, kKindName);
  }
  static void Replace(DraState& state, std::vector<T> all) {
    (state.catalog.*kMap).clear();
    for (T& object : all)
      Apply(state, WatchEventType::kAdded, std::move(object));
  }
  static void Apply(DraState& state, WatchEventType type, T object) {
    std::string key = DraKey(object.meta);
    if (type == WatchEventType::kDeleted) {
      (state.catalog.*kMap).erase(key);
    } else {
      (state.catalog.*kMap).insert_or_assign(std::move(key), std::move(object));
    }
  }
};

constexpr char kClasses[] = "deviceclasses";
constexpr char kClassName[] = "DeviceClass";
constexpr char kTemplates[] = "resourceclaimtemplates";
constexpr char kTemplateName[] = "ResourceClaimTemplate";
template <>
struct Kind<DeviceClass>
    : CatalogKind<DeviceClass, &DraCatalog::classes, kClasses, kClassName,
                  &DecodeDeviceClass> {};
template <>
struct Kind<ResourceClaimTemplate>
    : CatalogKind<ResourceClaimTemplate, &DraCatalog::templates, kTemplates,
                  kTemplateName, &DecodeResourceClaimTemplate> {};

// Collects a list until it is complete, then replaces that kind at once:
// a list that fails half-way changes nothing.
template <class T>
class KindSink : public ListWatchSink {
 public:
  KindSink(DraSync& sync, size_t index) : sync_(sync), index_(index) {}

  void BeginList() override { pending_.clear(); }
  void ListItem(simdjson::dom::element item) override {
    if (std::optional<T> object = Read(item, "list")) {
      pending_.push_back(*std::move(object));
    }
  }
  void EndList() override { Settle(std::move(pending_)); }
  void Event(WatchEventType type, simdjson::dom::element item) override {
    std::optional<T> object = Read(item, WatchEventTypeName(type));
    if (!object) return;
    sync_.Change(
        [&](DraState& state) {
          Kind<T>::Apply(state, type, *std::move(object));
        },
        Kind<T>::kCatalog);
  }
  void Absent(const absl::Status&) override { Settle({}); }

 private:
  // An object that does not decode is logged and skipped, as pods are.
  std::optional<T> Read(simdjson::dom::element item, std::string_view how) {
    absl::StatusOr<T> object = Kind<T>::Decode(item);
    if (object.ok()) return *std::move(object);
    spdlog::warn("kube sync: skipped {} {} {}: {}", Kind<T>::kName, how,
                 ObjectNameForLogs(item), Message(object.status()));
    return std::nullopt;
  }
  void Settle(std::vector<T> all) {
    pending_.clear();
    sync_.Change(
        [&](DraState& state) { Kind<T>::Replace(state, std::move(all)); },
        Kind<T>::kCatalog);
    sync_.MarkSettled(index_);
  }

  DraSync& sync_;
  const size_t index_;
  std::vector<T> pending_;
};

template <class T>
void Register(DraSync& sync, size_t index, const DraSyncOptions& options,
              std::unique_ptr<ListWatchSink>& sink, ListWatchOptions& watch) {
  sink = std::make_unique<KindSink<T>>(sync, index);
  watch = ListWatchOptions{.path = std::string(kApi) + Kind<T>::kResource,
                           .what = std::string(Kind<T>::kName) + "s",
                           .initial_backoff = options.initial_backoff,
                           .max_backoff = options.max_backoff,
                           .absent_poll = options.absent_poll,
                           .list_page_size = options.list_page_size};
}

}  // namespace

DraSync::DraSync(KubeClient& client, DraSyncOptions options)
    : client_(client), options_(std::move(options)) {
  Register<ResourceSlice>(*this, 0, options_, sinks_[0], watches_[0]);
  Register<DeviceClass>(*this, 1, options_, sinks_[1], watches_[1]);
  Register<DeviceTaintRule>(*this, 2, options_, sinks_[2], watches_[2]);
  Register<ResourceClaim>(*this, 3, options_, sinks_[3], watches_[3]);
  Register<ResourceClaimTemplate>(*this, 4, options_, sinks_[4], watches_[4]);
}

DraSync::~DraSync() { Stop(); }

void DraSync::Start() {
  for (size_t i = 0; i < kKinds; ++i) {
    threads_[i] = std::jthread([this, i](std::stop_token stop) {
      RunListWatch(client_, watches_[i], *sinks_[i], stop);
    });
  }
}

void DraSync::Stop() {
  for (std::jthread& thread : threads_) thread.request_stop();
  for (std::jthread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
}

bool DraSync::settled() const {
  for (const std::atomic<bool>& kind : settled_) {
    if (!kind) return false;
  }
  return true;
}

void DraSync::MarkSettled(size_t kind) { settled_[kind] = true; }

void DraSync::Change(const std::function<void(DraState&)>& edit, bool catalog) {
  {
    std::lock_guard lock(mu_);
    edit(state_);
    ++version_;
    if (catalog) ++catalog_version_;
  }
  if (options_.on_change) options_.on_change();
}

DraNodeDevices DraSync::NodeDevices(std::string_view node) const {
  std::lock_guard lock(mu_);
  return state_.inventory.NodeDevices(node);
}

std::vector<std::string> DraSync::Nodes() const {
  std::lock_guard lock(mu_);
  return state_.inventory.Nodes();
}

DraTouched DraSync::TakeTouched() {
  std::lock_guard lock(mu_);
  return std::exchange(state_.touched, DraTouched{.all = false});
}

DraSync::PodClaims DraSync::ClaimsOf(
    const Pod& pod, const std::vector<DeviceClassMapping>& mappings) const {
  std::lock_guard lock(mu_);
  return {DraDemandOf(pod, state_.catalog),
          ChargeClaims(pod, state_.catalog, mappings)};
}

std::vector<DraUndecidedSelector> DraSync::UndecidedSelectors() const {
  std::lock_guard lock(mu_);
  return gpusched::UndecidedSelectors(state_.catalog);
}

std::map<std::string, std::string> DraSync::ExtendedResourceClasses() const {
  std::lock_guard lock(mu_);
  std::map<std::string, std::string> out;
  for (const auto& [name, device_class] : state_.catalog.classes) {
    if (!device_class.extended_resource_name.empty()) {
      out.emplace(device_class.extended_resource_name, name);
    }
  }
  return out;
}

}  // namespace gpusched::kube
