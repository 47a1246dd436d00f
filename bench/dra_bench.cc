// Issue I §5: what DRA costs gpusched.
// - BM_DraSliceIngest/N/8: N ResourceSlices of a DGX H100 (8 devices each, as
//   NVIDIA's DRA driver publishes them) decoded from JSON and upserted into
//   the inventory; reports slices/s and the heap the inventory holds.
// - BM_DraFit/N/8 vs BM_DevicePluginFit/N/8: one pod asking for 2 GPUs judged
//   on N nodes, half their GPUs held: through a claim (selectors in the CEL
//   subset, FitDraDemand on each node's published devices) against the same
//   request as nvidia.com/gpu on device-plugin nodes (PlanGpus). The ratio
//   is the per-node cost of a DRA pod in filter.
// - BM_DraRefreshPass/N/8: every node's devices read once, as one pass of
//   the live refresher does after a DRA change.
#include <malloc.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "api/codec/dra_json.h"
#include "benchmark/benchmark.h"
#include "scheduler/dra_demand.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/gpu_fit.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/gpu_request.h"

namespace gpusched::bench {
namespace {

std::string DeviceJson(int index) {
  return absl::StrCat(
      R"({"name":"gpu-)", index, R"(","attributes":{)",
      R"("type":{"string":"gpu"},"index":{"int":)", index, "},",
      R"("minor":{"int":)", index, "},",
      R"("productName":{"string":"NVIDIA H100 80GB HBM3"},)",
      R"("uuid":{"string":"GPU-6c1b3f0e-0000-4000-8000-00000000000)", index,
      R"("},"driverVersion":{"version":"550.54.15"},)",
      R"("cudaComputeCapability":{"version":"9.0.0"},)",
      R"("resource.kubernetes.io/pcieRoot":{"string":"pci0000:)", 10 + index,
      R"("}},"capacity":{"memory":{"value":"80Gi"}}})");
}

std::string SliceJson(int node) {
  std::string devices;
  for (int i = 0; i < 8; ++i) {
    absl::StrAppend(&devices, i == 0 ? "" : ",", DeviceJson(i));
  }
  const std::string name = absl::StrCat("dgx-", node);
  return absl::StrCat(
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)",
      R"("metadata":{"name":")", name, R"(-gpu.nvidia.com"},)",
      R"("spec":{"driver":"gpu.nvidia.com","nodeName":")", name, R"(",)",
      R"("pool":{"name":")", name,
      R"(","generation":1,"resourceSliceCount":1},"devices":[)", devices,
      "]}}");
}

size_t HeapInUse() { return mallinfo2().uordblks; }

