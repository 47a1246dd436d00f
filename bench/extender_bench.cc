// The extender's hot paths on a generated cluster (default 5,000 nodes, 500
// candidate names), with the same rotation of pods (1, 2, 4, 8 GPUs, one
// MIG instance) and candidate samples as bench/loadgen:
//  - Service*: the domain service alone (no JSON);
//  - Handler*: JSON decode + service + JSON encode, i.e. server time
//    without the socket (HandlerFilterUncached: with no verdict
//    remembered, the worst case of the verdict cache);
//  - Http*: one client over real HTTP on loopback (bench/loadgen measures
//    many clients);
//  - *Nodes*: nodeCacheCapable=false, ExtenderArgs with 500 full Node
//    objects as kube-scheduler marshals them (~23 KB each: GFD/NFD labels,
//    annotations, managedFields, conditions, 50 images): MB/s of JSON
//    ingested by the decoder alone, by the handler with a model that
//    already knows the nodes (the steady state), and by the handler when
//    every node is new to it.
// Per-iteration p50/p99/p999 are reported as counters.
#include <chrono>
#include <memory>

#include "api/codec/extender_json.h"
#include "api/http/client.h"
#include "api/http/router.h"
#include "api/http/server.h"
#include "api/server/extender_api.h"
#include "bench/lib/cluster_generator.h"
#include "bench/lib/kube_json.h"
#include "bench/lib/latency.h"
#include "benchmark/benchmark.h"
#include "spdlog/spdlog.h"

namespace gpusched::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCandidateSets = 16;

struct Fixture {
  ExtenderService service;
  Metrics metrics;
  std::unique_ptr<ExtenderApi> api;
  GeneratedCluster cluster;
  std::vector<Pod> pods = PendingPodMix();
  std::vector<std::vector<std::string>> candidates;
  std::vector<http::Request> requests;  // one per candidate set

  Fixture(int nodes, int candidate_count) {
    spdlog::set_level(spdlog::level::warn);
    cluster = GenerateCluster(nodes, 0.4, 42);
    candidates = CandidateSets(NamesOf(cluster.nodes), candidate_count,
                               kCandidateSets, 7);
    service.UpsertNodes(cluster.nodes);
    service.AddRunningPods(cluster.running);
    api = std::make_unique<ExtenderApi>(service, metrics, ExtenderApiOptions{});
    for (size_t i = 0; i < candidates.size(); ++i) {
      requests.push_back(http::Request{
          .method = "POST",
          .target = "/filter",
          .body = ExtenderArgsWithNames(PodFor(i), candidates[i])});
    }
  }

  const Pod& PodFor(size_t i) const { return pods[i % pods.size()]; }

  // ExtenderArgs with the full Node objects of candidate set 0.
  std::string NodesBody() const {
    std::vector<std::string> json;
    for (const std::string& name : candidates[0]) {
      const int index = std::atoi(name.c_str() + name.rfind('-') + 1);
      json.push_back(KubeNodeJson(cluster.nodes[index], index));
    }
    return ExtenderArgsWithNodes(pods[2], json);
  }
};

void BM_ServiceFilterPrioritize(benchmark::State& state) {
  Fixture fixture(state.range(0), state.range(1));
  Latencies latencies;
  size_t i = 0;
  for (auto _ : state) {
    const Pod& pod = fixture.PodFor(i);
    const auto& names = fixture.candidates[i++ % kCandidateSets];
    auto start = Clock::now();
    FilterOutcome outcome = fixture.service.Filter(pod, names);
    auto scores = fixture.service.Prioritize(pod, outcome.passed);
    benchmark::DoNotOptimize(scores);
    latencies.Add(Clock::now() - start);
  }
  latencies.Publish(state);
}

// Server time without the socket: filter, or filter then prioritize (on
// the same 500 names).
void HandlerLoop(benchmark::State& state, bool prioritize) {
  Fixture fixture(state.range(0), state.range(1));
  Latencies latencies;
  int64_t bytes = 0;
  size_t i = 0;
  for (auto _ : state) {
    const http::Request& request = fixture.requests[i++ % kCandidateSets];
    auto start = Clock::now();
    http::Response filtered = fixture.api->Filter(request);
    benchmark::DoNotOptimize(filtered);
    if (prioritize) {
      http::Response scored = fixture.api->Prioritize(request);
      benchmark::DoNotOptimize(scored);
    }
    latencies.Add(Clock::now() - start);
    bytes += (prioritize ? 2 : 1) * static_cast<int64_t>(request.body.size());
  }
  state.SetBytesProcessed(bytes);
  latencies.Publish(state);
}

void BM_HandlerFilter(benchmark::State& state) { HandlerLoop(state, false); }

