#ifndef GPUSCHED_SCHEDULER_SCORING_H_
#define GPUSCHED_SCHEDULER_SCORING_H_

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/fragmentation.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"

namespace gpusched {

// A node the pod fits, with the devices it would get there.
struct ScoreInput {
  const PodView& pod;
  const NodeState& node;
  const GpuAssignment& assignment;
  // The workload's task shapes for the fragmentation scorer; empty:
  // DefaultTaskShapes(). ScoringWeights fills it from what it has learned.
  std::span<const TaskShape> shapes = {};
};

// A named scorer returning 0 (worst) .. 100 (best).
struct Scorer {
  std::string_view name;
  int (*score)(const ScoreInput& input);
  std::string_view description;
  // The same score before rounding, for scorers whose rounding would hide
  // real differences between nodes; null: `score` is already exact.
  double (*precise)(const ScoreInput& input) = nullptr;
};

// The registry: every scorer, in a fixed order.
std::span<const Scorer> Scorers();
const Scorer* FindScorer(std::string_view name);

int BinpackScore(const ScoreInput& input);
int SpreadScore(const ScoreInput& input);
int TopologyScore(const ScoreInput& input);
int FragmentationScore(const ScoreInput& input);
double FragmentationScorePrecise(const ScoreInput& input);

// Weights by scorer name. Defaults: binpack 1, spread 0, topology 2,
// fragmentation 3 — whole-GPU pods pack onto partly used nodes so whole
// nodes stay free for large gangs, and multi-GPU pods get their best links.
//
// Each set of weights carries the workload model its fragmentation scorer
// scores against (TaskShapeModel); copies share it, so the pods one copy
// observes teach all of them.
class ScoringWeights {
 public:
  static ScoringWeights Defaults();
  // "binpack=1,topology=2": unnamed scorers get 0. Names must be known,
  // weights integers 0..100, at least one positive.
  static absl::StatusOr<ScoringWeights> Parse(std::string_view text);

  // Weighted mean of the scorers, 0..100: Score() rounded down.
  int Combined(const ScoreInput& input) const;
  // Weighted mean of the scorers' precise scores, 0..100. Nodes that
  // Combined() ties may differ here; a caller choosing one node should use
  // this.
  double Score(const ScoreInput& input) const;

  // Teaches the workload model one pod's shape (pods without GPUs and MIG
  // pods are ignored). Thread-safe.
  void ObservePod(const PodView& pod) const;
  const TaskShapeModel& workload() const { return *workload_; }
  const std::vector<std::pair<const Scorer*, int>>& weights() const {
    return weights_;
  }
  std::string ToString() const;

 private:
  std::vector<std::pair<const Scorer*, int>> weights_;
  std::shared_ptr<TaskShapeModel> workload_ =
      std::make_shared<TaskShapeModel>();
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_SCORING_H_
