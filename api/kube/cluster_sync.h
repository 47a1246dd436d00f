// Keeps an ExtenderService's model in step with the cluster: lists nodes and
// pods (all namespaces), then watches both from the list's resourceVersion,
// each on its own thread, the way client-go's reflector does.
//
//   node ADDED/MODIFIED -> UpsertNodes        node DELETED -> RemoveNode
//   pod bound (spec.nodeName set), not terminal -> AddRunningPods
//   pod DELETED, or phase Succeeded/Failed      -> RemovePod(uid)
//
// A watch the server ends is resumed from the last resourceVersion seen; a
// 410 Gone (history compacted) relists and reconciles: objects missing from
// the new list leave the model. The listener hears when a relist starts and
// when each list is complete. Failures retry with a backoff doubling from
// 100 ms to 10 s (no jitter: behaviour stays reproducible).
#ifndef GPUSCHED_API_KUBE_CLUSTER_SYNC_H_
#define GPUSCHED_API_KUBE_CLUSTER_SYNC_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "api/kube/dra_attach.h"
#include "api/kube/kube_client.h"
#include "scheduler/extender_service.h"

namespace gpusched::kube {

namespace internal {
class ModelUpdater;
}

// Hears what the sync applied to the model, after it did (the queueing
// core's way in). Called from the sync threads; must return quickly.
class SyncListener {
 public:
  virtual ~SyncListener() = default;
  // A complete pod list (first sync or a relist after 410 Gone): every pod
  // that exists, pending ones included.
  // Pods named ("namespace/name") in `undecodable` were in the list but
  // could not be read: kept as they were, never taken for deleted.
  virtual void OnPodsListed(const std::vector<Pod>& pods,
                            const std::vector<std::string>& undecodable) = 0;
  // A pod watch event: added, modified or deleted.
  virtual void OnPod(WatchEventType type, const Pod& pod) = 0;
  // A node watch event: added, modified or deleted.
  virtual void OnNode(WatchEventType type, const Node& node) = 0;
  // A complete node list is in the model (first sync or a relist). Nodes
  // named in `undecodable` were in the list but could not be read: they
  // are kept as they were, never taken for gone.
  virtual void OnNodesListed(const std::vector<std::string>& undecodable) = 0;
  // A watch lost its history (410 Gone): `kind` ("nodes" or "pods") is
  // listed again, and until On*Listed the listener holds half a picture.
  virtual void OnRelisting(std::string_view kind) = 0;
  // With DRA: the DRA objects were listed (or found not served) and every
  // pod with claims heard since was charged against them; pods whose
  // charge changed went to OnPod first. Once.
  virtual void OnDraListed() {}
};

struct ClusterSyncOptions {
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  // Items per list page (limit/continue), so that a large cluster's pod
  // list arrives in bounded pieces.
  int list_page_size = 500;
  // Called once, from a sync thread, when synced() first becomes true (e.g.
  // to mark the server ready). Must not call Stop().
  std::function<void()> on_synced;
  // Optional; must outlive the ClusterSync.
  SyncListener* listener = nullptr;
  // Optional (clusters with DRA); must outlive the ClusterSync. Nodes get
  // their DRA devices and pods the charge of their claims before anything
  // sees them, and a change of the DRA objects re-reads every node's
  // devices (RefreshDraDevices).
  const DraAttacher* dra = nullptr;
  // Optional with `dra`: the nodes a DRA change touched since the last
  // call (DraSync::TakeTouched), so a re-read reads only those; without
  // it every re-read reads every node.
  std::function<DraTouched()> take_dra_touched;
  // The least time between two such re-reads.
  std::chrono::milliseconds dra_refresh_interval{200};
};

// Thread-safe. The client and service must outlive the ClusterSync.
class ClusterSync {
 public:
  ClusterSync(KubeClient& client, ExtenderService& service,
              ClusterSyncOptions options = {});
  ~ClusterSync();  // Stop()
  ClusterSync(const ClusterSync&) = delete;
  ClusterSync& operator=(const ClusterSync&) = delete;

  // Starts the node and pod threads and returns at once; errors are logged
  // and retried, and synced() stays false until both lists are applied.
  void Start();
  // Closes the watch and list sockets and joins the threads; returns within
  // milliseconds. Idempotent.
  void Stop();

  // True once a full node list and a full pod list have been applied: the
  // model then reflects the cluster (for /readyz).
  bool synced() const { return nodes_synced_ && pods_synced_; }

  // The DRA objects changed: re-read every node's devices soon, and
  // charge again the pods whose claims now resolve differently (from a
  // DraSync thread; returns at once).
  void PokeDra();
  // Objects of `kind` ("nodes", "pods") skipped because they did not
  // decode, since the start.
  int64_t decode_errors(std::string_view kind) const {
    return (kind == "nodes" ? node_decode_errors_ : pod_decode_errors_).load();
  }

 private:
  void NotifyIfSynced();
  void RunDraRefresher(std::stop_token stop);
  // Pods with claims, charged again when the DRA catalog or the mappings
  // changed; those whose charge or demand moved are applied again.
  void ReattachClaimPods();
  template <class T>
  void Track(const std::vector<T>& all);
  template <class T>
  void Track(WatchEventType type, const T& object);
  template <class T>
  std::unique_lock<std::mutex> ApplyLock();
  void CountSkipped(std::string_view kind, size_t count);
  template <class T>
  void Attach(T& object) const;
  template <class T>
  void Run(std::stop_token stop, std::atomic<bool>& synced);
  template <class T>
  absl::StatusOr<std::string> ListAll(std::stop_token stop);
  template <class T>
  absl::Status WatchFrom(std::string& resource_version, std::stop_token stop);

  KubeClient& client_;
  const ClusterSyncOptions options_;
  std::unique_ptr<internal::ModelUpdater> updater_;
  std::atomic<bool> nodes_synced_{false};
  std::atomic<bool> pods_synced_{false};
  std::once_flag notified_;
  std::jthread nodes_thread_;
  std::jthread pods_thread_;
  std::mutex dra_mu_;
  std::condition_variable_any dra_poked_;
  bool dra_dirty_ = false;  // guarded by dra_mu_
  std::jthread dra_thread_;
  std::atomic<int64_t> node_decode_errors_{0};
  std::atomic<int64_t> pod_decode_errors_{0};
  // The pod thread and the DRA refresher apply pods one at a time, so a
  // re-charged pod never overtakes a newer version of it.
  std::mutex pods_mu_;
  struct ClaimPod {
    Pod pod;          // as last applied
    std::string key;  // ClaimsKey: what its claims gave it
  };
  std::map<std::string, ClaimPod> claim_pods_;  // guarded by pods_mu_
  uint64_t reattached_version_ = 0;             // refresher thread only
  bool told_dra_listed_ = false;                // refresher thread only
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_CLUSTER_SYNC_H_
