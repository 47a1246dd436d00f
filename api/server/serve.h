#ifndef GPUSCHED_API_SERVER_SERVE_H_
#define GPUSCHED_API_SERVER_SERVE_H_

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "api/controller/admission_loop.h"
#include "api/controller/decision_writer.h"
#include "api/controller/forecaster.h"
#include "api/controller/gpu_map_publisher.h"
#include "api/controller/loop_feed.h"
#include "api/http/server.h"
#include "api/kube/lease_follower.h"
#include "api/kube/live_mode.h"
#include "api/kube/pod_role_label.h"
#include "api/kube/podgroup_sync.h"
#include "api/kube/requeue_state_store.h"
#include "api/kube/runtime_history_store.h"
#include "api/server/admission_webhook.h"
#include "api/server/dashboard_server.h"
#include "api/server/extender_api.h"
#include "api/server/loop_metrics.h"
#include "api/server/metrics.h"
#include "api/server/policy_source.h"
#include "api/server/serve_flags.h"
#include "api/server/serve_kueue.h"
#include "api/server/visibility_server.h"
#include "queueing/runtime_log.h"
#include "scheduler/extender_service.h"

namespace gpusched {

// A running extender: the model loaded, the HTTP server listening. Used by
// `gpusched serve` and, in-process, by the integration tests.
class ServeApp {
 public:
  static absl::StatusOr<std::unique_ptr<ServeApp>> Start(
      const ServeConfig& config);

  ExtenderService& service() { return *service_; }
  std::string url() const { return server_->url(); }
  uint16_t port() const { return server_->port(); }
  const std::string& cluster_source() const { return cluster_source_; }
  void Shutdown();
  ~ServeApp();
  // The admission loop; null without --policy.
  AdmissionLoop* gate() { return gate_.get(); }
  // The dashboard's URL with --dashboard-listen; empty without.
  std::string dashboard_url() const {
    return dashboard_ != nullptr ? dashboard_->url() : std::string();
  }
  const Metrics& metrics() const { return metrics_; }

 private:
  ServeApp() = default;
  // Start's steps, in the order Run calls them.
  absl::Status Run(const ServeConfig& config);
  absl::Status ConnectLive(const ServeConfig& config, ServiceOptions& options);
  absl::Status StartWebhook(const ServeConfig& config);
  absl::Status StartVisibility(const ServeConfig& config);
  // The read models the visibility API and the dashboard share: the GPU
  // map and, with a policy, the forecaster.
  void StartReadModels(const ServeConfig& config);
  absl::Status StartDashboard(const ServeConfig& config);
  // What both read (VisibilityReads), after StartReadModels.
  VisibilityReads Reads() const;
  void StartGate(const ServeConfig& config);
  absl::Status StartHttp(const ServeConfig& config);
  absl::Status StartLiveSync(const ServeConfig& config);
  absl::Status LoadCluster(const ServeConfig& config);
  absl::Status LoadPolicy(const ServeConfig& config);
  void StartTicker(int tick_ms);
  // --leader-lease: starts standing by, and follows the Lease.
  absl::Status FollowLeader(const ServeConfig& config);
  // --pod: labels this replica's pod with its role (deciding to start
  // with, unless it follows a Lease).
  void StartRoleLabel(const ServeConfig& config);
  // --runtime-history: loads the runtimes kept, and keeps saving them.
  void StartRuntimeHistory(const ServeConfig& config);
  // --requeue-state: reads the requeue state kept (the loop waits for it),
  // and keeps saving it while deciding (serve_state.cc, with the above).
  void StartRequeueState(const ServeConfig& config);
  // Live, with queues: what stands in for Kueue's manager (serve_kueue.h);
  // stops deciding while a Kueue manager is active.
  void StartKueueComponents(const ServeConfig& config);
  // What decides whether this replica decides: it leads (or has no
  // Lease to follow) and no Kueue manager is active.
  struct DecidingInputs {
    bool leading = true;
    bool kueue_active = false;
    std::string kueue_why;
  };
  void ApplyDeciding(const std::function<void(DecidingInputs&)>& edit);
  // Whether a Kueue manager is active (or the guard has not answered yet).
  bool KueueActive() const;
  void Tick();
  void ReloadPolicyIfChanged();
  // What the watches cannot read now, for /readyz and /metrics.
  SyncTroubles Troubles() const;

  // Finished workloads' runtimes: the forecast's history arm. First, so
  // that it outlives the loop, the forecaster and the store using it.
  RuntimeLog runtime_log_;
  std::unique_ptr<ExtenderService> service_;
  // Declared after service_ so it stops before the service is destroyed.
  std::unique_ptr<kube::LiveCluster> live_;
  Metrics metrics_;
  std::unique_ptr<ExtenderApi> api_;
  std::unique_ptr<http::Server> server_;
  std::string cluster_source_;
  // Declared after service_ and live_: stops before the service goes and
  // after the watches that feed it (Shutdown).
  std::unique_ptr<AdmissionLoop> gate_;
  // The pods waiting for a node, for writer_ (fed by feed_).
  kube::WatchedPods watched_pods_;
  // The loop's decisions to the API server (live mode).
  std::unique_ptr<DecisionWriter> writer_;
  std::unique_ptr<LoopFeed> feed_;                  // the watches -> gate_
  std::unique_ptr<kube::PodGroupSync> podgroups_;   // live, with a gate
  std::unique_ptr<kube::LeaseFollower> leader_;     // --leader-lease
  std::unique_ptr<kube::PodRoleLabel> role_label_;  // --pod
  // --runtime-history: runtime_log_ kept in a ConfigMap (live, with a gate).
  std::unique_ptr<kube::RuntimeHistoryStore> history_store_;
  // --requeue-state: the loop's requeue state kept in a ConfigMap (live).
  std::unique_ptr<kube::RequeueStateStore> requeue_store_;
  // The policy's file or Kueue objects (with queues), and the client the
  // latter are read with.
  std::unique_ptr<kube::KubeClient> policy_client_;
  std::unique_ptr<PolicySource> policy_source_;
  // The Kueue guard, finalizer releaser, provisioning-request controller
  // and status writer (live, with queues).
  std::unique_ptr<KueueComponents> kueue_;
  mutable std::mutex deciding_mu_;  // guards the three below
  bool leading_ = true;
  bool kueue_active_ = true;  // until the guard's first answer
  std::string kueue_why_;
  // The policy's resources.deviceClassMappings (DRA claims in quota).
  std::vector<DeviceClassMapping> device_class_mappings_;
  std::mutex tick_mu_;
  std::condition_variable tick_cv_;
  bool stopping_ = false;
  std::thread ticker_;
  // After live_: uses its client, so it is stopped and destroyed first.
  std::unique_ptr<WebhookServer> webhook_;
  // Start forecasts for the visibility API (after gate_: asks it).
  std::unique_ptr<Forecaster> forecaster_;
  // Likewise; reads gate_'s queues and forecaster_'s forecasts.
  std::unique_ptr<VisibilityServer> visibility_;
  // The GPU map the two read, refreshed by the ticker (after service_).
  std::unique_ptr<GpuMapPublisher> gpu_map_;
  // --dashboard-listen; reads what visibility_ reads.
  std::unique_ptr<DashboardServer> dashboard_;
};

// `gpusched serve [flags]`: returns the process exit code.
int RunServe(const std::vector<std::string>& args);

// A ready-to-paste curl command that calls filter on `url` with a 4-GPU pod
// and every node of the model.
std::string ExampleFilterCurl(const std::string& url,
                              const ExtenderService& service);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_SERVE_H_
