// Live mode: gpusched's model follows a real cluster and binds go to the
// API server. One object owns the client, the bind sink and the sync.
//
// The service needs its BindSink when it is constructed, and the sync needs
// the service, hence two steps:
//
//   auto live = CreateLiveBinder({.kubeconfig = path});   // client + sink
//   ServiceOptions options{.bind_sink = (*live)->bind_sink()};
//   auto service = std::make_unique<ExtenderService>(options);
//   (*live)->StartSync(*service);                          // threads
//   ... (*live)->synced() for /readyz ...
//   (*live)->Stop();  // before the service is destroyed
#ifndef GPUSCHED_API_KUBE_LIVE_MODE_H_
#define GPUSCHED_API_KUBE_LIVE_MODE_H_

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "api/kube/cluster_sync.h"
#include "api/kube/kube_bind_sink.h"
#include "api/kube/kube_client.h"
#include "api/kube/kube_config.h"
#include "scheduler/extender_service.h"

namespace gpusched::kube {

struct LiveOptions {
  // A kubeconfig file (its current context). Takes precedence over
  // in_cluster.
  std::string kubeconfig;
  // Use the pod's service account (see InClusterAvailable()).
  bool in_cluster = false;
  KubeClientOptions client;
  // The time a bind may spend on API server calls (KubeBindSink).
  std::chrono::milliseconds bind_budget = KubeBindSink::kDefaultBudget;
  ClusterSyncOptions sync;  // sync.on_synced: e.g. mark /readyz ready
  // Follow Dynamic Resource Allocation (resource.k8s.io/v1): nodes' GPUs
  // from ResourceSlices, pods' claims charged to quota. A cluster that
  // does not serve it is said once and read as one without.
  bool dra = true;
  std::vector<DeviceClassMapping> device_class_mappings;
  // How long StartSync waits for the DRA objects to be listed before it
  // lists pods (their claims' charge needs them).
  std::chrono::milliseconds dra_settle_wait{15000};
};

// The connection settings `options` asks for; an error if it asks for none.
absl::StatusOr<KubeConfig> ResolveKubeConfig(const LiveOptions& options);

class LiveCluster {
 public:
  // Loads the configuration and creates the client and sink. Does not
  // contact the API server: that starts with StartSync (or the first bind).
  static absl::StatusOr<std::unique_ptr<LiveCluster>> Create(
      LiveOptions options);
  ~LiveCluster();  // Stop()

  // Valid for the LiveCluster's lifetime; pass as ServiceOptions.bind_sink.
  BindSink* bind_sink() { return &sink_; }
  KubeClient& client() { return *client_; }
  // "kubeconfig FILE, context NAME" or "in-cluster", for logs.
  const std::string& source() const { return client_->config().source; }

  // Starts following the cluster into `service` (which must outlive this
  // object or the Stop() call). Call at most once.
  void StartSync(ExtenderService& service);
  // True once nodes and pods were listed into the model (false before
  // StartSync).
  bool synced() const;
  // Objects of `kind` ("nodes", "pods") that did not decode (ClusterSync).
  int64_t decode_errors(std::string_view kind) const {
    return sync_ != nullptr ? sync_->decode_errors(kind) : 0;
  }
  // Null without DRA (LiveOptions::dra) or before StartSync.
  const DraAttacher* dra() const { return dra_attacher_.get(); }
  // A reloaded policy's deviceClassMappings.
  void SetDeviceClassMappings(std::vector<DeviceClassMapping> mappings) {
    if (dra_attacher_ == nullptr) return;
    dra_attacher_->SetMappings(std::move(mappings));
    // Pods waiting on an unmapped class are charged again at once.
    if (sync_ != nullptr) sync_->PokeDra();
  }
  // Stops and joins the sync threads within milliseconds. Idempotent. Binds
  // still work afterwards (they use the client directly).
  void Stop();

 private:
  LiveCluster(LiveOptions options, std::unique_ptr<KubeClient> client);
  void WaitForDra();

  const LiveOptions options_;
  std::unique_ptr<KubeClient> client_;
  KubeBindSink sink_;
  std::unique_ptr<DraSync> dra_;
  std::unique_ptr<DraAttacher> dra_attacher_;
  std::unique_ptr<ClusterSync> sync_;
};

// Step one of two: the client and bind sink, before the service exists.
absl::StatusOr<std::unique_ptr<LiveCluster>> CreateLiveBinder(
    LiveOptions options);

// Both steps in one call, for a service whose model only follows the
// cluster (tools, read-only replicas). A service that binds through the API
// server needs bind_sink() at construction: use the two steps instead.
absl::StatusOr<std::unique_ptr<LiveCluster>> StartLiveCluster(
    ExtenderService& service, LiveOptions options);

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_LIVE_MODE_H_
