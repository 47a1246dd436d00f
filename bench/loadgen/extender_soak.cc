// extender_soak: sustained filter + bind traffic against a real `gpusched
// serve` process, sampling its resident set size, to show that memory does
// not grow under steady load.
//
// Steps: 1. generate the cluster (default 5,000 nodes, 40 % of GPUs in use)
// and start `--serve BINARY serve --cluster FILE` as a child process;
// 2. run --connections closed-loop clients for --warmup + --seconds (default
// 300 s + 600 s), each cycling: filter a new pod (distinct UID; 1, 2, 4 or
// 8 GPUs or a MIG instance) over 500 candidate names -> bind it to one of
// the nodes that passed (an unschedulable pod or a lost bind race is
// retried, same UID, on another sample, up to 8 times, as kube-scheduler
// retries) -> once the client holds more than its share of --live-pods
// bound pods, complete the oldest (POST /v1/pods/complete, the standalone
// stand-in for the API server's pod deletion), so the cluster stays in a
// steady state of churn like a real one; 3. sample VmRSS of the server every
// --sample-seconds; 4. report growth from the first sample after warm-up to
// the end, and the latencies per verb.
//
// Why 300 s of warm-up: the server keeps the pods it was shown in filter in a
// cache bounded at 100,000 filter calls (PendingPods, so that bind finds the
// pod's requests); at this load it takes ~200 s to fill, and memory grows
// until it has. The samples in the report show the whole curve.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "bench/lib/kube_json.h"
#include "bench/loadgen/http_load.h"
#include "bench/loadgen/workload.h"

namespace gpusched::bench {
namespace {

constexpr char kUsage[] =
    "usage: extender_soak --serve BUILD/gpusched [--nodes 5000]\n"
    "  [--seconds 600] [--warmup 300] [--sample-seconds 5] [--connections 2]\n"
    "  [--rate 1500 (requests/s cap, 0 = unbounded)] [--live-pods 2000]\n"
    "  [--out bench/results/soak.json]\n";

// One of the names in the filter response's NodeNames, chosen by `pick`
// (as kube-scheduler's scoring and tie-breaking spread choices), or "".
std::string PickPassed(std::string_view body, uint64_t pick) {
  constexpr std::string_view kKey = "\"NodeNames\":[";
  size_t at = body.find(kKey);
  if (at == std::string_view::npos) return "";
  at += kKey.size();
  const std::string_view list = body.substr(at, body.find(']', at) - at);
  const size_t count = std::count(list.begin(), list.end(), ',') + 1;
  if (list.size() < 2) return "";
  size_t start = 0;
  for (size_t skip = pick % count; skip > 0; --skip) {
    start = list.find(',', start) + 1;
  }
  const size_t end = list.find('"', start + 1);
  return std::string(list.substr(start + 1, end - start - 1));
}

class SoakScript : public Script {
 public:
  SoakScript(std::vector<std::vector<std::string>> sets, int connections,
             int live_pods)
      : pods_(PendingPodMix()),
        per_connection_(std::max(1, live_pods / connections)),
        clients_(connections) {
    for (const auto& set : sets) {
      std::string names = R"(,"Nodes":null,"NodeNames":[)";
      for (size_t i = 0; i < set.size(); ++i) {
        absl::StrAppend(&names, i ? "," : "", "\"", set[i], "\"");
      }
      names += "]}";
      name_lists_.push_back(std::move(names));
    }
  }

