#ifndef GPUSCHED_SCHEDULER_REPLAY_BEST_NODE_H_
#define GPUSCHED_SCHEDULER_REPLAY_BEST_NODE_H_

#include <cstdint>

#include "scheduler/replay/sampling.h"

namespace gpusched::replay {

// Keeps the highest score offered, breaking exact ties uniformly at random
// (reservoir sampling, seeded), as kube-scheduler's selectHost does among
// the nodes sharing the top score.
template <typename Candidate>
class BestNode {
 public:
  explicit BestNode(SeededRandom& random) : random_(random) {}

  void Offer(double score, const Candidate& candidate) {
    if (ties_ == 0 || score > score_) {
      score_ = score;
      best_ = candidate;
      ties_ = 1;
    } else if (score == score_) {
      ++ties_;
      if (random_.Below(ties_) == 0) best_ = candidate;
    }
  }
  bool empty() const { return ties_ == 0; }
  const Candidate& best() const { return best_; }

 private:
  SeededRandom& random_;
  double score_ = 0;
  Candidate best_{};
  uint64_t ties_ = 0;
};

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_BEST_NODE_H_
