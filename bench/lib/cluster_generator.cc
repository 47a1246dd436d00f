#include "bench/lib/cluster_generator.h"

#include <algorithm>
#include <random>

#include "absl/strings/str_cat.h"

namespace gpusched::bench {
namespace {

struct Shape {
  const char* prefix;
  const char* product;
  int gpus;
  int replicas;
  bool mig;
  int64_t cpu;
  int64_t memory_gib;
};

constexpr Shape kDgx{"dgx", "NVIDIA-H100-80GB-HBM3", 8, 1, false, 224, 2048};
constexpr Shape kA100{"a100", "NVIDIA-A100-SXM4-40GB", 4, 1, true, 256, 1024};
constexpr Shape kL4{"l4", "NVIDIA-L4", 4, 1, false, 64, 512};
constexpr Shape kL4Shared{"l4s", "NVIDIA-L4-SHARED", 4, 4, false, 64, 512};
constexpr Shape kT4{"t4", "Tesla-T4", 2, 1, false, 48, 192};

const Shape& ShapeFor(int i) {
  switch (i % 20) {
    case 0:
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 7:
      return kDgx;
    case 8:
    case 9:
    case 10:
    case 11:
    case 12:
      return kA100;
    case 13:
    case 14:
      return kL4;
    case 15:
    case 16:
      return kL4Shared;
    default:
      return kT4;
  }
}

Node MakeNode(int i, const Shape& shape) {
  Node node;
  node.meta.name = std::string(shape.prefix) + "-" + std::to_string(i);
  node.meta.resource_version = "1";
  const int rack = i / 16;
  node.meta.labels = {
      {"kubernetes.io/hostname", node.meta.name},
      {"topology.kubernetes.io/zone", "zone-" + std::to_string(rack / 32)},
      {"gpusched.io/block", "block-" + std::to_string(rack / 8)},
      {"gpusched.io/rack", "rack-" + std::to_string(rack)},
      {"nvidia.com/gpu.product", shape.product},
      {"nvidia.com/gpu.count",
       std::to_string(shape.gpus * (shape.mig ? 2 : 1))},
      {"nvidia.com/gpu.replicas", std::to_string(shape.replicas)},
  };
  if (shape.replicas > 1) {
    node.meta.labels["nvidia.com/gpu.sharing-strategy"] = "time-slicing";
  }
  node.allocatable.Set(kCpu, shape.cpu * 1000);
  node.allocatable.Set(kMemory, shape.memory_gib << 30);
  node.allocatable.Set(kPods, 110);
  node.allocatable.Set(kNvidiaGpu, shape.gpus * shape.replicas);
  if (shape.mig) {
    node.meta.labels["nvidia.com/mig.strategy"] = "mixed";
    node.allocatable.Set("nvidia.com/mig-1g.5gb", 8);
    node.allocatable.Set("nvidia.com/mig-2g.10gb", 4);
    node.allocatable.Set("nvidia.com/mig-3g.20gb", 4);
  }
  node.capacity = node.allocatable;
  return node;
}

}  // namespace

Pod MakeGpuPod(const std::string& name, int gpus) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_name = "bench";
  pod.meta.uid = "uid-" + name;
  Container main;
  main.name = "main";
  main.requests.Set(kCpu, 8000);
  main.requests.Set(kMemory, int64_t{64} << 30);
  if (gpus > 0) main.requests.Set(kNvidiaGpu, gpus);
  pod.containers.push_back(main);
  return pod;
}

GeneratedCluster GenerateCluster(int node_count, double fill, uint64_t seed) {
  GeneratedCluster cluster;
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> coin(0, 1);
  for (int i = 0; i < node_count; ++i) {
    const Shape& shape = ShapeFor(i);
    cluster.nodes.push_back(MakeNode(i, shape));
    // Occupy a random number of GPUs so that the fit check sees a mix.
    int used = 0;
    for (int g = 0; g < shape.gpus; ++g) used += coin(random) < fill ? 1 : 0;
    if (used == 0 || shape.replicas > 1) continue;
    Pod pod = MakeGpuPod("running-" + std::to_string(i), used);
    pod.node_name = cluster.nodes.back().meta.name;
    pod.phase = PodPhase::kRunning;
    cluster.running.push_back(std::move(pod));
  }
  return cluster;
}

std::vector<Pod> PendingPodMix() {
  std::vector<Pod> pods;
  for (int gpus : {1, 2, 4, 8}) {
    pods.push_back(MakeGpuPod(absl::StrCat("pending-", gpus, "gpu"), gpus));
  }
  Pod mig = MakeGpuPod("pending-mig", 0);
  mig.containers[0].requests.Set("nvidia.com/mig-1g.5gb", 1);
  pods.push_back(std::move(mig));
  return pods;
}

std::vector<std::vector<std::string>> CandidateSets(
    const std::vector<std::string>& names, int count, int sets, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> pool = names;
  const size_t take = std::min<size_t>(count, pool.size());
  for (int s = 0; s < sets; ++s) {
    std::shuffle(pool.begin(), pool.end(), random);
    out.emplace_back(pool.begin(), pool.begin() + take);
  }
  return out;
}

std::vector<std::string> NamesOf(const std::vector<Node>& nodes) {
  std::vector<std::string> names;
  names.reserve(nodes.size());
  for (const Node& node : nodes) names.push_back(node.meta.name);
  return names;
}

}  // namespace gpusched::bench
