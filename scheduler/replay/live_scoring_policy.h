#ifndef GPUSCHED_SCHEDULER_REPLAY_LIVE_SCORING_POLICY_H_
#define GPUSCHED_SCHEDULER_REPLAY_LIVE_SCORING_POLICY_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "scheduler/replay/placement_policy.h"
#include "scheduler/replay/sampling.h"
#include "scheduler/scoring.h"

namespace gpusched::replay {

// The live extender's choice: every node the pod fits is scored with
// ScoringWeights::Score on the devices the allocator picks there, exactly
// as ExtenderService::Prioritize scores it, and the best node wins (a
// seeded random one among equals, as kube-scheduler picks). The pods it is
// asked about teach the weights' workload model, as ExtenderService::Filter
// does.
//
// Scores are cached per (node, pod shape) and dropped when the node changes
// or the workload model republishes: a score is a pure function of those,
// and a replay places one pod at a time, so almost every score is a hit.
class LiveScoringPolicy : public PlacementPolicy {
 public:
  LiveScoringPolicy(ScoringWeights weights, int shape_count, uint64_t seed);

  void Observe(const ReplayPod& pod) override;
  std::optional<Choice> Choose(const ReplayPod& pod,
                               const ReplayCluster& cluster) override;

 private:
  struct CachedScore {
    uint64_t node_version = 0;  // 0: never computed (versions start at 1)
    uint64_t model_version = 0;
    double score = 0;
  };
  double ScoreOn(const ReplayPod& pod, const ReplayCluster& cluster, int node,
                 uint64_t model_version);

  ScoringWeights weights_;
  int shape_count_;
  SeededRandom random_;
  std::vector<CachedScore> cache_;  // [node * shape_count_ + shape]
};

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_LIVE_SCORING_POLICY_H_
