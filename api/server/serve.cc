#include "api/server/serve.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/cluster_file.h"
#include "api/http/router.h"
#include "api/server/demo_cluster.h"
#include "api/server/flags.h"
#include "api/server/logging.h"
#include "api/server/decision_writer.h"
#include "policies/policy_loader.h"
#include "queueing/quota_tree.h"
#include "scheduler/string_util.h"
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
  for (const std::string& w : service_->UpsertNodes(std::move(objects->nodes))) {
    spdlog::warn("model: {}", w);
  }
  for (const std::string& w : service_->AddRunningPods(objects->pods)) {
    spdlog::warn("model: {}", w);
  }
  for (const std::string& skipped : objects->skipped) {
    spdlog::debug("cluster: skipped {}", skipped);
  }
  return absl::OkStatus();
}

namespace {

std::string JoinErrors(const std::vector<PolicyError>& errors) {
  std::string text;
  for (const PolicyError& e : errors) absl::StrAppend(&text, "\n  ", e.message);
  return text;
}

}  // namespace

absl::Status ServeApp::LoadPolicy(const ServeConfig& config) {
  if (config.policy_file.empty()) return absl::OkStatus();
  PolicyResult result = LoadPolicyFiles({config.policy_file});
  if (!result.policy) {
    return absl::InvalidArgumentError(absl::StrCat(
        "policy ", config.policy_file, " is invalid:", JoinErrors(result.errors)));
  }
  // Live, the loop decides nothing before the cluster is listed whole
  // (pods, nodes, PodGroups), nor while a watch relists.
  const bool live = !config.kubeconfig.empty() || config.in_cluster;
  absl::StatusOr<std::unique_ptr<AdmissionLoop>> loop = AdmissionLoop::Create(
      *std::move(result.policy), {.await_lists = live});
  if (!loop.ok()) return loop.status();
  gate_ = *std::move(loop);
  policy_file_ = config.policy_file;
  std::error_code ignored;
  policy_mtime_ = std::filesystem::last_write_time(policy_file_, ignored);
  return absl::OkStatus();
}

// An invalid new version keeps the old policy: every error is logged and
// counted, and serving goes on.
void ServeApp::ReloadPolicyIfChanged() {
  if (policy_file_.empty()) return;
  std::error_code error;
  auto mtime = std::filesystem::last_write_time(policy_file_, error);
  if (error || mtime == policy_mtime_) return;
  policy_mtime_ = mtime;
  PolicyResult result = LoadPolicyFiles({policy_file_});
  if (!result.policy) {
    metrics_.CountPolicyReloadError();
    for (const PolicyError& e : result.errors) {
      spdlog::error("policy reload rejected, keeping the previous policy: {}", e.message);
    }
    return;
  }
  if (absl::Status s = QuotaTree::Build(*result.policy).status(); !s.ok()) {
    metrics_.CountPolicyReloadError();
    spdlog::error("policy reload rejected: {}", Message(s));
    return;
  }
  gate_->PolicyChanged(*std::move(result.policy));
  spdlog::info("policy reloaded file={}", policy_file_);
}

void ServeApp::Tick() {
  ReloadPolicyIfChanged();
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
  if (server_ != nullptr) server_->Shutdown();
  if (leader_ != nullptr) leader_->Stop();
  if (live_ != nullptr) live_->Stop();
  if (podgroups_ != nullptr) podgroups_->Stop();
  if (gate_ != nullptr) gate_->Stop();
  if (writer_ != nullptr) writer_->Stop();
}

ServeApp::~ServeApp() { Shutdown(); }

