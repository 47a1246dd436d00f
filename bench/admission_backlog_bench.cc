// Filter for a queued pod while the admission loop holds a backlog: the
// loop runs on its own thread and filter only reads its published verdicts,
// so filter's latency must not grow with the number of pending workloads
// (issue E §5: p99 with 10,000 pending no worse than with none). The
// backlog is single-GPU workloads in a queue whose quota they exceed; the
// probe pod waits in the same queue, and filter answers every candidate
// with the queue's reason.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "bench/lib/cluster_generator.h"
#include "bench/lib/latency.h"
#include "benchmark/benchmark.h"
#include "queueing/admission_loop.h"
#include "scheduler/extender_service.h"

namespace gpusched::bench {
namespace {

// One ClusterQueue of 8 GPUs (the backlog waits for quota), one flavor.
Policy SmallQueue() {
  Policy policy;
  policy.flavors = {ResourceFlavor{.name = "any"}};
  ClusterQueue cq{.name = "team"};
  cq.resource_groups.push_back(ResourceGroup{
      .covered_resources = {"nvidia.com/gpu", "cpu", "memory"},
      .flavors = {FlavorQuotas{
          .flavor = "any",
          .resources = {{.name = "nvidia.com/gpu", .nominal = 8},
                        {.name = "cpu", .nominal = int64_t{1} << 30},
                        {.name = "memory", .nominal = int64_t{1} << 50}}}}});
  policy.cluster_queues.push_back(std::move(cq));
  policy.local_queues.push_back(LocalQueue{"team-ns", "q", "team"});
  return policy;
}

Pod QueuedPod(const std::string& name, int gpus) {
  Pod pod = MakeGpuPod(name, gpus);
  pod.meta.namespace_name = "team-ns";
  pod.meta.uid = "uid-" + name;
  pod.meta.labels = {{"kueue.x-k8s.io/queue-name", "q"}};
  return pod;
}

// The loop and service with `pending` waiting workloads (after 8 GPUs'
// worth were admitted), settled: every input went through a pass. The
// probe sorts last in the queue (equal creation times go by name), so it
// waits.
struct Backlog {
  std::unique_ptr<AdmissionLoop> loop;
  std::unique_ptr<ExtenderService> service;
  std::vector<std::string> candidates;
  ~Backlog() { loop->Stop(); }
};

std::unique_ptr<Backlog> MakeBacklog(int pending, int nodes, int candidates) {
  auto b = std::make_unique<Backlog>();
  b->loop = *AdmissionLoop::Create(SmallQueue());
  b->service = std::make_unique<ExtenderService>(
      ServiceOptions{.gate = b->loop.get()});
  GeneratedCluster cluster = GenerateCluster(nodes, 0.0, 5);
  std::vector<std::string> names = NamesOf(cluster.nodes);
  b->service->UpsertNodes(std::move(cluster.nodes));
  b->candidates = CandidateSets(names, candidates, 1, 9).front();
  b->loop->Start(*b->service, nullptr);
  for (int i = 0; i < 8 + pending; ++i) {
    b->loop->PodUpserted(QueuedPod("w" + std::to_string(i), 1));
  }
  b->loop->PodUpserted(QueuedPod("zz-probe", 1));
  b->loop->WaitIdle();
  return b;
}

void BM_FilterQueuedPodWithBacklog(benchmark::State& state) {
  const int pending = state.range(0), nodes = state.range(1);
  std::unique_ptr<Backlog> b = MakeBacklog(pending, nodes, state.range(2));
  const Pod probe = QueuedPod("zz-probe", 1);
  Latencies latencies;
  size_t failed = 0;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    FilterOutcome outcome = b->service->Filter(probe, b->candidates);
    latencies.Add(std::chrono::steady_clock::now() - start);
    failed = outcome.failed.size() + outcome.unresolvable.size();
    benchmark::DoNotOptimize(outcome);
  }
  latencies.Publish(state);
  // Every candidate refused with the queue's reason: the probe waits.
  state.counters["refused"] = static_cast<double>(failed);
  state.counters["pending"] = pending;
}

// {pending workloads, nodes, candidates per filter}; /50/ is CI's size.
BENCHMARK(BM_FilterQueuedPodWithBacklog)
    ->Args({0, 5000, 500})
    ->Args({10000, 5000, 500})
    ->Args({50, 50, 50})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
