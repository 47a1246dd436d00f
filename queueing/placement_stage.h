// Gang placement, the admission stage that searches nodes: what it keeps
// between searches (sorted nodes, nodes per flavor label set, node score
// memo), and what stays true while only admissions happen (placements that
// failed, upper bounds on free GPUs), dropped when capacity is freed.
#ifndef GPUSCHED_QUEUEING_PLACEMENT_STAGE_H_
#define GPUSCHED_QUEUEING_PLACEMENT_STAGE_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "queueing/gang_placer.h"
#include "queueing/reason_code.h"
#include "queueing/workload.h"
#include "scheduler/cluster_model.h"
#include "scheduler/scoring.h"

namespace gpusched {

class GangPlacementStage {
 public:
  // Every call names the model it searches (and the weights it scores
  // with): the caches below are kept per node generation of that model.
  GangPlacementStage() = default;

  // The model's nodes by name, kept while no node comes or goes.
  const std::vector<const NodeState*>* SortedNodes(const ClusterModel& model);
  // SortedNodes() filtered by a flavor's node labels, per label set.
  const std::vector<const NodeState*>* NodesWithLabels(
      const ClusterModel& model, const StringMap& labels);
  // Member verdicts and scores per node generation, for every search.
  NodeScoreMemo* ScoreMemo(const ScoringWeights& weights);

  // PlaceGang, unless a placement with the same `memo_key` failed since
  // capacity was last freed (then its verdict, worded for `owner`). Inside
  // a preemption trial the cluster is changed: search, remember nothing.
  GangPlacement PlaceOrRecall(ClusterModel& model, const std::string& owner,
                              std::string memo_key,
                              const GangPlacementRequest& request);
  // PlaceGang, neither counted nor remembered (pods outside queues).
  GangPlacement Place(ClusterModel& model,
                      const GangPlacementRequest& request) {
    return PlaceGang(model, request);
  }

  // A necessary condition for placing `members` once `freeing` are gone,
  // from counts alone: the GPU capacity they free plus an upper bound on
  // what is free elsewhere can hold the largest member and the whole
  // demand. Counts as a search (its verdict depends on free capacity).
  bool CouldHold(const ClusterModel& model,
                 const std::vector<const Pod*>& members,
                 const std::vector<const Workload*>& freeing);

  // Searches so far: an attempt that never searched failed on quota alone.
  int64_t searches() const { return searches_; }

  // Forgets what depended on free capacity.
  void ForgetCapacityFacts();
  void ForgetFailures() { failures_.clear(); }
  // Since when (engine events, reservation changes) the facts hold.
  struct Since {
    size_t events = 0;
    uint64_t reservations = 0;
  };
  const Since& facts_since() const { return since_; }
  void set_facts_since(Since since) { since_ = since; }

  // While alive, searches are preemption trials (see PlaceOrRecall).
  class PreemptionTrialScope {
   public:
    explicit PreemptionTrialScope(GangPlacementStage* stage) : stage_(stage) {
      stage_->in_trial_ = true;
    }
    ~PreemptionTrialScope() { stage_->in_trial_ = false; }
    PreemptionTrialScope(const PreemptionTrialScope&) = delete;
    PreemptionTrialScope& operator=(const PreemptionTrialScope&) = delete;

   private:
    GangPlacementStage* stage_;
  };
  bool in_preemption_trial() const { return in_trial_; }

 private:
  std::vector<const NodeState*> sorted_nodes_;
  uint64_t sorted_nodes_generation_ = UINT64_MAX;
  std::map<std::string, std::vector<const NodeState*>> nodes_with_labels_;
  uint64_t nodes_with_labels_generation_ = UINT64_MAX;
  // Bounded: a server sees ever new shapes (names in annotations).
  NodeScoreMemo score_memo_{size_t{1} << 20};
  uint64_t score_memo_model_version_ = 0;
  // Placements that failed since capacity was last freed, by placement
  // signature and flavors: queues with the same shapes share one failed
  // search of the nodes (key -> (workload that failed, why)).
  std::map<std::string, std::pair<std::string, WaitReason>> failures_;
  // A kNoFit verdict when counts alone rule the gang out (CouldHold with
  // nothing freed), else an empty reason: search.
  GangPlacement NoRoomByCounts(const ClusterModel& model,
                               const GangPlacementRequest& request);
  // Upper bounds on free GPU milli over a list of nodes (largest on one
  // node, sum), a time-shared node's replicas counted 1000 each as
  // whole-GPU asks take them: admissions only lower the true values, so
  // the bounds hold until capacity is freed. Per list this stage keeps
  // (all nodes, or a flavor's), by its address.
  struct CapacityBound {
    int64_t max_free = 0;
    int64_t total_free = 0;
  };
  const CapacityBound& BoundOver(const std::vector<const NodeState*>& nodes);
  std::map<const void*, CapacityBound> bounds_;
  Since since_;
  bool in_trial_ = false;
  int64_t searches_ = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_PLACEMENT_STAGE_H_