absl::StatusOr<std::unique_ptr<ServeApp>> ServeApp::Start(
    const ServeConfig& config) {
  std::unique_ptr<ServeApp> app(new ServeApp());
  if (absl::Status s = app->LoadPolicy(config); !s.ok()) return s;
  ServiceOptions options;
  options.gate = app->gate_.get();
  if (!config.scoring.empty()) {
    absl::StatusOr<ScoringWeights> weights =
        ScoringWeights::Parse(config.scoring);
    if (!weights.ok()) return weights.status();
    options.weights = *std::move(weights);
  }
  options.filter_keep_best = static_cast<size_t>(config.filter_keep_best);
  const bool live = !config.kubeconfig.empty() || config.in_cluster;
  if (app->gate_ != nullptr) {
    app->feed_ = std::make_unique<LoopFeed>(*app->gate_, &app->watched_pods_);
  }
  if (live) {
    auto cluster = kube::CreateLiveBinder(
        {.kubeconfig = config.kubeconfig,
         .in_cluster = config.in_cluster,
         .bind_budget = std::chrono::milliseconds(config.bind_deadline_ms),
         .sync = {.on_synced = [raw = app.get()] { raw->api_->SetReady(true); },
                  .listener = app->feed_.get()}});
    if (!cluster.ok()) return cluster.status();
    app->live_ = *std::move(cluster);
    options.bind_sink = app->live_->bind_sink();
  }
  if (live && !config.webhook.listen.empty()) {
    absl::StatusOr<WebhookServerOptions> webhook =
        WebhookServerOptionsFrom(config.webhook);
    if (!webhook.ok()) return webhook.status();
    // Only pods the queueing core holds are gated (none without a policy):
    // it alone lifts the gate.
    webhook->review.manages = [gate = app->gate_.get()](const Pod& pod) {
      return gate != nullptr && gate->Manages(pod);
    };
    webhook->threads = config.threads;
    webhook->read_timeout = std::chrono::milliseconds(config.read_timeout_ms);
    app->webhook_ =
        WebhookServer::Start(app->live_->client(), *std::move(webhook));
  }
  app->service_ = std::make_unique<ExtenderService>(std::move(options));
  if (app->gate_ != nullptr) {
    if (live) {
      // A budget's refusal goes back to the loop, which decides again.
      // --leader-identity names this replica in its Events'
      // reportingInstance (by default both are the pod's hostname), so
      // that which replica decided can be seen from the cluster.
      AdmissionLoop* gate = app->gate_.get();
      app->writer_ = std::make_unique<DecisionWriter>(
          app->live_->client(),
          DecisionWriterOptions{.reporting_instance = config.leader_identity,
                                .watched = &app->watched_pods_,
                                .on_eviction_blocked =
                                    [gate](EvictionRefusal refusal) {
                                      gate->EvictionBlocked(std::move(refusal));
                                    }});
    }
    // A replica of two stands by until the Lease says otherwise: it must
    // not decide in the moment before the follower's first answer.
    if (live && !config.leader_lease.empty()) app->gate_->SetDeciding(false);
    app->gate_->Start(*app->service_, app->writer_.get());
  }
  if (live) {
    app->cluster_source_ = app->live_->source();
  } else if (absl::Status s = app->LoadCluster(config); !s.ok()) {
    return s;
  }
  app->api_ = std::make_unique<ExtenderApi>(
      *app->service_, app->metrics_,
      ExtenderApiOptions{.prefix = config.prefix, .wait_for_sync = live});
  if (live && !config.leader_lease.empty()) app->api_->SetStandby(true);
  auto router = std::make_shared<http::Router>();
  app->api_->Register(*router);
  http::ServerOptions server_options{
      .listen = config.listen,
      .tls_cert_file = config.tls_cert_file,
      .tls_key_file = config.tls_key_file,
      .client_ca_file = config.client_ca_file,
      .body_limit_bytes = static_cast<size_t>(config.body_limit_mib) << 20,
      .read_timeout = std::chrono::milliseconds(config.read_timeout_ms),
      .threads = config.threads};
  if (live) {
    // A live bind waits on the API server (up to --bind-deadline-ms); it
    // must not hold an I/O thread that filter calls need meanwhile.
    server_options.blocking = [](const http::Request& request) {
      return request.target.ends_with("/bind");
    };
  }
  absl::StatusOr<std::unique_ptr<http::Server>> server = http::Server::Start(
      server_options,
      [router](const http::Request& request) { return router->Handle(request); });
  if (!server.ok()) return server.status();
  app->server_ = *std::move(server);
  if (live) {
    app->live_->StartSync(*app->service_);  // api_ exists: on_synced may fire
    if (app->feed_ != nullptr) {
      app->podgroups_ = std::make_unique<kube::PodGroupSync>(
          app->live_->client(), *app->feed_,
          kube::PodGroupSyncOptions{.absent_poll = std::chrono::milliseconds(
                                        config.podgroup_api_poll_ms)});
      app->podgroups_->Start();
    }
    if (absl::Status s = app->FollowLeader(config); !s.ok()) return s;
  }
  app->StartTicker(config.tick_ms);
  return app;
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
            if (gate_ != nullptr) gate_->SetDeciding(active);
            api_->SetStandby(!active);
          }});
  leader_->Start();
  return absl::OkStatus();
}

