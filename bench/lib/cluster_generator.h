#ifndef GPUSCHED_BENCH_LIB_CLUSTER_GENERATOR_H_
#define GPUSCHED_BENCH_LIB_CLUSTER_GENERATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/k8s_objects.h"

namespace gpusched::bench {

// A generated cluster shaped like the fleets gpusched is for: 40% DGX H100
// (8 GPUs, NVSwitch), 25% A100-40GB with MIG mixed (4 whole GPUs + balanced
// MIG on the other 4), 20% L4 (4 GPUs, half of them time-sliced x4), 15% T4
// (2 GPUs). Nodes carry GFD labels and zone/block/rack labels (16 nodes a
// rack, 8 racks a block, 4 blocks a zone). Deterministic for a seed.
struct GeneratedCluster {
  std::vector<Node> nodes;
  std::vector<Pod> running;  // already placed, ~`fill` of GPUs in use
};

GeneratedCluster GenerateCluster(int node_count, double fill, uint64_t seed);

// A pending pod asking for `gpus` whole GPUs (and some CPU and memory).
Pod MakeGpuPod(const std::string& name, int gpus);

// The pending pods a request asks about, in rotation: 1, 2, 4 and 8 whole
// GPUs and one MIG 1g.5gb instance, so every node shape sees passes and
// failures of every kind.
std::vector<Pod> PendingPodMix();

// `sets` candidate name lists of `count` names each, sampled without
// replacement from `names` (deterministic for `seed`): kube-scheduler hands
// the extender a sample of the feasible nodes, of every shape.
std::vector<std::vector<std::string>> CandidateSets(
    const std::vector<std::string>& names, int count, int sets, uint64_t seed);

std::vector<std::string> NamesOf(const std::vector<Node>& nodes);

}  // namespace gpusched::bench

#endif  // GPUSCHED_BENCH_LIB_CLUSTER_GENERATOR_H_
