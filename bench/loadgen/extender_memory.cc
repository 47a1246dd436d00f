// extender_memory: resident memory of the extender's cluster model as the
// cluster grows.
//
// Each configuration runs in a forked child so that one cannot inherit the
// heap of another: 1. read VmRSS of the fresh child (baseline); 2. generate
// the nodes and running pods (GPU pods from the generator, then CPU-only
// pods of 100m / 256Mi spread round robin up to --pods); 3. load them into an
// ExtenderService as `serve` does; 4. free the generated input and return
// free heap to the OS (malloc_trim), then read VmRSS again. The model's cost
// is the difference; bytes per node and per pod are derived from it.
#include <malloc.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "bench/loadgen/http_load.h"
#include "bench/loadgen/workload.h"
#include "scheduler/extender_service.h"

namespace gpusched::bench {
namespace {

constexpr char kUsage[] =
    "usage: extender_memory [--nodes 1000,5000,20000] [--pods 10000,100000]\n"
    "  [--pods-on 5000] [--out bench/results/memory.json]\n"
    "Every --nodes size is measured with the generator's GPU pods; every\n"
    "--pods count on a --pods-on node cluster.\n";

struct Measurement {
  int nodes = 0;
  int pods = 0;
  int64_t rss_baseline_kib = 0;
  int64_t rss_loaded_kib = 0;
  double load_seconds = 0;
};

void AddCpuPods(GeneratedCluster& cluster, int total) {
  int i = 0;
  while (static_cast<int>(cluster.running.size()) < total) {
    Pod pod = MakeGpuPod(absl::StrCat("svc-", i), 0);
    pod.meta.namespace_name = absl::StrCat("team-", i % 50);
    pod.containers[0].requests =
        ResourceList{{"cpu", 100}, {"memory", 256 << 20}};
    pod.node_name = cluster.nodes[i % cluster.nodes.size()].meta.name;
    pod.phase = PodPhase::kRunning;
    cluster.running.push_back(std::move(pod));
    ++i;
  }
}

// Runs in the child: writes the measurement to `fd`.
void MeasureInChild(int nodes, int pods, int fd) {
  Measurement m{.nodes = nodes};
  malloc_trim(0);
  m.rss_baseline_kib = ResidentKib();
  auto service = std::make_unique<ExtenderService>();
  {
    GeneratedCluster cluster = GenerateCluster(nodes, 0.4, 42);
    AddCpuPods(cluster, pods);
    m.pods = static_cast<int>(cluster.running.size());
    const auto start = std::chrono::steady_clock::now();
    service->UpsertNodes(std::move(cluster.nodes));
    service->AddRunningPods(cluster.running);
    m.load_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  malloc_trim(0);
  m.rss_loaded_kib = ResidentKib();
  (void)!write(fd, &m, sizeof(m));
}

Measurement Measure(int nodes, int pods) {
  int fds[2];
  Measurement m;
  if (pipe(fds) != 0) return m;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    MeasureInChild(nodes, pods, fds[1]);
    _exit(0);
  }
  close(fds[1]);
  (void)!read(fds[0], &m, sizeof(m));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return m;
}

nlohmann::json Row(const Measurement& m) {
  const int64_t model_kib = m.rss_loaded_kib - m.rss_baseline_kib;
  return {{"nodes", m.nodes},
          {"pods", m.pods},
          {"rss_baseline_kib", m.rss_baseline_kib},
          {"rss_loaded_kib", m.rss_loaded_kib},
          {"model_mib", model_kib / 1024.0},
          {"load_seconds", m.load_seconds}};
}

int Main(int argc, char** argv) {
  Args args(argc, argv);
  if (args.Has("help")) {
    std::cout << kUsage;
    return 0;
  }
  const std::vector<int> node_sizes =
      args.GetInts("nodes", {1000, 5000, 20000});
  const std::vector<int> pod_counts = args.GetInts("pods", {10000, 100000});
  const int pods_on = static_cast<int>(args.GetInt("pods-on", 5000));
  nlohmann::json rows = nlohmann::json::array();
  for (int nodes : node_sizes) {
    Measurement m = Measure(nodes, 0);
    rows.push_back(Row(m));
    std::printf(
        "nodes=%-6d pods=%-7d model=%8.1f MiB rss=%8.1f MiB load=%.2f s\n",
        m.nodes, m.pods, (m.rss_loaded_kib - m.rss_baseline_kib) / 1024.0,
        m.rss_loaded_kib / 1024.0, m.load_seconds);
  }
  for (int pods : pod_counts) {
    Measurement m = Measure(pods_on, pods);
    rows.push_back(Row(m));
    std::printf(
        "nodes=%-6d pods=%-7d model=%8.1f MiB rss=%8.1f MiB load=%.2f s\n",
        m.nodes, m.pods, (m.rss_loaded_kib - m.rss_baseline_kib) / 1024.0,
        m.rss_loaded_kib / 1024.0, m.load_seconds);
  }
  // Marginal costs from the sweep: per node between the smallest and the
  // largest node count, per pod between the two pod counts.
  nlohmann::json derived = nlohmann::json::object();
  auto model_bytes = [](const nlohmann::json& r) {
    return (r["rss_loaded_kib"].get<double>() -
            r["rss_baseline_kib"].get<double>()) *
           1024;
  };
  if (node_sizes.size() >= 2) {
    const auto& a = rows[0];
    const auto& b = rows[node_sizes.size() - 1];
    const double dn = b["nodes"].get<double>() - a["nodes"].get<double>();
    if (dn > 0)
      derived["bytes_per_node"] = (model_bytes(b) - model_bytes(a)) / dn;
  }
  if (pod_counts.size() >= 2) {
    const auto& a = rows[node_sizes.size()];
    const auto& b = rows[rows.size() - 1];
    const double dp = b["pods"].get<double>() - a["pods"].get<double>();
    if (dp > 0)
      derived["bytes_per_pod"] = (model_bytes(b) - model_bytes(a)) / dp;
  }
  nlohmann::json doc = {
      {"benchmark", "memory"},
      {"conditions",
       {{"method",
         "forked child per row: VmRSS after loading into ExtenderService "
         "(inputs freed, malloc_trim) minus VmRSS before"},
        {"cpu_pod", "100m cpu, 256Mi memory, round robin over nodes"},
        {"machine", MachineConditions()}}},
      {"rows", rows},
      {"derived", derived}};
  return WriteResultsAndExit("extender_memory",
                             args.Get("out", "bench/results/memory.json"), doc);
}

}  // namespace
}  // namespace gpusched::bench

int main(int argc, char** argv) { return gpusched::bench::Main(argc, argv); }
