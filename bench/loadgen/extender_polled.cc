// extender_polled: does reading the queues slow the extender? Filter server
// CPU time on the extender's latency shape (5,000 nodes, 500 candidates,
// filter only) with nobody reading, then while the visibility API's
// resources and the dashboard's data are polled as hard as many open
// dashboards would, on one in-process server (issue H §1: within 1.1x).
//
// Steps: 1. generate the cluster (40 % of GPUs in use) and a policy with
// three ClusterQueues; 2. start ServeApp with --policy and the loopback
// dashboard listener (the same read model and handlers the aggregated API
// serves, without the API server's authentication in front); 3. per
// concurrency, a quiet run, then a polled run: a second client fetches the
// dashboard's resources (clusterqueues, cohorts, gpunodes, decisions, each
// queue's pendingworkloads) at --poll-hz rounds a second, full answers
// every time (no If-None-Match); 4. report filter server CPU p50/p99 per
// run and the polled/quiet ratio of p99.
#include <spdlog/spdlog.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "api/server/serve.h"
#include "bench/lib/kube_json.h"
#include "bench/loadgen/http_load.h"
#include "bench/loadgen/workload.h"

namespace gpusched::bench {
namespace {

constexpr char kUsage[] =
    "usage: extender_polled [--nodes 5000] [--candidates 500]\n"
    "  [--concurrency 1,8] [--seconds 10] [--warmup 2] [--poll-hz 5]\n"
    "  [--out bench/results/extender_polled.json]\n";

constexpr char kApi[] = "/apis/visibility.gpusched.io/v1alpha1/";
const char* const kQueues[] = {"team-a", "team-b", "team-c"};

std::string PolicyYaml() {
  std::string out =
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
      "metadata: {name: any}\n";
  for (const char* q : kQueues) {
    absl::StrAppend(
        &out, "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n",
        "metadata: {name: ", q, "}\nspec:\n  cohort: all\n",
        "  namespaceSelector: {}\n  resourceGroups:\n",
        "  - coveredResources: [nvidia.com/gpu]\n    flavors:\n",
        "    - name: any\n      resources:\n",
        "      - {name: nvidia.com/gpu, nominalQuota: 1000}\n",
        "---\napiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n",
        "metadata: {name: q, namespace: ", q, "}\nspec: {clusterQueue: ", q,
        "}\n");
  }
  return out;
}

WireRequest MakeGet(std::string verb, const std::string& target) {
  return {std::move(verb),
          absl::StrCat("GET ", target, " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")};
}

// Every connection cycles over what the dashboard page reads.
class PollScript : public Script {
 public:
  PollScript() {
    for (const char* resource :
         {"clusterqueues", "cohorts", "gpunodes", "decisions"}) {
      gets_.push_back(MakeGet(resource, absl::StrCat(kApi, resource)));
    }
    for (const char* q : kQueues) {
      gets_.push_back(MakeGet(
          "pendingworkloads",
          absl::StrCat(kApi, "clusterqueues/", q, "/pendingworkloads")));
    }
  }
  size_t per_round() const { return gets_.size(); }
  bool Next(int, const Reply&, WireRequest** out) override {
    *out = &gets_[next_++ % gets_.size()];
    return true;
  }

 private:
  std::vector<WireRequest> gets_;
  size_t next_ = 0;
};

class FilterScript : public Script {
 public:
  explicit FilterScript(std::vector<WireRequest> filters)
      : filters_(std::move(filters)) {}
  bool Next(int, const Reply&, WireRequest** out) override {
    *out = &filters_[next_++ % filters_.size()];
    return true;
  }