// The filter with nothing remembered: every iteration asks for a pod shape
// never seen before (its CPU request differs), so every verdict is
// computed, as after a change to every candidate node. The body is built
// with the timer paused.
void BM_HandlerFilterUncached(benchmark::State& state) {
  Fixture fixture(state.range(0), state.range(1));
  Latencies latencies;
  size_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Pod pod = fixture.PodFor(i);
    pod.containers[0].requests.Set(kCpu, 100 + static_cast<int64_t>(i));
    const http::Request request{
        .method = "POST",
        .target = "/filter",
        .body =
            ExtenderArgsWithNames(pod, fixture.candidates[i % kCandidateSets])};
    ++i;
    state.ResumeTiming();
    auto start = Clock::now();
    http::Response filtered = fixture.api->Filter(request);
    benchmark::DoNotOptimize(filtered);
    latencies.Add(Clock::now() - start);
  }
  latencies.Publish(state);
}
void BM_HandlerFilterPrioritize(benchmark::State& state) {
  HandlerLoop(state, true);
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
  size_t i = 0;
  for (auto _ : state) {
    const std::string& body = fixture.requests[i++ % kCandidateSets].body;
    auto start = Clock::now();
    auto filtered = (*client)->Send("POST", "/filter", body);
    auto scored = (*client)->Send("POST", "/prioritize", body);
    if (!filtered.ok() || !scored.ok() || scored->status != 200) {
      state.SkipWithError("request failed");
      break;
    }
    latencies.Add(Clock::now() - start);
  }
  latencies.Publish(state);
}

// nodeCacheCapable=false: the wire decoder alone.
void BM_DecodeArgsWithNodes(benchmark::State& state) {
  Fixture fixture(state.range(0), state.range(1));
  const std::string body = fixture.NodesBody();
  Latencies latencies;
  for (auto _ : state) {
    auto start = Clock::now();
    auto args = DecodeExtenderArgs(body);
    if (!args.ok() || args->nodes.size() != fixture.candidates[0].size()) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(args);
    latencies.Add(Clock::now() - start);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(body.size()));
  state.counters["request_MB"] = body.size() / 1e6;
  latencies.Publish(state);
}

// nodeCacheCapable=false through the filter handler. Unchanged: the model
// already has these nodes at this resourceVersion, as when kube-scheduler
// resends them. Changed: every request carries a new resourceVersion of
// every node, so the handler decodes all of them and rebuilds their state.
void FilterWithNodes(benchmark::State& state, bool changed) {
  Fixture fixture(state.range(0), state.range(1));
  http::Request request{
      .method = "POST", .target = "/filter", .body = fixture.NodesBody()};
  const std::string old_version = R"("resourceVersion":"1")";
  std::vector<size_t> digits;
  for (size_t p = request.body.find(old_version);
       changed && p != std::string::npos;
       p = request.body.find(old_version, p + 1)) {
    digits.push_back(p + old_version.size() - 2);
  }
  Latencies latencies;
  int version = 1;
  for (auto _ : state) {
    version = version % 9 + 1;
    for (size_t p : digits) request.body[p] = static_cast<char>('0' + version);
    auto start = Clock::now();
    http::Response filtered = fixture.api->Filter(request);
    if (filtered.status != 200) {
      state.SkipWithError("filter failed");
      break;
    }
    benchmark::DoNotOptimize(filtered);
    latencies.Add(Clock::now() - start);
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(request.body.size()));
  latencies.Publish(state);
}

void BM_HandlerFilterNodes(benchmark::State& state) {
  FilterWithNodes(state, false);
}
void BM_HandlerFilterNodesChanged(benchmark::State& state) {
  FilterWithNodes(state, true);
}

// {nodes, candidate names}: the issue's size, and a tiny one for CI.
#define GPUSCHED_SIZES \
  ->Args({5000, 500})->Args({50, 20})->Unit(benchmark::kMicrosecond)
BENCHMARK(BM_ServiceFilterPrioritize) GPUSCHED_SIZES;
BENCHMARK(BM_HandlerFilter) GPUSCHED_SIZES;
BENCHMARK(BM_HandlerFilterUncached) GPUSCHED_SIZES;
BENCHMARK(BM_HandlerFilterPrioritize) GPUSCHED_SIZES;
BENCHMARK(BM_HttpFilterPrioritize) GPUSCHED_SIZES;
BENCHMARK(BM_DecodeArgsWithNodes) GPUSCHED_SIZES;
BENCHMARK(BM_HandlerFilterNodes) GPUSCHED_SIZES;
BENCHMARK(BM_HandlerFilterNodesChanged) GPUSCHED_SIZES;

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
