// Admission throughput: N pending workloads (gangs of 1..8 pods, 1..8 GPUs
// each, mixed priorities) over Q ClusterQueues in one cohort, on a generated
// cluster; one Schedule() call admits what fits. Reports decisions/s
// (workloads considered per second of the pass) and admissions.
#include <random>

#include "bench/lib/cluster_generator.h"
#include "benchmark/benchmark.h"
#include "queueing/engine.h"

namespace gpusched::bench {
namespace {

Policy QueuesPolicy(int queues, int64_t gpus_each) {
  Policy policy;
  policy.flavors = {ResourceFlavor{.name = "any"}};
  for (int q = 0; q < queues; ++q) {
    ClusterQueue cq{.name = "cq-" + std::to_string(q), .cohort = "all"};
    cq.preemption.within_cluster_queue = WithinClusterQueue::kLowerPriority;
    cq.resource_groups.push_back(ResourceGroup{
        .covered_resources = {"nvidia.com/gpu", "cpu", "memory"},
        .flavors = {FlavorQuotas{
            .flavor = "any",
            .resources = {{.name = "nvidia.com/gpu", .nominal = gpus_each},
                          {.name = "cpu", .nominal = int64_t{1} << 30},
                          {.name = "memory", .nominal = int64_t{1} << 50}}}}});
    policy.cluster_queues.push_back(std::move(cq));
    policy.local_queues.push_back(LocalQueue{"ns-" + std::to_string(q), "q", cq.name});
    policy.local_queues.back().cluster_queue = "cq-" + std::to_string(q);
  }
  return policy;
}

void BM_AdmitPendingWorkloads(benchmark::State& state) {
  const int nodes = state.range(0), workloads = state.range(1), queues = state.range(2);
  for (auto _ : state) {
    state.PauseTiming();
    GeneratedCluster cluster = GenerateCluster(nodes, 0.0, 7);
    ClusterModel model;
    int64_t total_gpus = 0;
    for (Node& n : cluster.nodes) {
      total_gpus += n.allocatable.Get(kNvidiaGpu);
      model.UpsertNode(std::move(n));
    }
    auto engine = *QueueingEngine::Create(QueuesPolicy(queues, total_gpus / queues), &model,
                                          EngineOptions{.bind_on_admission = true});
    std::mt19937_64 random(11);
    for (int w = 0; w < workloads; ++w) {
      const int q = w % queues;
      const int pods = 1 + random() % 4;
      const int gpus = 1 << (random() % 4);
      for (int p = 0; p < pods; ++p) {
        Pod pod = MakeGpuPod("w" + std::to_string(w) + "-" + std::to_string(p), gpus);
        pod.meta.namespace_name = "ns-" + std::to_string(q);
        pod.meta.uid = pod.meta.namespace_name + "/" + pod.meta.name;
        pod.meta.labels = {{"kueue.x-k8s.io/queue-name", "q"},
                           {"kueue.x-k8s.io/pod-group-name", "g" + std::to_string(w)}};
        pod.meta.annotations = {{"kueue.x-k8s.io/pod-group-total-count", std::to_string(pods)}};
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
BENCHMARK(BM_AdmitPendingWorkloads)
    ->Args({5000, 2000, 30})
    ->Args({500, 2000, 30})
    ->Args({50, 50, 3})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
