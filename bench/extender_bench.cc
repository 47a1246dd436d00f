// filter + prioritize for one pod on a generated cluster (default 5,000
// nodes, 500 candidate names), measured three ways: the domain service
// alone, the HTTP handler (JSON decode + service + JSON encode, i.e. server
// time), and over real HTTP on loopback. Per-iteration p50/p99/p999 are
// reported as counters.
#include <chrono>
#include <memory>

#include "api/http/client.h"
#include "api/http/router.h"
#include "api/http/server.h"
#include "api/server/extender_api.h"
#include "bench/lib/cluster_generator.h"
#include "bench/lib/latency.h"
#include "benchmark/benchmark.h"

namespace gpusched::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Fixture {
  ExtenderService service;
  Metrics metrics;
  std::unique_ptr<ExtenderApi> api;
  std::vector<std::string> candidates;
  std::string filter_body;

  Fixture(int nodes, int candidate_count) {
    GeneratedCluster cluster = GenerateCluster(nodes, 0.4, 42);
    std::vector<std::string> names;
    for (const Node& n : cluster.nodes) names.push_back(n.meta.name);
    service.UpsertNodes(std::move(cluster.nodes));
    service.AddRunningPods(cluster.running);
    const int step = std::max(1, nodes / candidate_count);
    for (int i = 0; i < nodes && static_cast<int>(candidates.size()) < candidate_count;
         i += step) {
      candidates.push_back(names[i]);
    }
    api = std::make_unique<ExtenderApi>(service, metrics, ExtenderApiOptions{});
    filter_body =
        R"({"Pod":{"metadata":{"name":"bench-pod","namespace":"bench","uid":"u-1"},)"
        R"("spec":{"containers":[{"name":"main","resources":{"requests":)"
        R"({"cpu":"8","memory":"64Gi","nvidia.com/gpu":"4"},"limits":{"nvidia.com/gpu":"4"}}}]}},)"
        R"("Nodes":null,"NodeNames":[)";
    for (size_t i = 0; i < candidates.size(); ++i) {
      filter_body += (i ? ",\"" : "\"") + candidates[i] + "\"";
    }
    filter_body += "]}";
  }
};

void BM_ServiceFilterPrioritize(benchmark::State& state) {
  Fixture fixture(state.range(0), state.range(1));
  Pod pod = MakeGpuPod("bench-pod", 4);
  Latencies latencies;
  for (auto _ : state) {
    auto start = Clock::now();
    FilterOutcome outcome = fixture.service.Filter(pod, fixture.candidates);
    auto scores = fixture.service.Prioritize(pod, outcome.passed);
    benchmark::DoNotOptimize(scores);
    latencies.Add(Clock::now() - start);
  }
  latencies.Publish(state);
}

void BM_HandlerFilterPrioritize(benchmark::State& state) {
  Fixture fixture(state.range(0), state.range(1));
  http::Request request{.method = "POST", .target = "/filter",
                        .body = fixture.filter_body};
  Latencies latencies;
  int64_t bytes = 0;
  for (auto _ : state) {
    auto start = Clock::now();
    http::Response filtered = fixture.api->Filter(request);
    http::Response scored = fixture.api->Prioritize(request);
    benchmark::DoNotOptimize(scored);
    latencies.Add(Clock::now() - start);
    bytes += 2 * static_cast<int64_t>(request.body.size());
  }
  state.SetBytesProcessed(bytes);
  latencies.Publish(state);
}

void BM_HttpFilterPrioritize(benchmark::State& state) {
  Fixture fixture(state.range(0), state.range(1));
  http::Router router;
  fixture.api->Register(router);
  auto server = http::Server::Start(
      http::ServerOptions{.listen = "127.0.0.1:0"},
      [&router](const http::Request& r) { return router.Handle(r); });
  if (!server.ok()) {
    state.SkipWithError("server did not start");
    return;
  }
  auto client = http::Client::Connect("127.0.0.1", (*server)->port());
  if (!client.ok()) {
    state.SkipWithError("client did not connect");
    return;
  }
  Latencies latencies;
  for (auto _ : state) {
    auto start = Clock::now();
    auto filtered = (*client)->Send("POST", "/filter", fixture.filter_body);
    auto scored = (*client)->Send("POST", "/prioritize", fixture.filter_body);
    if (!filtered.ok() || !scored.ok() || scored->status != 200) {
      state.SkipWithError("request failed");
      break;
    }
    latencies.Add(Clock::now() - start);
  }
  latencies.Publish(state);
}

// {nodes, candidate names}: the issue's size, and a tiny one for CI.
#define GPUSCHED_SIZES ->Args({5000, 500})->Args({50, 20})->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_ServiceFilterPrioritize) GPUSCHED_SIZES;
BENCHMARK(BM_HandlerFilterPrioritize) GPUSCHED_SIZES;
BENCHMARK(BM_HttpFilterPrioritize) GPUSCHED_SIZES;

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