void BM_DraSliceIngest(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  std::vector<std::string> slices;
  for (int n = 0; n < nodes; ++n) slices.push_back(SliceJson(n));
  size_t held = 0;
  for (auto _ : state) {
    const size_t before = HeapInUse();
    auto inventory = std::make_unique<DraInventory>();
    for (const std::string& json : slices) {
      absl::StatusOr<ResourceSlice> slice = ResourceSliceFromJson(json);
      if (!slice.ok()) {
        state.SkipWithError(std::string(slice.status().message()).c_str());
        return;
      }
      inventory->UpsertSlice(*std::move(slice));
    }
    held = HeapInUse() - before;
    benchmark::DoNotOptimize(inventory);
    state.PauseTiming();
    inventory.reset();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * nodes);
  state.counters["slices/s"] =
      benchmark::Counter(static_cast<double>(nodes),
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["MiB"] = static_cast<double>(held) / (1 << 20);
  state.counters["KiB/node"] = static_cast<double>(held) / 1024 / nodes;
}
BENCHMARK(BM_DraSliceIngest)
    ->Args({50, 8})
    ->Args({5000, 8})
    ->Unit(benchmark::kMillisecond);

// N nodes of 8 H100s, GPUs 0-3 held by claims.
DraInventory HalfHeldCluster(int nodes) {
  DraInventory inventory;
  for (int n = 0; n < nodes; ++n) {
    inventory.UpsertSlice(*ResourceSliceFromJson(SliceJson(n)));
    ResourceClaim claim;
    claim.meta.namespace_name = "ml";
    claim.meta.name = absl::StrCat("held-", n);
    claim.allocated = true;
    const std::string pool = absl::StrCat("dgx-", n);
    for (int i = 0; i < 4; ++i) {
      claim.allocation.push_back(
          {"gpus", "gpu.nvidia.com", pool, absl::StrCat("gpu-", i)});
    }
    inventory.UpsertClaim(claim);
  }
  return inventory;
}

// What one pass of the live refresher reads before it compares with the
// model: every node's devices, built from the inventory (DraSync holds its
// lock for each node). Per pass at N nodes.
void BM_DraRefreshPass(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  const DraInventory inventory = HalfHeldCluster(nodes);
  std::vector<std::string> names = inventory.Nodes();
  for (auto _ : state) {
    size_t devices = 0;
    for (const std::string& node : names) {
      devices += inventory.NodeDevices(node).devices.size();
    }
    benchmark::DoNotOptimize(devices);
  }
  state.SetItemsProcessed(state.iterations() * nodes);
}
BENCHMARK(BM_DraRefreshPass)
    ->Args({50, 8})
    ->Args({5000, 8})
    ->Unit(benchmark::kMillisecond);

DraDemand TwoGpuDemand() {
  DraCatalog catalog;
  DeviceClass gpus;
  gpus.meta.name = "gpu.nvidia.com";
  gpus.selectors = {
      "device.driver == 'gpu.nvidia.com' && "
      "device.attributes['gpu.nvidia.com'].type == 'gpu'"};
  catalog.classes["gpu.nvidia.com"] = gpus;
  ResourceClaimTemplate tmpl;
  tmpl.meta = {.name = "two", .namespace_name = "ml"};
  tmpl.spec.requests.push_back(
      {"gpus", {{"gpus", "gpu.nvidia.com", {}, {}, 2, false, {}}}, false});
  catalog.templates["ml/two"] = tmpl;
  Pod pod;
  pod.meta = {.name = "worker", .namespace_name = "ml"};
  pod.resource_claims.push_back({"gpus", "", "two", ""});
  return DraDemandOf(pod, catalog);
}

void BM_DraFit(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  DraInventory inventory = HalfHeldCluster(nodes);
  std::vector<std::pair<std::string, DraNodeDevices>> published;
  for (const std::string& node : inventory.Nodes()) {
    published.emplace_back(node, inventory.NodeDevices(node));
  }
  const DraDemand demand = TwoGpuDemand();
  for (auto _ : state) {
    int fits = 0;
    for (const auto& [node, devices] : published) {
      fits += FitDraDemand(demand, node, devices).fits;
    }
    if (fits != nodes) state.SkipWithError("a node did not fit");
  }
  state.SetItemsProcessed(state.iterations() * nodes);
}
BENCHMARK(BM_DraFit)->Args({50, 8})->Args({5000, 8})->Unit(
    benchmark::kMicrosecond);

void BM_DevicePluginFit(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  std::vector<GpuInventory> inventories;
  for (int n = 0; n < nodes; ++n) {
    Node node;
    node.meta.name = absl::StrCat("dgx-", n);
    node.meta.labels["nvidia.com/gpu.product"] = "NVIDIA-H100-80GB-HBM3";
    node.capacity.Set(kNvidiaGpu, 8);
    node.allocatable.Set(kNvidiaGpu, 8);
    GpuInventory inventory = GpuInventory::FromNode(node);
    (void)inventory.Apply({.gpu_ids = {0, 1, 2, 3}, .milli_per_gpu = 1000},
                          "ml/held");
    inventories.push_back(std::move(inventory));
  }
  const GpuRequest request{.gpus = 2};
  for (auto _ : state) {
    int fits = 0;
    for (const GpuInventory& inventory : inventories) {
      fits += PlanGpus(request, inventory).verdict.fits();
    }
    if (fits != nodes) state.SkipWithError("a node did not fit");
  }
  state.SetItemsProcessed(state.iterations() * nodes);
}
BENCHMARK(BM_DevicePluginFit)
    ->Args({50, 8})
    ->Args({5000, 8})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpusched::bench

BENCHMARK_MAIN();
