#include "scheduler/replay/live_scoring_policy.h"

#include <utility>

#include "scheduler/replay/best_node.h"

namespace gpusched::replay {

LiveScoringPolicy::LiveScoringPolicy(ScoringWeights weights, int shape_count,
                                     uint64_t seed)
    : weights_(std::move(weights)), shape_count_(shape_count), random_(seed) {}

void LiveScoringPolicy::Observe(const ReplayPod& pod) {
  weights_.ObservePod(pod.view);
}

double LiveScoringPolicy::ScoreOn(const ReplayPod& pod,
                                  const ReplayCluster& cluster, int node,
                                  uint64_t model_version) {
  const ReplayNode& state = cluster.node(node);
  CachedScore& cached =
      cache_[static_cast<size_t>(node) * shape_count_ + pod.shape_id];
  if (cached.node_version == state.version &&
      cached.model_version == model_version) {
    return cached.score;
  }
  const GpuAssignment gpus = cluster.PlanGpus(pod, node);
  cached = CachedScore{
      .node_version = state.version,
      .model_version = model_version,
      .score = weights_.Score(ScoreInput{pod.view, state.state, gpus})};
  return cached.score;
}

std::optional<Choice> LiveScoringPolicy::Choose(const ReplayPod& pod,
                                                const ReplayCluster& cluster) {
  cache_.resize(static_cast<size_t>(cluster.size()) * shape_count_);
  const uint64_t model_version = weights_.workload().version();
  BestNode<int> best(random_);
  for (int node = 0; node < cluster.size(); ++node) {
    if (!cluster.Fits(pod, node)) continue;
    best.Offer(ScoreOn(pod, cluster, node, model_version), node);
  }
  if (best.empty()) return std::nullopt;
  return Choice{.node = best.best(),
                .gpus = cluster.PlanGpus(pod, best.best())};
}

}  // namespace gpusched::replay
