#include "queueing/placement_stage.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/node_predicates.h"

namespace gpusched {
namespace {

// What a gang's members ask for, in milli-GPU: the largest one's and all.
struct GpuAsk {
  int64_t largest = 0;
  int64_t total = 0;
};

GpuAsk GpuAskOf(const std::vector<const Pod*>& members) {
  GpuAsk ask;
  for (const Pod* pod : members) {
    const int64_t milli = GpuDemandMilli(*pod);
    ask.largest = std::max(ask.largest, milli);
    ask.total += milli;
  }
  return ask;
}

// "4", or "0.5" for shares.
std::string MilliText(int64_t milli) {
  if (milli % 1000 == 0) return absl::StrCat(milli / 1000);
  return absl::StrCat(static_cast<double>(milli) / 1000.0);
}

// Free milli-GPU on `node` in the units a pod's ask is counted in
// (GpuDemandMilli): on a time-shared node a whole-GPU ask takes one
// replica per GPU, so its replicas count 1000 each. A fractional ask takes
// its milli there, which this overstates: the result stays an upper bound.
int64_t AskUnits(const NodeState& node, int64_t milli) {
  const GpuInventory& gpus = node.gpus();
  return gpus.time_shared() ? milli * kMilliPerGpu / gpus.replica_milli()
                            : milli;
}

// The milli-GPU workloads leaving would free, per node, and in all in ask
// units (AskUnits).
struct GpuFreed {
  std::map<std::string, int64_t> on_node;
  int64_t total = 0;
};

GpuFreed GpuFreedBy(const ClusterModel& model,
                    const std::vector<const Workload*>& freeing) {
  GpuFreed freed;
  for (const Workload* v : freeing) {
    for (const auto& [pod, placement] : v->placements) {
      freed.on_node[placement.node] +=
          int64_t{placement.gpus.milli_per_gpu} *
          static_cast<int64_t>(placement.gpus.gpu_ids.size());
    }
  }
  for (const auto& [name, milli] : freed.on_node) {
    const NodeState* node = model.FindNode(name);
    freed.total += node == nullptr ? milli : AskUnits(*node, milli);
  }
  return freed;
}

}  // namespace

const std::vector<const NodeState*>* GangPlacementStage::SortedNodes(
    const ClusterModel& model) {
  if (sorted_nodes_generation_ != model.node_set_generation()) {
    sorted_nodes_ = model.SortedNodes();
    sorted_nodes_generation_ = model.node_set_generation();
    bounds_.clear();  // keyed by the lists' addresses
  }
  return &sorted_nodes_;
}

const std::vector<const NodeState*>* GangPlacementStage::NodesWithLabels(
    const ClusterModel& model, const StringMap& labels) {
  const std::vector<const NodeState*>& sorted = *SortedNodes(model);
  if (nodes_with_labels_generation_ != model.node_set_generation()) {
    nodes_with_labels_.clear();
    nodes_with_labels_generation_ = model.node_set_generation();
    bounds_.clear();
  }
  std::string key;
  for (const auto& [name, value] : labels) {
    absl::StrAppend(&key, name, "=", value, "\n");
  }
  auto [it, inserted] = nodes_with_labels_.try_emplace(std::move(key));
  if (inserted) {
    for (const NodeState* node : sorted) {
      if (HasLabels(node->node().meta.labels, labels)) {
        it->second.push_back(node);
      }
    }
  }
  return &it->second;
}

NodeScoreMemo* GangPlacementStage::ScoreMemo(const ScoringWeights& weights) {
  // Scores read the weights' task-shape model; a new model, new scores.
  if (weights.workload().version() != score_memo_model_version_) {
    score_memo_.Clear();
    score_memo_model_version_ = weights.workload().version();
  }
  return &score_memo_;
}

GangPlacement GangPlacementStage::PlaceOrRecall(
    ClusterModel& model, const std::string& owner, std::string memo_key,
    const GangPlacementRequest& request) {
  ++searches_;
  if (in_trial_) return PlaceGang(model, request);
  if (auto it = failures_.find(memo_key); it != failures_.end()) {
    const auto& [first, why] = it->second;
    // Others of the same shape get the first's text: it names its members.
    return GangPlacement{
        .outcome = GangPlacement::Outcome::kNoFitRemembered,
        .reason = first == owner
                      ? why.text
                      : absl::StrCat("as for ", first, ": ", why.text),
        .code = why.code};
  }
  GangPlacement placement = NoRoomByCounts(model, request);
  if (placement.reason.empty()) placement = PlaceGang(model, request);
  if (!placement.placed()) {
    failures_.emplace(
        std::move(memo_key),
        std::pair(owner, WaitReason{placement.code, placement.reason}));
  }
  return placement;
}

// A full cluster with a long queue tries every queued gang each pass, and
// a node search costs a look at every node per member: the capacity bound
// turns most of those into one comparison. Only over nodes known to match
// the flavor, so that "no node has the labels" keeps its own reason.
GangPlacement GangPlacementStage::NoRoomByCounts(
    const ClusterModel& model, const GangPlacementRequest& request) {
  if (request.sorted_nodes == nullptr || request.sorted_nodes->empty() ||
      (!request.node_labels.empty() && !request.sorted_nodes_match_labels)) {
    return {};
  }
  const CapacityBound& bound = BoundOver(*request.sorted_nodes);
  const GpuAsk ask = GpuAskOf(request.members);
  if (ask.largest == 0 ||
      (bound.total_free >= ask.total && bound.max_free >= ask.largest)) {
    return {};
  }
  std::string reason =
      request.members.size() == 1
          ? absl::StrCat("needs ", MilliText(ask.total),
                         " GPUs on one node; at most ",
                         MilliText(bound.max_free), " are free on any node")
          : absl::StrCat("its ", request.members.size(), " members need ",
                         MilliText(ask.total), " GPUs (",
                         MilliText(ask.largest), " on one node); at most ",
                         MilliText(bound.total_free), " are free (",
                         MilliText(bound.max_free), " on one node)");
  return {.reason = std::move(reason), .code = ReasonCode::kInsufficientGpus};
}

void GangPlacementStage::ForgetCapacityFacts() {
  failures_.clear();
  bounds_.clear();
}

const GangPlacementStage::CapacityBound& GangPlacementStage::BoundOver(
    const std::vector<const NodeState*>& nodes) {
  auto [it, inserted] = bounds_.try_emplace(&nodes);
  if (inserted) {
    for (const NodeState* node : nodes) {
      const int64_t free = AskUnits(*node, node->gpus().free_milli());
      it->second.max_free = std::max(it->second.max_free, free);
      it->second.total_free += free;
    }
  }
  return it->second;
}

bool GangPlacementStage::CouldHold(
    const ClusterModel& model, const std::vector<const Pod*>& members,
    const std::vector<const Workload*>& freeing) {
  ++searches_;
  const CapacityBound& bound = BoundOver(*SortedNodes(model));
  const GpuAsk ask = GpuAskOf(members);
  if (ask.largest == 0) return true;  // no whole or shared GPUs (MIG, CPU)
  const GpuFreed freed = GpuFreedBy(model, freeing);
  if (bound.total_free + freed.total < ask.total) return false;
  if (bound.max_free >= ask.largest) return true;
  for (const auto& [name, milli] : freed.on_node) {
    const NodeState* node = model.FindNode(name);
    if (node != nullptr &&
        AskUnits(*node, node->gpus().free_milli() + milli) >= ask.largest) {
      return true;
    }
  }
  return false;
}

}  // namespace gpusched
