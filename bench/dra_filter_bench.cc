// Issue I §5: filter latency for a pod whose GPUs come through DRA against
// the same request on device-plugin nodes, through ExtenderService::Filter
// as the extender runs it (5,000 candidate nodes: kube-scheduler sends
// every feasible node when percentageOfNodesToScore is 100).
//
// BM_FilterGpus/N/mode, N nodes of 8 H100s with GPUs 0-3 in use:
//   mode 0: device plugin, the pod asks nvidia.com/gpu: 2;
//   mode 1: DRA (ResourceSlices), the pod's claim template asks 2 devices
//           of class gpu.nvidia.com (charged as nvidia.com/gpu: 2);
//   mode 2: as 1, with a selector of the request's own (productName), so
//           every node also runs FitDraDemand on its published devices.
// Each iteration asks for a different CPU amount, so no verdict is reused
// from the filter's cache: the figures are the per-node cost. p50/p99 per
// Filter call are counters; the ratio mode 1 or 2 over mode 0 is the cost
// of DRA.
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/lib/latency.h"
#include "benchmark/benchmark.h"
#include "scheduler/dra_demand.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/dra_quota.h"
#include "scheduler/extender_service.h"

namespace gpusched::bench {
namespace {

using Clock = std::chrono::steady_clock;

std::shared_ptr<const DraNodeDevices> HalfHeldDevices(int node) {
  auto dra = std::make_shared<DraNodeDevices>();
  const std::string pool = absl::StrCat("dgx-", node);
  for (int i = 0; i < 8; ++i) {
    DraDeviceState gpu{.driver = "gpu.nvidia.com", .pool = pool};
    gpu.device.name = absl::StrCat("gpu-", i);
    gpu.device.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString,
                                                    "gpu"};
    gpu.device.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt,
                                                     "", i};
    gpu.device.attributes["gpu.nvidia.com/productName"] = {
        DraAttribute::Kind::kString, "NVIDIA H100 80GB HBM3"};
    if (i < 4) gpu.claim = absl::StrCat("ml/held-", node);
    dra->devices.push_back(std::move(gpu));
  }
  return dra;
}

Node MakeNode(int index, bool dra) {
  Node node;
  node.meta.name = absl::StrCat("dgx-", index);
  node.meta.resource_version = "1";
  node.meta.labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3";
  node.allocatable.Set("cpu", 224000);
  node.allocatable.Set("memory", int64_t{2} << 40);
  node.allocatable.Set("pods", 110);
  node.capacity = node.allocatable;
  if (dra) {
    node.dra_devices = HalfHeldDevices(index);
  } else {
    node.capacity.Set(kNvidiaGpu, 8);
    node.allocatable.Set(kNvidiaGpu, 8);
  }
  return node;
}

DraCatalog TwoGpuCatalog(bool own_selector) {
  DraCatalog catalog;
  DeviceClass gpus;
  gpus.meta.name = "gpu.nvidia.com";
  gpus.selectors = {
      "device.driver == 'gpu.nvidia.com' && "
      "device.attributes['gpu.nvidia.com'].type == 'gpu'"};
  catalog.classes["gpu.nvidia.com"] = gpus;
  ResourceClaimTemplate two;
  two.meta = {.name = "two", .namespace_name = "ml"};
  DraRequestAlternative alt{
      .name = "gpus", .device_class = "gpu.nvidia.com", .count = 2};
  if (own_selector) {
    alt.selectors = {
        "device.attributes['gpu.nvidia.com'].productName == "
        "'NVIDIA H100 80GB HBM3'"};
  }
  two.spec.requests.push_back({.name = "gpus", .alternatives = {alt}});
  catalog.templates["ml/two"] = two;
  return catalog;
}

// The pod of iteration `i`, as the sync would attach its claims.
Pod PodFor(int mode, size_t i) {
  Pod pod;
  pod.meta = {.name = absl::StrCat("worker-", i),
              .namespace_name = "ml",
              .uid = absl::StrCat("uid-", i)};
  Container main{.name = "main"};
  main.requests.Set("cpu", 1000 + static_cast<int64_t>(i % 4096));
  if (mode == 0) main.requests.Set(kNvidiaGpu, 2);
  pod.containers.push_back(main);
  if (mode == 0) return pod;
  pod.resource_claims.push_back({"gpus", "", "two", ""});
  static const DraCatalog kPlain = TwoGpuCatalog(false);
  static const DraCatalog kSelective = TwoGpuCatalog(true);
  const DraCatalog& catalog = mode == 1 ? kPlain : kSelective;
  pod.claim_requests = ChargeClaims(pod, catalog, {}).requests;
  DraDemand demand = DraDemandOf(pod, catalog);
  if (!CountSaysAll(demand)) {
    pod.dra_demand = std::make_shared<const DraDemand>(std::move(demand));
  }
  return pod;
}

void BM_FilterGpus(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const int mode = static_cast<int>(state.range(1));
  ExtenderService service;
  std::vector<Node> all;
  std::vector<std::string> names;
  for (int n = 0; n < nodes; ++n) {
    all.push_back(MakeNode(n, mode != 0));
    names.push_back(all.back().meta.name);
  }
  service.UpsertNodes(all);
  if (mode == 0) {  // GPUs 0-3 held by pods, as the claims hold them above
    std::vector<Pod> held;
    for (int n = 0; n < nodes; ++n) {
      Pod pod = PodFor(0, n);
      pod.meta.name = absl::StrCat("held-", n);
      pod.meta.uid = absl::StrCat("held-uid-", n);
      pod.containers[0].requests.Set(kNvidiaGpu, 4);
      pod.node_name = names[n];
      held.push_back(std::move(pod));
    }
    service.AddRunningPods(held);
  }
  Latencies latencies;
  size_t i = 0;
  for (auto _ : state) {
    const Pod pod = PodFor(mode, i++);
    auto start = Clock::now();
    FilterOutcome outcome = service.Filter(pod, names);
    latencies.Add(Clock::now() - start);
    if (outcome.passed.size() != names.size()) {
      state.SkipWithError("a node did not pass");
      break;
    }
  }
  latencies.Publish(state);
  state.SetItemsProcessed(state.iterations() * nodes);
}
BENCHMARK(BM_FilterGpus)
    ->ArgsProduct({{50, 5000}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