 private:
  std::vector<WireRequest> filters_;
  size_t next_ = 0;
};

uint16_t PortOf(const std::string& url) {
  const size_t colon = url.find(':', url.find("//") + 2);
  return static_cast<uint16_t>(std::atoi(url.c_str() + colon + 1));
}

struct Measured {
  Percentiles cpu;
  double filters_per_second = 0;
  uint64_t polls = 0, poll_errors = 0;
};

// One run of `c` filter clients; with `poll_rate` > 0 a polling client
// runs alongside for the whole run.
absl::StatusOr<Measured> Run(ServeApp& app,
                             const std::vector<WireRequest>& filters, int c,
                             LoadOptions timing, double poll_rate) {
  FilterScript script(filters);
  timing.port = app.port();
  timing.connections = c;
  std::optional<absl::StatusOr<LoadResult>> polled;
  std::thread poller;
  if (poll_rate > 0) {
    poller = std::thread([&] {
      PollScript poll;
      polled = RunLoad({.port = PortOf(app.dashboard_url()),
                        .connections = 1,
                        .warmup = std::chrono::milliseconds(0),
                        .duration = timing.warmup + timing.duration,
                        .max_rate = poll_rate * poll.per_round()},
                       poll);
    });
  }
  absl::StatusOr<LoadResult> result = RunLoad(timing, script);
  if (poller.joinable()) poller.join();
  if (!result.ok()) return result.status();
  const VerbStats& filter = result->verbs["filter"];
  Measured out{.cpu = PercentilesOf(filter.server_cpu_us),
               .filters_per_second = filter.client_us.size() / result->seconds};
  if (polled && polled->ok()) {
    for (const auto& [verb, stats] : (*polled)->verbs) {
      out.polls += stats.client_us.size();
      out.poll_errors += stats.errors;
    }
  } else if (polled) {
    return polled->status();
  }
  return out;
}

nlohmann::json ToJson(const Measured& m) {
  return {{"filter_server_cpu_us", {{"p50", m.cpu.p50}, {"p99", m.cpu.p99}}},
          {"filters_per_second", m.filters_per_second},
          {"polls", m.polls},
          {"poll_errors", m.poll_errors}};
}

// serve --cluster --policy --dashboard-listen, in process, on `cluster`
// (its files written under `dir`, which the caller removes).
absl::StatusOr<std::unique_ptr<ServeApp>> StartServer(
    const GeneratedCluster& cluster, const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  const std::string cluster_file = (dir / "cluster.json").string();
  const std::string policy_file = (dir / "policy.yaml").string();
  if (absl::Status s = WriteClusterFile(cluster, cluster_file); !s.ok()) {
    return s;
  }
  std::ofstream(policy_file) << PolicyYaml();
  ServeConfig config{.listen = "127.0.0.1:0",
                     .cluster_file = cluster_file,
                     .policy_file = policy_file,
                     .threads = 2};
  config.dashboard.listen = "127.0.0.1:0";
  return ServeApp::Start(config);
}

// Filter bodies: the pod mix over 16 candidate samples.
std::vector<WireRequest> FilterRequests(const GeneratedCluster& cluster,
                                        int candidates) {
  std::vector<WireRequest> filters;
  const std::vector<Pod> pods = PendingPodMix();
  const auto sets = CandidateSets(NamesOf(cluster.nodes), candidates, 16, 7);
  for (size_t i = 0; i < sets.size(); ++i) {
    filters.push_back(
        MakePost("filter", "/filter",
                 ExtenderArgsWithNames(pods[i % pods.size()], sets[i])));
  }
  return filters;
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
  const double poll_hz = args.GetDouble("poll-hz", 5);
  const LoadOptions timing{
      .warmup = std::chrono::milliseconds(
          static_cast<int64_t>(args.GetDouble("warmup", 2) * 1000)),
      .duration = std::chrono::milliseconds(
          static_cast<int64_t>(args.GetDouble("seconds", 10) * 1000))};
  const std::string out = args.Get("out", "bench/results/extender_polled.json");

  GeneratedCluster cluster = GenerateCluster(nodes, 0.4, 42);
  const auto dir = std::filesystem::temp_directory_path() /
                   ("gpusched-polled-" + std::to_string(getpid()));
  // The policy file stays while the server runs: serve watches it.
  auto app = StartServer(cluster, dir);
  if (!app.ok()) {
    std::filesystem::remove_all(dir);
    std::cerr << "extender_polled: " << app.status() << "\n";
    return 1;
  }
  const std::vector<WireRequest> filters = FilterRequests(cluster, candidates);
  nlohmann::json runs = nlohmann::json::array();
  for (int c : args.GetInts("concurrency", {1, 8})) {
    auto quiet = Run(**app, filters, c, timing, 0);
    auto polled = Run(**app, filters, c, timing, poll_hz);
    if (!quiet.ok() || !polled.ok()) {
      std::cerr << "extender_polled: "
                << (quiet.ok() ? polled.status() : quiet.status()) << "\n";
      return 1;
    }
    const double ratio =
        quiet->cpu.p99 > 0 ? polled->cpu.p99 / quiet->cpu.p99 : 0;
    runs.push_back({{"concurrency", c},
                    {"quiet", ToJson(*quiet)},
                    {"polled", ToJson(*polled)},
                    {"p99_ratio", ratio}});
    std::printf(
        "clients=%d filter server CPU p99: quiet %.1f us, polled %.1f us "
        "(x%.2f; p50 %.1f -> %.1f us); %llu polls, %llu errors\n",
        c, quiet->cpu.p99, polled->cpu.p99, ratio, quiet->cpu.p50,
        polled->cpu.p50, static_cast<unsigned long long>(polled->polls),
        static_cast<unsigned long long>(polled->poll_errors));
  }
  (*app)->Shutdown();
  std::filesystem::remove_all(dir);
  nlohmann::json doc = {{"benchmark", "extender_polled"},
                        {"conditions",
                         {{"nodes", nodes},
                          {"candidates", candidates},
                          {"poll_rounds_per_second", poll_hz},
                          {"seconds", timing.duration.count() / 1000.0},
                          {"machine", MachineConditions()}}},
                        {"targets", {{"p99_ratio", 1.1}}},
                        {"runs", runs}};
  return WriteResultsAndExit("extender_polled", out, doc);
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) { return gpusched::bench::Main(argc, argv); }
