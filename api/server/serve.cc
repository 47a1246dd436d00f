#include "api/server/serve.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/cluster_file.h"
#include "api/controller/decision_writer.h"
#include "api/http/router.h"
#include "api/server/demo_cluster.h"
#include "api/server/logging.h"
#include "api/server/loop_metrics.h"
#include "api/server/policy_source.h"
#include "policies/policy_loader.h"
#include "queueing/quota_tree.h"
#include "scheduler/base/strings.h"
#include "spdlog/spdlog.h"

namespace gpusched {

absl::Status ServeApp::LoadCluster(const ServeConfig& config) {
  absl::StatusOr<ClusterObjects> objects =
      config.cluster_file.empty()
          ? ParseClusterText(EmbeddedDemoCluster(),
                             "deploy/examples/demo-cluster.yaml (embedded)")
          : LoadClusterFile(config.cluster_file);
  if (!objects.ok()) return objects.status();
  cluster_source_ = config.cluster_file.empty()
                        ? "embedded demo cluster"
                        : absl::StrCat("cluster file ", config.cluster_file);
  for (const std::string& w :
       service_->UpsertNodes(std::move(objects->nodes))) {
    spdlog::warn("model: {}", w);
  }
  for (const std::string& w : service_->AddRunningPods(objects->pods)) {
    spdlog::warn("model: {}", w);
  }
  // The queueing core learns the file's queued pods as a watch's list
  // would tell it: running ones charge their queues, pending ones wait
  // (what the dashboard shows of a cluster file).
  if (gate_ != nullptr) gate_->PodsListed(objects->pods);
  for (const std::string& skipped : objects->skipped) {
    spdlog::debug("cluster: skipped {}", skipped);
  }
  return absl::OkStatus();
}

absl::Status ServeApp::LoadPolicy(const ServeConfig& config) {
  if (!HasPolicy(config)) return absl::OkStatus();
  PolicySourceOptions options{.file = config.policy_file,
                              .kueue = config.policy_source == "kueue"};
  if (options.kueue) {
    // Its own client: the policy comes before the live cluster's client,
    // which needs the policy's device class mappings.
    absl::StatusOr<kube::KubeConfig> kube = kube::ResolveKubeConfig(
        {.kubeconfig = config.kubeconfig, .in_cluster = config.in_cluster});
    if (!kube.ok()) return kube.status();
    absl::StatusOr<std::unique_ptr<kube::KubeClient>> client =
        kube::KubeClient::Create(*std::move(kube));
    if (!client.ok()) return client.status();
    policy_client_ = *std::move(client);
    options.client = policy_client_.get();
  }
  absl::StatusOr<std::unique_ptr<PolicySource>> source =
      PolicySource::Open(std::move(options));
  if (!source.ok()) return source.status();
  policy_source_ = *std::move(source);
  absl::StatusOr<Policy> policy = policy_source_->First();
  if (!policy.ok()) return policy.status();
  device_class_mappings_ = policy->config.device_class_mappings;
  // Live, the loop decides nothing before the cluster is listed whole
  // (pods, nodes, PodGroups), nor while a watch relists.
  absl::StatusOr<std::unique_ptr<AdmissionLoop>> loop = AdmissionLoop::Create(
      *std::move(policy),
      {.await_lists = IsLive(config),
       .keep_requeue_state = IsLive(config) && !config.requeue_state.empty(),
       .runtimes = &runtime_log_});
  if (!loop.ok()) return loop.status();
  gate_ = *std::move(loop);
  return absl::OkStatus();
}

// An invalid new version keeps the old policy: every error is logged and
// counted, and serving goes on.
void ServeApp::ReloadPolicyIfChanged() {
  if (policy_source_ == nullptr) return;
  std::optional<PolicyResult> result = policy_source_->Changed();
  if (!result) return;
  if (!result->policy) {
    metrics_.CountPolicyReloadError();
    for (const PolicyError& e : result->errors) {
      spdlog::error("policy reload rejected, keeping the previous policy: {}",
                    e.message);
    }
    return;
  }
  if (absl::Status s = QuotaTree::Build(*result->policy).status(); !s.ok()) {
    metrics_.CountPolicyReloadError();
    spdlog::error("policy reload rejected: {}", Message(s));
    return;
  }
  // Pods are charged with the new mappings as they change (their next
  // event); those already queued keep their charge until then.
  if (live_ != nullptr) {
    live_->SetDeviceClassMappings(result->policy->config.device_class_mappings);
  }
  gate_->PolicyChanged(*std::move(result->policy));
  spdlog::info("policy reloaded from {}", policy_source_->Describe());
}

void ServeApp::Tick() {
  ReloadPolicyIfChanged();
  if (kueue_ != nullptr) kueue_->PublishStatus(policy_source_->set_aside());
  if (gpu_map_ != nullptr) gpu_map_->Refresh();
  for (const std::string& uid : service_->ReleaseExpiredBinds()) {
    spdlog::warn(
        "bind of pod uid={} stayed in doubt past its hold; its devices are "
        "released",
        uid);
  }
}

void ServeApp::StartTicker(int tick_ms) {
  ticker_ = std::thread([this, tick_ms] {
    std::unique_lock lock(tick_mu_);
    while (!tick_cv_.wait_for(lock, std::chrono::milliseconds(tick_ms),
                              [this] { return stopping_; })) {
      lock.unlock();
      Tick();
      lock.lock();
    }
  });
}

void ServeApp::Shutdown() {
  {
    std::lock_guard lock(tick_mu_);
    stopping_ = true;
  }
  tick_cv_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (webhook_ != nullptr) webhook_->Shutdown();
  if (visibility_ != nullptr) visibility_->Shutdown();
  if (dashboard_ != nullptr) dashboard_->Shutdown();
  if (forecaster_ != nullptr) forecaster_->Stop();
  if (server_ != nullptr) server_->Shutdown();
  if (leader_ != nullptr) leader_->Stop();
  if (role_label_ != nullptr) role_label_->Stop();
  if (history_store_ != nullptr) history_store_->Stop();
  if (requeue_store_ != nullptr) requeue_store_->Stop();
  if (kueue_ != nullptr) kueue_->Stop();
  if (policy_source_ != nullptr) policy_source_->Stop();
  if (live_ != nullptr) live_->Stop();
  if (podgroups_ != nullptr) podgroups_->Stop();
  if (gate_ != nullptr) gate_->Stop();
  if (writer_ != nullptr) writer_->Stop();
}

ServeApp::~ServeApp() { Shutdown(); }

namespace {

// The service's options that come from flags alone; the gate and the bind
// sink are added by the steps that create them.
absl::StatusOr<ServiceOptions> ServiceOptionsFrom(const ServeConfig& config) {
  ServiceOptions options;
  if (!config.scoring.empty()) {
    absl::StatusOr<ScoringWeights> weights =
        ScoringWeights::Parse(config.scoring);
    if (!weights.ok()) return weights.status();
    options.weights = *std::move(weights);
  }
  options.filter_keep_best = static_cast<size_t>(config.filter_keep_best);
  return options;
}

http::ServerOptions HttpOptionsFrom(const ServeConfig& config) {
  http::ServerOptions options{
      .listen = config.listen,
      .tls_cert_file = config.tls_cert_file,
      .tls_key_file = config.tls_key_file,
      .client_ca_file = config.client_ca_file,
      .body_limit_bytes = static_cast<size_t>(config.body_limit_mib) << 20,
      .read_timeout = std::chrono::milliseconds(config.read_timeout_ms),
      .threads = config.threads};
  if (IsLive(config)) {
    // A live bind waits on the API server (up to --bind-deadline-ms); it
    // must not hold an I/O thread that filter calls need meanwhile.
    options.blocking = [](const http::Request& request) {
      return request.target.ends_with("/bind");
    };
  }
  return options;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ServeApp>> ServeApp::Start(
    const ServeConfig& config) {
  std::unique_ptr<ServeApp> app(new ServeApp());
  if (absl::Status s = app->Run(config); !s.ok()) return s;
  return app;
}

// The steps in the order their parts depend on each other: the policy makes
// the gate, which the service and the watches' feed need; the service
// exists before the gate starts and before the cluster is loaded into it;
// the API exists before the live sync starts, since its end marks the API
// ready. On an error the caller destroys the app, which stops what started.
absl::Status ServeApp::Run(const ServeConfig& config) {
  if (absl::Status s = LoadPolicy(config); !s.ok()) return s;
  absl::StatusOr<ServiceOptions> options = ServiceOptionsFrom(config);
  if (!options.ok()) return options.status();
  options->gate = gate_.get();
  if (gate_ != nullptr) {
    feed_ = std::make_unique<LoopFeed>(*gate_, &watched_pods_);
  }
  if (IsLive(config)) {
    if (absl::Status s = ConnectLive(config, *options); !s.ok()) return s;
    if (absl::Status s = StartWebhook(config); !s.ok()) return s;
  }
  service_ = std::make_unique<ExtenderService>(*std::move(options));
  StartGate(config);
  StartReadModels(config);
  if (IsLive(config)) {
    if (absl::Status s = StartVisibility(config); !s.ok()) return s;
    cluster_source_ = live_->source();
  } else if (absl::Status s = LoadCluster(config); !s.ok()) {
    return s;
  }
  if (absl::Status s = StartDashboard(config); !s.ok()) return s;
  if (absl::Status s = StartHttp(config); !s.ok()) return s;
  if (IsLive(config)) {
    if (absl::Status s = StartLiveSync(config); !s.ok()) return s;
  }
  StartTicker(config.tick_ms);
  return absl::OkStatus();
}

// The cluster's client and bind sink; the watches start later
// (StartLiveSync), once the service and the API exist.
absl::Status ServeApp::ConnectLive(const ServeConfig& config,
                                   ServiceOptions& options) {
  auto cluster = kube::CreateLiveBinder(
      {.kubeconfig = config.kubeconfig,
       .in_cluster = config.in_cluster,
       .bind_budget = std::chrono::milliseconds(config.bind_deadline_ms),
       .sync = {.on_synced = [this] { api_->SetReady(true); },
                .listener = feed_.get()},
       .device_class_mappings = device_class_mappings_});
  if (!cluster.ok()) return cluster.status();
  live_ = *std::move(cluster);
  options.bind_sink = live_->bind_sink();
  return absl::OkStatus();
}

// --webhook-listen (live mode only): the mutating webhook that gates new
// pods.
absl::Status ServeApp::StartWebhook(const ServeConfig& config) {
  if (config.webhook.listen.empty()) return absl::OkStatus();
  absl::StatusOr<WebhookServerOptions> webhook =
      WebhookServerOptionsFrom(config.webhook);
  if (!webhook.ok()) return webhook.status();
  // Only pods the queueing core holds are gated (none without a policy):
  // it alone lifts the gate.
  webhook->review.manages = [gate = gate_.get()](const Pod& pod) {
    return gate != nullptr && gate->Manages(pod);
  };
  // While a Kueue manager is active its pods are its own: moved to
  // gpusched and gated, they would wait for a gpusched that decides
  // nothing, with Kueue's gate lifted.
  webhook->review.adopting = [this] { return !KueueActive(); };
  webhook->listener.threads = config.threads;
  webhook->listener.read_timeout =
      std::chrono::milliseconds(config.read_timeout_ms);
  webhook_ = WebhookServer::Start(live_->client(), *std::move(webhook));
  return absl::OkStatus();
}

// --visibility-listen (live mode, with --policy): the aggregated API that
// shows each queue's pending workloads, explains one, and says when it
// should start. An explain waits for a pass under way at most this long
// (kube-apiserver's proxy gives up on the aggregated server after 60 s).
constexpr std::chrono::milliseconds kExplainTimeout{10'000};
// A forecast's passes, both runs together: each is a full engine pass, so
// on a large cluster with a long queue an unbounded forecast would keep a
// core busy for minutes; past this many the start is unknown, and says so.
constexpr int kForecastPasses = 2'000;
// And its wall time: a forecast's answers age while it runs, so one that
// would take longer is cut (its late starts unknown, saying why). One of
// 10,000 pending workloads on 5,000 nodes takes about 15 s (bench/
// queueing_bench BM_StartForecast); the forecaster rests as long after.
constexpr std::chrono::milliseconds kForecastBudget{30'000};

absl::Status ServeApp::StartVisibility(const ServeConfig& config) {
  if (config.visibility.listen.empty() || gate_ == nullptr) {
    return absl::OkStatus();
  }
  absl::StatusOr<VisibilityServerOptions> options =
      VisibilityServerOptionsFrom(config.visibility);
  if (!options.ok()) return options.status();
  options->listener.threads = config.threads;
  options->listener.read_timeout =
      std::chrono::milliseconds(config.read_timeout_ms);
  visibility_ =
      VisibilityServer::Start(live_->client(), *std::move(options), Reads());
  return absl::OkStatus();
}

// Forecasts cost a core's time at scale, and the map a look at every node
// each second: made only where someone can read them.
void ServeApp::StartReadModels(const ServeConfig& config) {
  const bool visibility = IsLive(config) && !config.visibility.listen.empty();
  if (!visibility && config.dashboard.listen.empty()) return;
  gpu_map_ = std::make_unique<GpuMapPublisher>(*service_);
  if (gate_ == nullptr) return;
  forecaster_ = std::make_unique<Forecaster>(
      *gate_, ForecasterOptions{.forecast = {.max_steps = kForecastPasses,
                                             .wall_budget = kForecastBudget},
                                .history = &runtime_log_});
  forecaster_->Start();
}

// --dashboard-listen: the page and its data on loopback, in any mode.
absl::Status ServeApp::StartDashboard(const ServeConfig& config) {
  if (config.dashboard.listen.empty()) return absl::OkStatus();
  gpu_map_->Refresh();  // the cluster file is loaded by now
  absl::StatusOr<std::unique_ptr<DashboardServer>> dashboard =
      DashboardServer::Start(config.dashboard.listen, 1, Reads());
  if (!dashboard.ok()) return dashboard.status();
  dashboard_ = *std::move(dashboard);
  return absl::OkStatus();
}

// Without a policy there are no queues: an empty view, and no decisions.
VisibilityReads ServeApp::Reads() const {
  VisibilityReads reads{
      .gpu_map = [map = gpu_map_.get()] { return map->Latest(); }};
  AdmissionLoop* gate = gate_.get();
  if (gate == nullptr) {
    reads.queues = [] { return std::make_shared<const QueueView>(); };
    return reads;
  }
  reads.queues = [gate] { return gate->Queues(); };
  reads.explain = [gate](const std::string& key) {
    return gate->Explain(key, kExplainTimeout);
  };
  reads.deciding = [gate] { return gate->deciding(); };
  reads.decisions = [gate] { return gate->Decisions(); };
  reads.forecast = [forecaster = forecaster_.get()] {
    return forecaster->Latest();
  };
  return reads;
}

// With --policy: the admission loop starts deciding, live through a
// decision writer.
void ServeApp::StartGate(const ServeConfig& config) {
  if (gate_ == nullptr) return;
  const bool live = IsLive(config);
  if (live) {
    // A budget's refusal goes back to the loop, which decides again.
    // --leader-identity names this replica in its Events'
    // reportingInstance (by default both are the pod's hostname), so
    // that which replica decided can be seen from the cluster.
    AdmissionLoop* gate = gate_.get();
    writer_ = std::make_unique<DecisionWriter>(
        live_->client(),
        DecisionWriterOptions{.reporting_instance = config.leader_identity,
                              .watched = &watched_pods_,
                              .on_eviction_blocked =
                                  [gate](EvictionRefusal refusal) {
                                    gate->EvictionBlocked(std::move(refusal));
                                  },
                              .on_admission_refused =
                                  [gate](AdmissionRefusal refusal) {
                                    gate->AdmissionRefused(std::move(refusal));
                                  }});
  }
  // A replica of two stands by until the Lease says otherwise, and any
  // live replica until the Kueue guard's first answer: it must not decide
  // in the moment before.
  if (live) {
    leading_ = config.leader_lease.empty();
    gate_->SetDeciding(false);
    writer_->SetWriting(false);
  }
  gate_->Start(*service_, writer_.get());
}

SyncTroubles ServeApp::Troubles() const {
  SyncTroubles troubles;
  if (kueue_ != nullptr) {
    troubles.kueue_guarded = true;
    std::lock_guard lock(deciding_mu_);
    troubles.kueue_manager = kueue_active_ ? kueue_why_ : "";
    if (troubles.kueue_manager.empty() && kueue_active_) {
      troubles.kueue_manager =
          "not known yet whether a Kueue manager is active";
    }
  }
  if (feed_ != nullptr) troubles.failing_apis = feed_->FailingApis();
  if (live_ != nullptr) {
    troubles.node_decode_errors = live_->decode_errors("nodes");
    troubles.pod_decode_errors = live_->decode_errors("pods");
  }
  return troubles;
}

// The extender's verbs over HTTP(S).
absl::Status ServeApp::StartHttp(const ServeConfig& config) {
  const bool live = IsLive(config);
  ExtenderApiOptions api_options{.prefix = config.prefix,
                                 .wait_for_sync = live};
  if (gate_ != nullptr) {
    auto queue_metrics = LoopQueueMetrics(*gate_, writer_.get());
    api_options.append_queue_metrics = [this, queue_metrics](std::string& out) {
      queue_metrics(out);
      if (live_ != nullptr) AppendSyncTroubles(Troubles(), out);
    };
    api_options.readiness_notes = [this] { return ReadinessNotes(Troubles()); };
    api_options.core_decided = [gate = gate_.get()] {
      return gate->passes() > 0;
    };
  }
  api_ = std::make_unique<ExtenderApi>(*service_, metrics_,
                                       std::move(api_options));
  if (live && !config.leader_lease.empty()) api_->SetStandby(true);
  auto router = std::make_shared<http::Router>();
  api_->Register(*router);
  absl::StatusOr<std::unique_ptr<http::Server>> server = http::Server::Start(
      HttpOptionsFrom(config), [router](const http::Request& request) {
        return router->Handle(request);
      });
  if (!server.ok()) return server.status();
  server_ = *std::move(server);
  return absl::OkStatus();
}

// The watches into the service, PodGroups into the loop, and the Lease.
absl::Status ServeApp::StartLiveSync(const ServeConfig& config) {
  live_->StartSync(*service_);  // api_ exists: on_synced may fire
  if (const kube::DraAttacher* dra = live_->dra(); dra != nullptr) {
    api_->SetPodAttacher([dra](Pod& pod) { dra->AttachTo(pod); });
    api_->SetUndecidedSource(
        [dra] { return dra->sync().UndecidedSelectors(); });
    // explain names a pod's DRA requests as the sync resolves them.
    if (gate_ != nullptr) {
      const kube::DraSync& sync = dra->sync();
      gate_->SetDraLookup(
          {.claims = [&sync](const Pod& pod,
                             const std::vector<DeviceClassMapping>& mappings) {
            kube::DraSync::PodClaims claims = sync.ClaimsOf(pod, mappings);
            return DraPodClaims{.demand = std::move(claims.demand),
                                .charge = std::move(claims.charge)};
          }});
    }
  }
  if (feed_ != nullptr) {
    podgroups_ = std::make_unique<kube::PodGroupSync>(
        live_->client(), *feed_,
        kube::PodGroupSyncOptions{.absent_poll = std::chrono::milliseconds(
                                      config.podgroup_api_poll_ms)});
    podgroups_->Start();
  }
  StartRoleLabel(config);
  StartRuntimeHistory(config);
  StartRequeueState(config);
  StartKueueComponents(config);
  return FollowLeader(config);
}

void ServeApp::StartRoleLabel(const ServeConfig& config) {
  std::string pod = config.pod;
  const char* env_namespace = std::getenv("POD_NAMESPACE");
  const char* env_name = std::getenv("POD_NAME");
  if (pod.empty() && env_namespace != nullptr && env_name != nullptr &&
      *env_namespace != '\0' && *env_name != '\0') {
    pod = absl::StrCat(env_namespace, "/", env_name);
  }
  if (pod.empty()) return;
  const size_t slash = pod.find('/');  // ParseServeFlags checked --pod
  role_label_ = std::make_unique<kube::PodRoleLabel>(
      live_->client(),
      kube::PodRoleLabelOptions{.namespace_name = pod.substr(0, slash),
                                .name = pod.substr(slash + 1)});
  role_label_->Set(config.leader_lease.empty());
  role_label_->Start();
}

// Both containers of a pod share its hostname, which kube-scheduler puts
// first in its holderIdentity.
absl::Status ServeApp::FollowLeader(const ServeConfig& config) {
  if (config.leader_lease.empty()) return absl::OkStatus();
  const size_t slash = config.leader_lease.find('/');
  std::string identity = config.leader_identity;
  if (identity.empty()) {
    char host[256] = {};
    if (gethostname(host, sizeof host - 1) != 0) {
      return absl::InternalError("--leader-lease: cannot read the hostname");
    }
    identity = host;
  }
  leader_ = std::make_unique<kube::LeaseFollower>(
      live_->client(),
      kube::LeaseFollowerOptions{
          .namespace_name = config.leader_lease.substr(0, slash),
          .name = config.leader_lease.substr(slash + 1),
          .identity = identity,
          .on_change = [this](bool active, const std::string&) {
            ApplyDeciding(
                [active](DecidingInputs& in) { in.leading = active; });
            api_->SetStandby(!active);
            if (role_label_ != nullptr) role_label_->Set(active);
          }});
  leader_->Start();
  return absl::OkStatus();
}

std::string ExampleFilterCurl(const std::string& url,
                              const ExtenderService& service) {
  std::vector<std::string> names = service.Read([](const ClusterModel& model) {
    std::vector<std::string> out;
    for (const NodeState* node : model.SortedNodes())
      out.push_back(node->name());
    return out;
  });
  std::string quoted =
      absl::StrJoin(names, ",", [](std::string* out, const std::string& n) {
        absl::StrAppend(out, "\"", n, "\"");
      });
  return absl::StrCat(
      "curl -s -X POST ", url,
      "/filter -H 'Content-Type: application/json' -d '{\"Pod\":{\"metadata\":"
      "{\"name\":\"train-0\",\"namespace\":\"team-a\",\"uid\":\"demo-uid-1\"},"
      "\"spec\":{\"containers\":[{\"name\":\"main\",\"resources\":{\"limits\":"
      "{\"nvidia.com/gpu\":\"4\"}}}]}},\"NodeNames\":[",
      quoted, "]}'");
}

int RunServe(const std::vector<std::string>& args) {
  ServeConfig config;
  if (absl::Status s = ParseServeFlags(args, config); !s.ok()) {
    std::cerr << Message(s) << "\n";
    return 2;
  }
  if (config.help) {
    std::cout << ServeUsage();
    return 0;
  }
  if (absl::Status s = ConfigureLogging(config.log_format, config.verbosity);
      !s.ok()) {
    std::cerr << "serve: " << Message(s) << "\n";
    return 2;
  }
  absl::StatusOr<std::unique_ptr<ServeApp>> app = ServeApp::Start(config);
  if (!app.ok()) {
    spdlog::error("serve: {}", Message(app.status()));
    return 1;
  }
  GpuCounts gpus = (*app)->service().CountGpus();
  spdlog::info("serving url={} source=\"{}\" nodes={} free_gpus={}",
               (*app)->url(), (*app)->cluster_source(), gpus.nodes, gpus.free);
  std::cout << "gpusched is serving " << (*app)->url() << " ("
            << (*app)->cluster_source() << ": " << gpus.nodes << " nodes, "
            << gpus.free + gpus.used + gpus.shared << " GPUs, " << gpus.free
            << " free)\nTry:\n  "
            << ExampleFilterCurl((*app)->url(), (*app)->service())
            << "\nNodes and GPUs: curl -s " << (*app)->url() << "/v1/nodes\n";
  if (!(*app)->dashboard_url().empty()) {
    std::cout << "Dashboard: " << (*app)->dashboard_url() << "\n";
  }
  std::cout << "Stop with Ctrl-C (SIGINT) or SIGTERM.\n" << std::flush;
  int signal = http::WaitForTerminationSignal();
  spdlog::info("signal={}: finishing in-flight requests", signal);
  (*app)->Shutdown();
  spdlog::info("stopped");
  return 0;
}

}  // namespace gpusched
