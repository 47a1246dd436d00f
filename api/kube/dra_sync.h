// Keeps gpusched's picture of Dynamic Resource Allocation (resource.k8s.io/v1)
// in step with the cluster: ResourceSlices, DeviceClasses, DeviceTaintRules,
// ResourceClaims and ResourceClaimTemplates, each listed and watched on its
// own thread (list_watch.h). A cluster that does not serve DRA, or a role
// without the rules, is said once and read as one without devices.
//
// Readers get copies taken under one lock: the devices of a node as the
// structured allocator counts them (DraInventory), and a pod's demand
// resolved against the claims, templates and classes (DraDemandOf).
#ifndef GPUSCHED_API_KUBE_DRA_SYNC_H_
#define GPUSCHED_API_KUBE_DRA_SYNC_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/kube/kube_client.h"
#include "api/kube/list_watch.h"
#include "scheduler/dra_demand.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/dra_quota.h"
#include "scheduler/dra_undecided.h"

namespace gpusched::kube {

struct DraSyncOptions {
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  std::chrono::milliseconds absent_poll{30000};
  int list_page_size = 500;
  // Called after every change, from a sync thread; must return quickly.
  std::function<void()> on_change;
};

// The nodes whose devices may have changed since the refresher last
// asked (DraSync::TakeTouched): a slice names its node, an allocation its
// node; a complete list, a taint rule or an allocation not bound to one
// node may change any.
struct DraTouched {
  bool all = true;  // the first pass reads every node
  std::set<std::string> nodes;

  void Node(const std::string& name) {
    if (!all && !name.empty()) nodes.insert(name);
  }
  void All() {
    all = true;
    nodes.clear();
  }
};

// What the DRA objects say at one moment, guarded by DraSync's lock.
struct DraState {
  DraInventory inventory;
  DraCatalog catalog;
  DraTouched touched;
};

// Thread-safe. The client must outlive the DraSync.
class DraSync {
 public:
  static constexpr size_t kKinds = 5;

  DraSync(KubeClient& client, DraSyncOptions options = {});
  ~DraSync();  // Stop()
  DraSync(const DraSync&) = delete;
  DraSync& operator=(const DraSync&) = delete;

  void Start();
  void Stop();  // closes the watches and joins the threads; idempotent

  // True once every kind was listed or found absent.
  bool settled() const;
  // Bumped on every change.
  uint64_t version() const { return version_; }
  // Bumped on every change of what a pod's claims resolve against
  // (ResourceClaims, ResourceClaimTemplates, DeviceClasses).
  uint64_t catalog_version() const { return catalog_version_; }

  DraNodeDevices NodeDevices(std::string_view node) const;
  std::vector<std::string> Nodes() const;
  // The nodes touched since the last call, and forgets them.
  DraTouched TakeTouched();
  // A pod's claims read at one moment: what they ask of a node and what
  // they are charged in quota's resource names.
  struct PodClaims {
    DraDemand demand;
    ClaimCharge charge;
  };
  PodClaims ClaimsOf(const Pod& pod,
                     const std::vector<DeviceClassMapping>& mappings) const;
  // The selectors outside gpusched's CEL subset in the classes, templates
  // and claims known now (kube-scheduler decides those requests).
  std::vector<DraUndecidedSelector> UndecidedSelectors() const;
  // The DeviceClasses that serve an extended resource (KEP-5004), by
  // the resource's name ("nvidia.com/gpu" -> class).
  std::map<std::string, std::string> ExtendedResourceClasses() const;

  // For the typed sinks (dra_sync.cc): a change under the lock; `catalog`
  // when it may change what pods' claims resolve to.
  void Change(const std::function<void(DraState&)>& edit, bool catalog);
  void MarkSettled(size_t kind);

 private:
  KubeClient& client_;
  const DraSyncOptions options_;
  mutable std::mutex mu_;
  DraState state_;  // guarded by mu_
  std::atomic<uint64_t> version_{0};
  std::atomic<uint64_t> catalog_version_{0};
  std::array<std::atomic<bool>, kKinds> settled_{};
  std::array<std::unique_ptr<ListWatchSink>, kKinds> sinks_;
  std::array<ListWatchOptions, kKinds> watches_;
  std::array<std::jthread, kKinds> threads_;
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_DRA_SYNC_H_
