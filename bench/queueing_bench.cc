// Admission throughput: N pending workloads (gangs of 1..8 pods, 1..8 GPUs
// each, mixed priorities) over Q ClusterQueues in one cohort, on a generated
// cluster; one Schedule() call admits what fits. Reports decisions/s
// (workloads considered per second of the pass) and admissions.
#include <chrono>
#include <cstdlib>
#include <deque>
#include <random>

#include "api/codec/pod_admission_state.h"
#include "bench/lib/cluster_generator.h"
#include "bench/lib/latency.h"
#include "bench/lib/queued_workloads.h"
#include "benchmark/benchmark.h"
#include "queueing/engine.h"
#include "queueing/gang_placer.h"
#include "queueing/start_forecast.h"

namespace gpusched::bench {
namespace {

void BM_AdmitPendingWorkloads(benchmark::State& state) {
  const int nodes = state.range(0), workloads = state.range(1),
            queues = state.range(2);
  for (auto _ : state) {
    state.PauseTiming();
    ClusterModel model;
    const int64_t total_gpus =
        LoadNodes(GenerateCluster(nodes, 0.0, 7).nodes, model);
    auto engine = *QueueingEngine::Create(
        QueuesPolicy(queues, total_gpus / queues), &model,
        EngineOptions{.bind_on_admission = true});
    std::mt19937_64 random(11);
    for (int w = 0; w < workloads; ++w) {
      const int q = w % queues;
      const int pods = 1 + random() % 4;
      const int gpus = 1 << (random() % 4);
      for (int p = 0; p < pods; ++p) {
        Pod pod = QueuedGangPod(w, p, pods, gpus, q);
        pod.priority = static_cast<int32_t>(random() % 3) * 100;
        engine->AddPod(pod, 0);
      }
    }
    state.ResumeTiming();
    engine->Schedule(1000);
    state.PauseTiming();
    int admitted = 0;
    std::string example;
    for (const auto& [key, w] : engine->workloads()) {
      admitted += w.admitted() ? 1 : 0;
      if (!w.admitted() && example.empty()) example = key + ": " + w.reason;
    }
    if (admitted == 0) state.SetLabel(example);
    state.counters["admitted"] = admitted;
    state.ResumeTiming();
  }
  state.counters["workloads_per_s"] =
      benchmark::Counter(static_cast<double>(workloads) * state.iterations(),
                         benchmark::Counter::kIsRate);
}

// {nodes, pending workloads, ClusterQueues}; the last is CI's tiny size.
// The 5000-node rows at n, 2n and 4n pending workloads show how one
// admission pass grows with the backlog.
BENCHMARK(BM_AdmitPendingWorkloads)
    ->Args({5000, 2000, 30})
    ->Args({5000, 4000, 30})
    ->Args({5000, 8000, 30})
    ->Args({500, 2000, 30})
    ->Args({50, 50, 3})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// DGX H100 nodes in zones of 1024, blocks of 128 and racks of 16.
ClusterModel TopologyCluster(int nodes) {
  ClusterModel model;
  for (int i = 0; i < nodes; ++i) {
    Node node;
    node.meta.name = "n" + std::to_string(i);
    node.meta.labels = {
        {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
        {"nvidia.com/gpu.count", "8"},
        {"kubernetes.io/hostname", node.meta.name},
        {"topology.kubernetes.io/zone", "z" + std::to_string(i / 1024)},
        {"gpusched.io/block", "b" + std::to_string(i / 128)},
        {"gpusched.io/rack", "r" + std::to_string(i / 16)}};
    node.allocatable.Set(kCpu, 224'000);
    node.allocatable.Set(kMemory, int64_t{2} << 40);
    node.allocatable.Set(kPods, 110);
    node.allocatable.Set(kNvidiaGpu, 8);
    node.capacity = node.allocatable;
    model.UpsertNode(std::move(node));
  }
  return model;
}

// Time to plan one gang (8..64 members of 1, 2, 4 or 8 GPUs; a third must
// share a rack, a third prefer one block, a third go anywhere) on a
// cluster kept 60..85 % full by letting the oldest gangs finish. Every
// plan is timed, placed or not.
void BM_PlanGangWithTopology(benchmark::State& state) {
  const int nodes = state.range(0), gangs = state.range(1);
  ClusterModel model = TopologyCluster(nodes);
  const int64_t capacity = int64_t{nodes} * 8;
  const std::vector<std::string> levels = {
      "topology.kubernetes.io/zone", "gpusched.io/block", "gpusched.io/rack",
      "kubernetes.io/hostname"};
  const ScoringWeights weights = ScoringWeights::Defaults();
  // As the engine does: node scores per member shape, kept across gangs.
  NodeScoreMemo memo{size_t{1} << 20};
  std::mt19937_64 random(5);
  std::deque<std::pair<std::vector<std::string>, int64_t>>
      running;  // uids, GPUs
  int64_t used = 0;
  int placed = 0;
  Latencies latencies;
  for (auto _ : state) {
    for (int g = 0; g < gangs; ++g) {
      state.PauseTiming();
      while (used > capacity * 60 / 100 && !running.empty() &&
             (used > capacity * 85 / 100 || random() % 2 == 0)) {
        for (const std::string& uid : running.front().first)
          model.RemovePod(uid);
        used -= running.front().second;
        running.pop_front();
      }
      const int members = 8 + static_cast<int>(random() % 57);
      const int gpus = 1 << (random() % 4);
      std::vector<Pod> pods;
      for (int m = 0; m < members; ++m) {
        Pod pod =
            MakeGpuPod("g" + std::to_string(g) + "-" + std::to_string(m), gpus);
        pods.push_back(std::move(pod));
      }
      GangPlacementRequest request{.owner = "bench/g" + std::to_string(g),
                                   .levels = levels,
                                   .weights = &weights,
                                   .memo = &memo};
      for (const Pod& pod : pods) request.members.push_back(&pod);
      if (g % 3 == 0) request.required_level = "gpusched.io/rack";
      if (g % 3 == 1) request.preferred_level = "gpusched.io/block";
      state.ResumeTiming();
      const auto start = std::chrono::steady_clock::now();
      GangPlacement placement = PlaceGang(model, request);
      latencies.Add(std::chrono::steady_clock::now() - start);
      state.PauseTiming();
      if (placement.placed()) {
        ++placed;
        std::vector<std::string> uids;
        for (const Pod& pod : pods) uids.push_back(pod.meta.uid);
        running.emplace_back(std::move(uids), int64_t{members} * gpus);
        used += int64_t{members} * gpus;
      }
      state.ResumeTiming();
    }
  }
  latencies.Publish(state);
  state.counters["placed"] = placed;
  state.counters["gangs"] = gangs;
}

// {nodes, gangs}; the last is CI's tiny size.
BENCHMARK(BM_PlanGangWithTopology)
    ->Args({5000, 1000})
    ->Args({50, 20})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// One start forecast (H section 3): `pending` queued workloads behind a
// cluster kept full by running ones, every workload with an expected
// runtime of 10 to 120 minutes. Times the snapshot (taken on the loop
// thread) and the forward runs apart; reports how many pending workloads
// got an expected start and how many passes the runs took.
void AddForecastWorkload(QueueingEngine& engine, std::mt19937_64& random, int w,
                         int queues, int64_t now) {
  const int q = w % queues;
  const int pods = 1 + random() % 4;
  const int gpus = 1 << (random() % 4);
  const std::string runtime = std::to_string(10 + random() % 111) + "m";
  for (int p = 0; p < pods; ++p) {
    engine.AddPod(QueuedGangPod(w, p, pods, gpus, q,
                                {{"gpusched.io/expected-runtime", runtime}}),
                  now);
  }
}

void BM_StartForecast(benchmark::State& state) {
  const int nodes = state.range(0), pending = state.range(1),
            queues = state.range(2);
  ClusterModel model;
  const int64_t total_gpus =
      LoadNodes(GenerateCluster(nodes, 0.0, 7).nodes, model);
  auto engine =
      *QueueingEngine::Create(QueuesPolicy(queues, total_gpus / queues), &model,
                              EngineOptions{.bind_on_admission = true});
  std::mt19937_64 random(13);
  int w = 0;
  // Fill the cluster: about as many GPUs asked as it has.
  for (int64_t asked = 0; asked < total_gpus; asked += 7, ++w) {
    AddForecastWorkload(*engine, random, w, queues, 0);
  }
  engine->Schedule(0);
  for (int i = 0; i < pending; ++i, ++w) {
    AddForecastWorkload(*engine, random, w, queues, 1000);
  }
  engine->Schedule(1000);
  Latencies snapshot_ms, forecast_ms;
  StartForecast last;
  for (auto _ : state) {
    const auto began = std::chrono::steady_clock::now();
    ForecastSnapshot snapshot =
        TakeForecastSnapshot(*engine, model, 1000, nullptr);
    const auto taken = std::chrono::steady_clock::now();
    last = RunForecast(snapshot);
    const auto done = std::chrono::steady_clock::now();
    snapshot_ms.Add(taken - began);
    forecast_ms.Add(done - taken);
  }
  int started = 0;
  for (const auto& [key, start] : last.starts)
    started += start.expected_start_ms ? 1 : 0;
  state.counters["pending"] = static_cast<double>(last.starts.size());
  state.counters["with_expected_start"] = started;
  state.counters["passes"] = last.steps;
  state.counters["snapshot_ms"] = snapshot_ms.At(0.5) / 1e3;
  state.counters["forecast_ms"] = forecast_ms.At(0.5) / 1e3;
}

// {nodes, pending workloads, ClusterQueues}: the size, and CI's.
BENCHMARK(BM_StartForecast)
    ->Args({5000, 10000, 30})
    ->Args({500, 1000, 10})
    ->Args({50, 100, 3})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