  bool Next(int connection, const Reply& last, WireRequest** out) override {
    Client& c = clients_[connection];
    switch (c.step) {
      case Step::kFilter:
        Filter(c, connection);
        break;
      case Step::kBind: {
        std::string node = PickPassed(last.body, c.serial * 7919 + c.attempts);
        if (node.empty()) {
          ++unschedulable_;
          Retry(c, connection);
          break;
        }
        c.request = MakePost("bind", "/bind", BindingArgs(c.pod, node));
        c.step = Step::kBound;
        break;
      }
      case Step::kBound:
        if (last.status == 200 &&
            last.body.find(R"("Error":"")") != std::string_view::npos) {
          c.bound.push_back(c.pod.meta.uid);
        } else {
          ++bind_failures_;
          Retry(c, connection);
          break;
        }
        [[fallthrough]];
      case Step::kComplete:
        if (static_cast<int>(c.bound.size()) > per_connection_) {
          c.request =
              MakePost("complete", "/v1/pods/complete",
                       absl::StrCat(R"({"PodUID":")", c.bound.front(), "\"}"));
          c.bound.pop_front();
          c.step = Step::kComplete;
        } else {
          Filter(c, connection);
        }
        break;
    }
    *out = &c.request;
    return true;
  }

  uint64_t unschedulable() const { return unschedulable_; }
  uint64_t bind_failures() const { return bind_failures_; }
  uint64_t abandoned() const { return abandoned_; }

 private:
  enum class Step { kFilter, kBind, kBound, kComplete };
  struct Client {
    Step step = Step::kFilter;
    uint64_t serial = 0;
    int attempts = 0;
    Pod pod;
    std::string pod_json;
    WireRequest request;
    std::deque<std::string> bound;
  };

  // A new pod (distinct UID).
  void Filter(Client& c, int connection) {
    const uint64_t n = c.serial++;
    c.attempts = 0;
    c.pod = pods_[n % pods_.size()];
    c.pod.meta.name = absl::StrCat("soak-", connection, "-", n);
    c.pod.meta.uid = absl::StrCat("uid-soak-", connection, "-", n);
    c.pod_json = KubePodJson(c.pod);
    SendFilter(c, n);
  }

  // The same pod again, as kube-scheduler retries an unschedulable pod or a
  // failed bind, on another candidate sample; given up after kMaxAttempts
  // (it then stays in the server's bounded pending-pod cache).
  void Retry(Client& c, int connection) {
    if (++c.attempts >= kMaxAttempts) {
      ++abandoned_;
      Filter(c, connection);
      return;
    }
    SendFilter(c, c.serial + c.attempts);
  }

  void SendFilter(Client& c, uint64_t sample) {
    c.request =
        MakePost("filter", "/filter",
                 absl::StrCat("{\"Pod\":", c.pod_json,
                              name_lists_[sample % name_lists_.size()]));
    c.step = Step::kBind;
  }

  static constexpr int kMaxAttempts = 8;

  std::vector<Pod> pods_;
  std::vector<std::string> name_lists_;
  int per_connection_;
  std::vector<Client> clients_;
  uint64_t unschedulable_ = 0;
  uint64_t bind_failures_ = 0;
  uint64_t abandoned_ = 0;
};

struct Sample {
  double seconds;
  int64_t rss_kib;
};

int Main(int argc, char** argv) {
  Args args(argc, argv);
  if (args.Has("help") || !args.Has("serve")) {
    std::cout << kUsage;
    return args.Has("help") ? 0 : 2;
  }
  const int nodes = static_cast<int>(args.GetInt("nodes", 5000));
  const double seconds = args.GetDouble("seconds", 600);
  const double warmup = args.GetDouble("warmup", 300);
  const double sample_seconds = args.GetDouble("sample-seconds", 5);
  const int connections = static_cast<int>(args.GetInt("connections", 2));
  const double rate = args.GetDouble("rate", 1500);
  const int live_pods = static_cast<int>(args.GetInt("live-pods", 2000));
  const std::string out = args.Get("out", "bench/results/soak.json");

  GeneratedCluster cluster = GenerateCluster(nodes, 0.4, 42);
  const auto sets =
      CandidateSets(NamesOf(cluster.nodes), std::min(nodes, 500), 16, 11);
  const std::string file = (std::filesystem::temp_directory_path() /
                            absl::StrCat("gpusched-soak-", getpid(), ".json"))
                               .string();
  if (absl::Status s = WriteClusterFile(cluster, file); !s.ok()) {
    std::cerr << "extender_soak: " << s << "\n";
    return 1;
  }
  cluster = GeneratedCluster{};
  auto child = StartServeProcess(args.Get("serve", ""), file, file + ".log", 2);
  std::filesystem::remove(file);
  if (!child.ok()) {
    std::cerr << "extender_soak: " << child.status() << "\n";
    return 1;
  }
  const int64_t rss_loaded = ResidentKib(child->pid);

  std::vector<Sample> samples;
  std::mutex mu;
  bool done = false;
  const auto start = std::chrono::steady_clock::now();
  std::thread sampler([&] {
    std::unique_lock lock(mu);
    for (;;) {
      lock.unlock();
      const int64_t rss = ResidentKib(child->pid);
      const double t = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      lock.lock();
      samples.push_back({t, rss});
      if (done) return;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(
          static_cast<int64_t>(sample_seconds * 1000)));
      lock.lock();
    }
  });