std::string ExampleFilterCurl(const std::string& url,
                              const ExtenderService& service) {
  std::vector<std::string> names = service.Read([](const ClusterModel& model) {
    std::vector<std::string> out;
    for (const NodeState* node : model.SortedNodes()) out.push_back(node->name());
    return out;
  });
  std::string quoted = absl::StrJoin(names, ",", [](std::string* out,
                                                     const std::string& n) {
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

namespace {

absl::Status ParseServeFlags(const std::vector<std::string>& args,
                             ServeConfig& config) {
  FlagSet flags("serve");
  flags.String("listen", &config.listen, "ADDR:PORT to listen on (127.0.0.1:8888)");
  flags.String("cluster", &config.cluster_file,
               "Nodes and Pods as `kubectl get nodes,pods -o yaml|json` prints "
               "them; default: the embedded demo cluster");
  flags.String("tls-cert", &config.tls_cert_file, "PEM certificate: serve HTTPS");
  flags.String("tls-key", &config.tls_key_file, "PEM private key for --tls-cert");
  flags.String("client-ca", &config.client_ca_file,
               "PEM CA: require and verify client certificates");
  flags.String("kubeconfig", &config.kubeconfig,
               "follow a real cluster (the kubeconfig's current context)");
  flags.Bool("in-cluster", &config.in_cluster,
             "follow the cluster this pod runs in (service account)");
  flags.String("policy", &config.policy_file,
               "quota policy YAML (queues, cohorts, flavors); reloaded when it "
               "changes");
  flags.String("prefix", &config.prefix,
               "also serve the verbs under this path prefix (e.g. /gpusched)");
  flags.String("scoring", &config.scoring,
               "scorer weights, e.g. binpack=1,spread=0,topology=2,fragmentation=3");
  flags.Int("body-limit-mib", &config.body_limit_mib,
            "largest request body in MiB (16)");
  flags.Int("read-timeout-ms", &config.read_timeout_ms,
            "a request must arrive within this many ms (10000)");
  flags.Int("threads", &config.threads, "I/O threads (2)");
  flags.Int("bind-deadline-ms", &config.bind_deadline_ms,
            "live mode: a bind's API server calls end within this many ms, "
            "then it answers Error; keep it below the extender httpTimeout "
            "(3000)");
  flags.Int("filter-keep-best", &config.filter_keep_best,
            "filter answers with at most this many fitting nodes, the best "
            "by gpusched's scorers; 1 makes the node gpusched's choice and "
            "spares kube-scheduler its scoring (0: all fitting nodes)");
  flags.String("leader-lease", &config.leader_lease,
               "live mode, two replicas: NAMESPACE/NAME of kube-scheduler's "
               "leader Lease; decide only while this pod's kube-scheduler "
               "holds it, stand by otherwise");
  flags.String("leader-identity", &config.leader_identity,
               "the holder identity prefix of this pod's kube-scheduler "
               "(default: this host's name)");
  flags.Int("podgroup-api-poll-ms", &config.podgroup_api_poll_ms,
            "live mode: ask again this often for a PodGroup API (Volcano, "
            "coscheduling) whose CRD is not installed, when its CRD may "
            "not be watched (else it is listed once the CRD is "
            "established), and for one that may not be listed (30000)");
  AddWebhookFlags(flags, config.webhook);
  flags.String("log-format", &config.log_format, "json or text (text)");
  flags.Int("v", &config.verbosity, "verbosity: 0 info, 1 debug, 2 trace");
  std::vector<std::string> positional;
  if (auto s = flags.Parse(args, &positional); !s.ok()) return s;
  if (!positional.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serve: unexpected argument \"", positional[0], "\"\n", flags.Usage()));
  }
  if (!config.cluster_file.empty() &&
      (!config.kubeconfig.empty() || config.in_cluster)) {
    return absl::InvalidArgumentError(
        "serve: --cluster and --kubeconfig/--in-cluster exclude each other");
  }
  if (!config.webhook.listen.empty() && config.kubeconfig.empty() &&
      !config.in_cluster) {
    return absl::InvalidArgumentError(
        "serve: --webhook-listen needs --kubeconfig or --in-cluster (its "
        "certificate is kept in a Secret)");
  }
  if (!config.leader_lease.empty()) {
    const size_t slash = config.leader_lease.find('/');
    if (config.kubeconfig.empty() && !config.in_cluster) {
      return absl::InvalidArgumentError(
          "serve: --leader-lease needs --kubeconfig or --in-cluster");
    }
    if (slash == std::string::npos || slash == 0 ||
        slash + 1 == config.leader_lease.size() ||
        config.leader_lease.find('/', slash + 1) != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrCat(
          "serve: --leader-lease \"", config.leader_lease,
          "\": want NAMESPACE/NAME, e.g. gpusched-system/gpusched"));
    }
  }
  if (config.tls_cert_file.empty() != config.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        "serve: --tls-cert and --tls-key go together");
  }
  if (!config.client_ca_file.empty() && config.tls_cert_file.empty()) {
    return absl::InvalidArgumentError(
        "serve: --client-ca needs --tls-cert and --tls-key");
  }
  if (config.body_limit_mib <= 0 || config.threads <= 0 ||
      config.read_timeout_ms <= 0 || config.bind_deadline_ms <= 0 ||
      config.podgroup_api_poll_ms <= 0 || config.filter_keep_best < 0) {
    return absl::InvalidArgumentError(
        "serve: --body-limit-mib, --threads, --read-timeout-ms, "
        "--bind-deadline-ms and --podgroup-api-poll-ms must be positive, "
        "--filter-keep-best at least 0");
  }
  return absl::OkStatus();
}

}  // namespace

int RunServe(const std::vector<std::string>& args) {
  ServeConfig config;
  if (absl::Status s = ParseServeFlags(args, config); !s.ok()) {
    std::cerr << Message(s) << "\n";
    return 2;
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
            << "\nNodes and GPUs: curl -s " << (*app)->url()
            << "/v1/nodes\nStop with Ctrl-C (SIGINT) or SIGTERM.\n"
            << std::flush;
  int signal = http::WaitForTerminationSignal();
  spdlog::info("signal={}: finishing in-flight requests", signal);
  (*app)->Shutdown();
  spdlog::info("stopped");
  return 0;
}

}  // namespace gpusched
