// extender_loadgen: the extender over real HTTP on loopback, the way
// kube-scheduler drives it, at 1, 8 and 64 concurrent keep-alive clients.
//
// Steps: 1. generate the cluster (default 5,000 nodes) and write it as a
// cluster file; 2. start the real server on it: in-process through ServeApp
// (the same wiring as `gpusched serve`), or `--serve BINARY` as a child
// process, or `--target HOST:PORT` for a server already running on the same
// generated cluster; 3. for each concurrency, run closed-loop clients for
// --seconds after --warmup, each sending filter then prioritize with 500
// candidate names (nodeCacheCapable: true; prioritize gets the names that
// passed, as from kube-scheduler), rotating over five pod shapes and 16
// candidate samples; 4. with --ingest-seconds > 0, one client sends
// filter with full Node objects (nodeCacheCapable: false) and the ingest
// rate in MB/s is reported; 5. write the JSON report.
//
// Server time is what the server reports in X-Gpusched-Server-Micros (from
// the request read to the response built); client time is the round trip.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "api/server/serve.h"
#include "bench/lib/kube_json.h"
#include "bench/loadgen/http_load.h"
#include "bench/loadgen/workload.h"

namespace gpusched::bench {
namespace {

constexpr char kUsage[] =
    "usage: extender_loadgen [--nodes 5000] [--candidates 500]\n"
    "  [--concurrency 1,8,64] [--seconds 10] [--warmup 2]\n"
    "  [--mix filter+prioritize|filter] [--ingest-seconds 5]\n"
    "  [--client-nice 0]\n"
    "  [--serve BUILD/gpusched | --target 127.0.0.1:PORT] [--threads 2]\n"
    "  [--out bench/results/extender_http.json]\n";

// Filter, then (unless filter-only) prioritize with the names that passed,
// as kube-scheduler does; the filter bodies rotate.
class ExtenderScript : public Script {
 public:
  // `pod_prefixes[i]` is filter body i up to and including "NodeNames":[.
  ExtenderScript(std::vector<WireRequest> filters,
                 std::vector<std::string> pod_prefixes, int connections,
                 bool prioritize)
      : filters_(std::move(filters)),
        prefixes_(std::move(pod_prefixes)),
        clients_(connections),
        prioritize_(prioritize) {}

  bool Next(int connection, const Reply& last, WireRequest** out) override {
    Client& c = clients_[connection];
    if (prioritize_ && c.filtered) {
      c.filtered = false;
      c.prioritize = MakePost(
          "prioritize", "/prioritize",
          prefixes_[c.body] + std::string(PassedArray(last.body)) + "]}");
      *out = &c.prioritize;
      return true;
    }
    c.body = c.next++ % filters_.size();
    c.filtered = true;
    *out = &filters_[c.body];
    return true;
  }

 private:
  // The text inside the response's NodeNames list.
  static std::string_view PassedArray(std::string_view body) {
    constexpr std::string_view kKey = "\"NodeNames\":[";
    size_t at = body.find(kKey);
    if (at == std::string_view::npos) return {};
    at += kKey.size();
    return body.substr(at, body.find(']', at) - at);
  }