  SoakScript script(sets, connections, live_pods);
  auto result = RunLoad(
      {.host = "127.0.0.1",
       .port = child->port,
       .connections = connections,
       .warmup = std::chrono::milliseconds(static_cast<int64_t>(warmup * 1000)),
       .duration =
           std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000)),
       .max_rate = rate},
      script);
  {
    std::lock_guard lock(mu);
    done = true;
  }
  sampler.join();
  StopServeProcess(*child);
  if (!result.ok()) {
    std::cerr << "extender_soak: " << result.status() << "\n";
    return 1;
  }

  // Growth: first sample after warm-up -> last sample.
  int64_t after_warmup = -1, end = -1, peak = 0;
  nlohmann::json series = nlohmann::json::array();
  for (const Sample& s : samples) {
    series.push_back({{"seconds", s.seconds}, {"rss_kib", s.rss_kib}});
    if (s.seconds >= warmup && after_warmup < 0) after_warmup = s.rss_kib;
    if (s.seconds >= warmup) peak = std::max(peak, s.rss_kib);
    end = s.rss_kib;
  }
  if (after_warmup < 0) after_warmup = end;
  const double growth =
      after_warmup > 0 ? 100.0 * (end - after_warmup) / after_warmup : 0;
  nlohmann::json verbs = nlohmann::json::object();
  for (const auto& [name, verb] : result->verbs) {
    const Percentiles client = PercentilesOf(verb.client_us);
    const Percentiles server = PercentilesOf(verb.server_us);
    verbs[name] = {
        {"requests", verb.client_us.size()},
        {"errors", verb.errors},
        {"requests_per_second", verb.client_us.size() / seconds},
        {"client_us",
         {{"p50", client.p50}, {"p99", client.p99}, {"p999", client.p999}}},
        {"server_us",
         {{"p50", server.p50}, {"p99", server.p99}, {"p999", server.p999}}}};
  }
  nlohmann::json doc = {
      {"benchmark", "soak"},
      {"conditions",
       {{"nodes", nodes},
        {"seconds", seconds},
        {"warmup_seconds", warmup},
        {"connections", connections},
        {"max_requests_per_second", rate},
        {"live_pods", live_pods},
        {"server", "gpusched serve --cluster (child process, 2 threads)"},
        {"machine", MachineConditions()}}},
      {"rss_kib_loaded", rss_loaded},
      {"rss_kib_after_warmup", after_warmup},
      {"rss_kib_end", end},
      {"rss_kib_peak_after_warmup", peak},
      {"rss_growth_percent", growth},
      {"target_growth_percent", 5},
      {"unschedulable_filters", script.unschedulable()},
      {"bind_failures", script.bind_failures()},
      {"abandoned_pods", script.abandoned()},
      {"verbs", verbs},
      {"samples", series}};
  std::printf(
      "soak: %.0f s after %.0f s warm-up, RSS %lld -> %lld KiB "
      "(%+.2f %%), %llu requests\n",
      seconds, warmup, static_cast<long long>(after_warmup),
      static_cast<long long>(end), growth,
      static_cast<unsigned long long>(result->requests()));
  return WriteResultsAndExit("extender_soak", out, doc);
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) { return gpusched::bench::Main(argc, argv); }
