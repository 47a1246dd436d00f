#ifndef GPUSCHED_QUEUEING_GANG_PLACER_H_
#define GPUSCHED_QUEUEING_GANG_PLACER_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "queueing/workload.h"
#include "scheduler/cluster_model.h"
#include "scheduler/node_memo.h"
#include "scheduler/scoring.h"

namespace gpusched {

// What placing one member shape (MemberSignature) on one node came to.
struct NodeScore {
  // The cheap necessary check failed; then `fits` is false and `reason`
  // may be empty (the full check was not run).
  bool quick_fail = false;
  bool fits = false;
  int64_t score = 0;
  GpuAssignment assignment;
  std::string reason;  // why not, when it does not fit
};
// Node scores per member shape, valid while the node is unchanged: the
// queueing engine searches the same nodes for every admission and
// preemption trial, and most of them did not change since the last.
using NodeScoreMemo = NodeMemo<NodeScore>;

struct GangPlacementRequest {
  std::string owner;  // workload key, for messages
  std::vector<const Pod*> members;
  StringMap node_labels;                // the flavor's: every one must match
  std::vector<Toleration> tolerations;  // the flavor's, added to members
  std::string required_level;           // node label key, or ""
  std::string preferred_level;          // node label key, or ""
  // Kueue's slices: every slice_size members (in placement order) within
  // one domain of slice_level, at or below the required level; 0: none.
  std::string slice_level;
  int slice_size = 0;
  // The flavor's topology level keys, widest first: the levels above must
  // be among them.
  std::vector<std::string> levels;
  const ScoringWeights* weights = nullptr;
  // Nodes held for another workload (a starvation reservation).
  std::set<std::string> excluded_nodes;
  // model.SortedNodes(), when the caller keeps it across calls.
  const std::vector<const NodeState*>* sorted_nodes = nullptr;
  // sorted_nodes holds only the nodes that match node_labels (the caller
  // filtered them once for many requests).
  bool sorted_nodes_match_labels = false;
  // Remembers verdicts and scores per member shape and node across calls
  // (the caller's, for one set of weights); null: work every one out.
  NodeScoreMemo* memo = nullptr;
};

struct GangPlacement {
  enum class Outcome {
    kNoFit,            // searched: no fit now; `code` and `reason` say why
    kNoFitRemembered,  // not searched: the same shape failed since capacity
                       // last changed (GangPlacementStage), for that reason
    kPlaced,           // every member is placed in the model
  };
  Outcome outcome = Outcome::kNoFit;
  std::map<std::string, Placement> placements;  // ns/pod -> node, devices
  std::string reason;                           // why not, when not placed
  // kInsufficientGpus, or kTopologyUnsatisfiable (no domain of the
  // required level holds the gang), or kNoMatchingFlavor (no node has the
  // flavor's labels).
  ReasonCode code = ReasonCode::kNone;

  bool placed() const { return outcome == Outcome::kPlaced; }
};

// Places every member or none (all or nothing), against the model as it is
// now. On success the members are placed in `model` (the caller owns the
// lock and may undo with ClusterModel::RemovePod); on failure `model` is
// exactly as before.
//
// Steps: 0. every level the request names is one of `levels` (else
// kTopologyUnsatisfiable, nothing searched); 1. candidate nodes: the
// flavor's labels match; 2. with a required
// level, one domain of that level at a time, fullest domain that can still
// hold the gang first (bin-packing domains, as KAI does); with a preferred
// level, one domain at each level from the narrowest up to it, then
// anywhere with nodes in already used domains preferred; 3. inside a
// domain, members largest first, each on the best scoring node that fits;
// with slices, each run of slice_size of them within one domain of the
// slice level.
GangPlacement PlaceGang(ClusterModel& model,
                        const GangPlacementRequest& request);

// The milli-GPU a pod asks for: its share of one GPU, or 1000 per whole GPU
// (MIG slices count 0).
int64_t GpuDemandMilli(const Pod& pod);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_GANG_PLACER_H_
