#include "scheduler/replay/baseline_policies.h"

#include <algorithm>
#include <utility>

#include "scheduler/replay/best_node.h"
#include "scheduler/replay/sampling.h"

namespace gpusched::replay {
namespace {

double Ratio(double part, double whole) { return whole > 0 ? part / whole : 0; }

int64_t FreeGpuMilli(const ReplayNode& node) {
  int64_t free = 0;
  for (int milli : node.free_milli) free += milli;
  return free;
}

// How a baseline rates one node the pod fits; higher is better.
using NodeScore = double (*)(const ReplayPod& pod, const ReplayCluster& cluster,
                             int node);

// A baseline that scores each node the pod fits and takes the best, on the
// GPUs ReplayCluster::PlanGpus picks there.
class NodeScoringPolicy : public PlacementPolicy {
 public:
  NodeScoringPolicy(NodeScore score, uint64_t seed)
      : score_(score), random_(seed) {}

  std::optional<Choice> Choose(const ReplayPod& pod,
                               const ReplayCluster& cluster) override {
    BestNode<int> best(random_);
    for (int node = 0; node < cluster.size(); ++node) {
      if (cluster.Fits(pod, node)) best.Offer(score_(pod, cluster, node), node);
    }
    if (best.empty()) return std::nullopt;
    return Choice{.node = best.best(),
                  .gpus = cluster.PlanGpus(pod, best.best())};
  }

 private:
  NodeScore score_;
  SeededRandom random_;
};

// Every node ties, so the tie-break alone picks: uniformly at random.
double RandomScore(const ReplayPod&, const ReplayCluster&, int) { return 0; }

double BestFitScore(const ReplayPod& pod, const ReplayCluster& cluster,
                    int index) {
  const ReplayNode& node = cluster.node(index);
  const TracePod& trace = *pod.trace;
  const double cpu_left =
      Ratio(node.free_cpu - trace.cpu_milli, cluster.max_cpu_capacity());
  const double gpu_left = Ratio(FreeGpuMilli(node) - trace.GpuMilliRequest(),
                                cluster.max_gpu_milli());
  return 1.0 - (0.5 * cpu_left + 0.5 * gpu_left);
}

// Tiers: idle nodes 0..33 (fewer GPUs better), whole GPUs on used nodes
// 33..50 (fewer taken better), shared GPUs only 50..100 (less free better).
double PackingScore(const ReplayPod& pod, const ReplayCluster& cluster,
                    int index) {
  const ReplayNode& node = cluster.node(index);
  if (pod.trace->num_gpu == 0) return 0;  // CPU-only pods: no preference
  const int gpus = static_cast<int>(node.free_milli.size());
  if (node.whole_free_gpus == gpus) return 33.0 - gpus;
  int whole_taken = 0;
  double free_percent_on_shared = 0;
  for (int gpu : cluster.PlanGpus(pod, index).gpu_ids) {
    const int free = node.free_milli[gpu];
    if (free == kTraceMilliPerGpu) ++whole_taken;
    free_percent_on_shared += free * 100.0 / kTraceMilliPerGpu;
  }
  if (whole_taken > 0) return std::max(33.0, 50.0 - whole_taken);
  return std::max(50.0, 100.0 - free_percent_on_shared / 10);
}

// Tetris' alignment, where a larger dot product scores lower.
class DotProductPolicy : public PlacementPolicy {
 public:
  explicit DotProductPolicy(uint64_t seed) : random_(seed) {}

  std::optional<Choice> Choose(const ReplayPod& pod,
                               const ReplayCluster& cluster) override {
    BestNode<std::pair<int, int>> best(random_);  // (node, share GPU or -1)
    for (int node = 0; node < cluster.size(); ++node) {
      if (!cluster.Fits(pod, node)) continue;
      if (pod.trace->IsShare()) {
        OfferShareGpus(pod, cluster, node, best);
      } else {
        best.Offer(WholeScore(pod, cluster.node(node)), {node, -1});
      }
    }
    if (best.empty()) return std::nullopt;
    const auto [node, gpu] = best.best();
    if (gpu < 0) {
      return Choice{.node = node, .gpus = cluster.PlanGpus(pod, node)};
    }
    return Choice{.node = node,
                  .gpus = GpuAssignment{.gpu_ids = {gpu},
                                        .milli_per_gpu = pod.trace->gpu_milli}};
  }

 private:
  static double CpuTerm(const ReplayPod& pod, const ReplayNode& node) {
    return Ratio(node.free_cpu, node.cpu_capacity) *
           Ratio(pod.trace->cpu_milli, node.cpu_capacity);
  }

  static double WholeScore(const ReplayPod& pod, const ReplayNode& node) {
    const double capacity =
        static_cast<double>(node.free_milli.size()) * kTraceMilliPerGpu;
    const double gpu_term =
        Ratio(static_cast<double>(FreeGpuMilli(node)), capacity) *
        Ratio(static_cast<double>(pod.trace->GpuMilliRequest()), capacity);
    return 1.0 - (CpuTerm(pod, node) + gpu_term) / 2;
  }

  void OfferShareGpus(const ReplayPod& pod, const ReplayCluster& cluster,
                      int index, BestNode<std::pair<int, int>>& best) {
    const ReplayNode& node = cluster.node(index);
    const int milli = pod.trace->gpu_milli;
    for (int gpu = 0; gpu < static_cast<int>(node.free_milli.size()); ++gpu) {
      const int free = node.free_milli[gpu];
      if (free < milli) continue;
      const double gpu_term =
          Ratio(free, kTraceMilliPerGpu) * Ratio(milli, kTraceMilliPerGpu);
      best.Offer(1.0 - (CpuTerm(pod, node) + gpu_term) / 2, {index, gpu});
    }
  }

  SeededRandom random_;
};

}  // namespace

std::unique_ptr<PlacementPolicy> MakeRandomPolicy(uint64_t seed) {
  return std::make_unique<NodeScoringPolicy>(&RandomScore, seed);
}
std::unique_ptr<PlacementPolicy> MakeBestFitPolicy(uint64_t seed) {
  return std::make_unique<NodeScoringPolicy>(&BestFitScore, seed);
}
std::unique_ptr<PlacementPolicy> MakeDotProductPolicy(uint64_t seed) {
  return std::make_unique<DotProductPolicy>(seed);
}
std::unique_ptr<PlacementPolicy> MakePackingPolicy(uint64_t seed) {
  return std::make_unique<NodeScoringPolicy>(&PackingScore, seed);
}

}  // namespace gpusched::replay
