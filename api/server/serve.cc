#include "api/server/serve.h"

#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "api/codec/cluster_file.h"
#include "api/http/router.h"
#include "api/server/demo_cluster.h"
#include "api/server/flags.h"
#include "api/server/logging.h"
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

absl::StatusOr<std::unique_ptr<ServeApp>> ServeApp::Start(
    const ServeConfig& config) {
  ServiceOptions options;
  if (!config.scoring.empty()) {
    absl::StatusOr<ScoringWeights> weights =
        ScoringWeights::Parse(config.scoring);
    if (!weights.ok()) return weights.status();
    options.weights = *std::move(weights);
  }
  std::unique_ptr<ServeApp> app(new ServeApp());
  app->service_ = std::make_unique<ExtenderService>(std::move(options));
  if (absl::Status s = app->LoadCluster(config); !s.ok()) return s;
  app->api_ = std::make_unique<ExtenderApi>(
      *app->service_, app->metrics_, ExtenderApiOptions{.prefix = config.prefix});
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
  absl::StatusOr<std::unique_ptr<http::Server>> server = http::Server::Start(
      server_options,
      [router](const http::Request& request) { return router->Handle(request); });
  if (!server.ok()) return server.status();
  app->server_ = *std::move(server);
  app->api_->SetReady(true);
  return app;
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
  flags.String("prefix", &config.prefix,
               "also serve the verbs under this path prefix (e.g. /gpusched)");
  flags.String("scoring", &config.scoring,
               "scorer weights, e.g. binpack=1,spread=0,topology=2,fragmentation=3");
  flags.Int("body-limit-mib", &config.body_limit_mib,
            "largest request body in MiB (16)");
  flags.Int("read-timeout-ms", &config.read_timeout_ms,
            "a request must arrive within this many ms (10000)");
  flags.Int("threads", &config.threads, "I/O threads (2)");
  flags.String("log-format", &config.log_format, "json or text (text)");
  flags.Int("v", &config.verbosity, "verbosity: 0 info, 1 debug, 2 trace");
  std::vector<std::string> positional;
  if (auto s = flags.Parse(args, &positional); !s.ok()) return s;
  if (!positional.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "serve: unexpected argument \"", positional[0], "\"\n", flags.Usage()));
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
      config.read_timeout_ms <= 0) {
    return absl::InvalidArgumentError(
        "serve: --body-limit-mib, --threads and --read-timeout-ms must be "
        "positive");
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