  struct Client {
    size_t next = 0;
    size_t body = 0;
    bool filtered = false;
    WireRequest prioritize;
  };
  std::vector<WireRequest> filters_;
  std::vector<std::string> prefixes_;
  std::vector<Client> clients_;
  bool prioritize_;
};

nlohmann::json Stats(const Percentiles& p) {
  return {{"p50", p.p50},
          {"p99", p.p99},
          {"p999", p.p999},
          {"max", p.max},
          {"mean", p.mean}};
}

nlohmann::json Report(const LoadResult& result) {
  nlohmann::json verbs = nlohmann::json::object();
  for (const auto& [name, verb] : result.verbs) {
    verbs[name] = {
        {"requests", verb.client_us.size()},
        {"errors", verb.errors},
        {"requests_per_second", verb.client_us.size() / result.seconds},
        {"client_us", Stats(PercentilesOf(verb.client_us))},
        {"server_us", Stats(PercentilesOf(verb.server_us))},
        {"server_cpu_us", Stats(PercentilesOf(verb.server_cpu_us))},
        {"mb_per_second_sent", verb.bytes_sent / result.seconds / 1e6},
        {"mean_request_bytes",
         verb.client_us.empty() ? 0 : verb.bytes_sent / verb.client_us.size()},
        {"mean_response_bytes",
         verb.client_us.empty() ? 0
                                : verb.bytes_received / verb.client_us.size()}};
  }
  // CPU of this process (server and client together, in-process mode) per
  // request: a capacity figure that the machine's other load does not move.
  const double cpu_us =
      result.all_requests ? result.cpu_seconds * 1e6 / result.all_requests : 0;
  return {{"seconds", result.seconds},
          {"requests_per_second", result.requests() / result.seconds},
          {"process_cpu_us_per_request", cpu_us},
          {"verbs", verbs}};
}

struct Server {
  std::unique_ptr<ServeApp> app;  // in-process
  ChildServer child;              // or a child process
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  std::string kind;
};

absl::StatusOr<Server> StartServer(const Args& args,
                                   const GeneratedCluster& cluster) {
  Server server;
  if (args.Has("target")) {
    std::string target = args.Get("target", "");
    size_t colon = target.rfind(':');
    server.host = target.substr(0, colon);
    server.port = static_cast<uint16_t>(std::atoi(target.c_str() + colon + 1));
    server.kind = "external " + target;
    return server;
  }
  const std::string file =
      (std::filesystem::temp_directory_path() /
       ("gpusched-loadgen-" + std::to_string(getpid()) + ".json"))
          .string();
  if (absl::Status s = WriteClusterFile(cluster, file); !s.ok()) return s;
  const int threads = static_cast<int>(args.GetInt("threads", 2));
  if (args.Has("serve")) {
    auto child =
        StartServeProcess(args.Get("serve", ""), file, file + ".log", threads);
    std::filesystem::remove(file);
    if (!child.ok()) return child.status();
    server.child = *child;
    server.port = child->port;
    server.kind = "gpusched serve child process";
    return server;
  }
  auto app = ServeApp::Start(ServeConfig{
      .listen = "127.0.0.1:0", .cluster_file = file, .threads = threads});
  std::filesystem::remove(file);
  if (!app.ok()) return app.status();
  server.port = (*app)->port();
  server.app = *std::move(app);
  server.kind = "in-process ServeApp";
  return server;
}

int Main(int argc, char** argv) {
  Args args(argc, argv);
  if (args.Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  spdlog::set_level(spdlog::level::warn);
  const int nodes = static_cast<int>(args.GetInt("nodes", 5000));
  const int candidates = static_cast<int>(args.GetInt("candidates", 500));
  const std::vector<int> concurrency = args.GetInts("concurrency", {1, 8, 64});
  const auto seconds = std::chrono::milliseconds(
      static_cast<int64_t>(args.GetDouble("seconds", 10) * 1000));
  const auto warmup = std::chrono::milliseconds(
      static_cast<int64_t>(args.GetDouble("warmup", 2) * 1000));
  const auto ingest_seconds = std::chrono::milliseconds(
      static_cast<int64_t>(args.GetDouble("ingest-seconds", 5) * 1000));
  const std::string mix = args.Get("mix", "filter+prioritize");
  const int client_nice = static_cast<int>(args.GetInt("client-nice", 0));
  const std::string out = args.Get("out", "bench/results/extender_http.json");

  GeneratedCluster cluster = GenerateCluster(nodes, 0.4, 42);
  const std::vector<std::string> names = NamesOf(cluster.nodes);
  auto server = StartServer(args, cluster);
  if (!server.ok()) {
    std::cerr << "extender_loadgen: " << server.status() << "\n";
    return 1;
  }
  nlohmann::json doc = {{"benchmark", "extender_http"},
                        {"server", server->kind},
                        {"conditions",
                         {{"nodes", nodes},
                          {"candidates", candidates},
                          {"node_cache_capable", true},
                          {"mix", mix},
                          {"seconds", seconds.count() / 1000.0},
                          {"warmup_seconds", warmup.count() / 1000.0},
                          {"server_threads", args.GetInt("threads", 2)},
                          {"client_threads", 1},
                          {"client_nice", client_nice},
                          {"server_time",
                           "X-Gpusched-Server-Micros: request read -> response "
                           "built (routing, decode, service, encode); "
                           "X-Gpusched-Server-Cpu-Micros: the serving "
                           "thread's CPU time over the same span"},
                          {"machine_before", MachineConditions()}}},
                        {"targets",
                         {{"filter_server_p99_us", 200},
                          {"filter_requests_per_second", 20000},
                          {"ingest_mb_per_second", 500}}}};

  // Bodies: 5 pod shapes x 16 candidate samples.
  std::vector<WireRequest> requests;
  std::vector<std::string> prefixes;
  const auto sets = CandidateSets(names, candidates, 16, 7);
  const std::vector<Pod> pods = PendingPodMix();
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::string body =
        ExtenderArgsWithNames(pods[i % pods.size()], sets[i]);
    requests.push_back(MakePost("filter", "/filter", body));
    prefixes.push_back(ExtenderArgsWithNames(pods[i % pods.size()], {}));
    prefixes.back().resize(prefixes.back().size() - 2);  // drop "]}"
  }
  nlohmann::json runs = nlohmann::json::array();
  for (int c : concurrency) {
    ExtenderScript script(requests, prefixes, c, mix != "filter");
    LoadOptions options{.host = server->host,
                        .port = server->port,
                        .connections = c,
                        .warmup = warmup,
                        .duration = seconds,
                        .client_nice = client_nice};
    auto result = RunLoad(options, script);
    if (!result.ok()) {
      std::cerr << "extender_loadgen: " << result.status() << "\n";
      return 1;
    }
    nlohmann::json run = Report(*result);
    run["concurrency"] = c;
    runs.push_back(run);
    const auto& filter = run["verbs"]["filter"];
    std::printf(
        "clients=%-3d req/s=%8.0f cpu/req=%6.1f us filter/s=%8.0f filter "
        "server p50=%.1f p99=%.1f p999=%.1f us (cpu p50=%.1f p99=%.1f), "
        "client p50=%.1f p99=%.1f us\n",
        c, run["requests_per_second"].get<double>(),
        run["process_cpu_us_per_request"].get<double>(),
        filter["requests_per_second"].get<double>(),
        filter["server_us"]["p50"].get<double>(),
        filter["server_us"]["p99"].get<double>(),
        filter["server_us"]["p999"].get<double>(),
        filter["server_cpu_us"]["p50"].get<double>(),
        filter["server_cpu_us"]["p99"].get<double>(),
        filter["client_us"]["p50"].get<double>(),
        filter["client_us"]["p99"].get<double>());
  }
  doc["runs"] = runs;

  if (ingest_seconds.count() > 0) {
    // nodeCacheCapable: false. The Nodes are the ones the server already
    // knows (same resourceVersion), as kube-scheduler resends them.
    std::vector<std::string> node_json;
    for (size_t i = 0; i < sets[0].size(); ++i) {
      const int index =
          std::atoi(sets[0][i].c_str() + sets[0][i].rfind('-') + 1);
      node_json.push_back(KubeNodeJson(cluster.nodes[index], index));
    }
    std::vector<WireRequest> ingest = {MakePost(
        "filter", "/filter", ExtenderArgsWithNodes(pods[2], node_json))};
    ExtenderScript script(ingest, {""}, 1, false);
    auto result = RunLoad({.host = server->host,
                           .port = server->port,
                           .connections = 1,
                           .warmup = warmup,
                           .duration = ingest_seconds},
                          script);
    if (result.ok()) {
      nlohmann::json run = Report(*result);
      const auto& filter = run["verbs"]["filter"];
      const double mean_server_s =
          filter["server_us"]["mean"].get<double>() / 1e6;
      const double bytes = filter["mean_request_bytes"].get<double>();
      run["request_mb"] = bytes / 1e6;
      run["mb_per_second_client"] = filter["mb_per_second_sent"];
      run["mb_per_second_server"] =
          mean_server_s > 0 ? bytes / mean_server_s / 1e6 : 0;
      doc["ingest"] = run;
      std::printf(
          "ingest: %.1f MB requests, %.0f MB/s end to end, %.0f MB/s "
          "of server time\n",
          bytes / 1e6, run["mb_per_second_client"].get<double>(),
          run["mb_per_second_server"].get<double>());
    }
  }
  doc["conditions"]["machine_after"] = MachineConditions();
  if (server->app) server->app->Shutdown();
  StopServeProcess(server->child);
  return WriteResultsAndExit("extender_loadgen", out, doc);
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) { return gpusched::bench::Main(argc, argv); }
