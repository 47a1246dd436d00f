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

// The milli-GPU workloads leaving would free, per node and in all.
struct GpuFreed {
  std::map<std::string, int64_t> on_node;
  int64_t total = 0;
};

GpuFreed GpuFreedBy(const std::vector<const Workload*>& freeing) {
  GpuFreed freed;
  for (const Workload* v : freeing) {
    for (const auto& [pod, placement] : v->placements) {
      const int64_t milli = int64_t{placement.gpus.milli_per_gpu} *
                            static_cast<int64_t>(placement.gpus.gpu_ids.size());
      freed.on_node[placement.node] += milli;
      freed.total += milli;
    }
  }
  return freed;
}

}  // namespace

const std::vector<const NodeState*>* GangPlacementStage::SortedNodes(
    const ClusterModel& model) {
  if (sorted_nodes_generation_ != model.node_set_generation()) {
    sorted_nodes_ = model.SortedNodes();
    sorted_nodes_generation_ = model.node_set_generation();
  }
  return &sorted_nodes_;
}

const std::vector<const NodeState*>* GangPlacementStage::NodesWithLabels(
    const ClusterModel& model, const StringMap& labels) {
  const std::vector<const NodeState*>& sorted = *SortedNodes(model);
  if (nodes_with_labels_generation_ != model.node_set_generation()) {
    nodes_with_labels_.clear();
    nodes_with_labels_generation_ = model.node_set_generation();
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
  GangPlacement placement = PlaceGang(model, request);
  if (!placement.placed()) {
    failures_.emplace(
        std::move(memo_key),
        std::pair(owner, WaitReason{placement.code, placement.reason}));
  }
  return placement;
}

void GangPlacementStage::ForgetCapacityFacts() {
  failures_.clear();
  bound_.valid = false;
}

bool GangPlacementStage::CouldHold(
    const ClusterModel& model, const std::vector<const Pod*>& members,
    const std::vector<const Workload*>& freeing) {
  ++searches_;
  if (!bound_.valid) {
    bound_ = CapacityBound{.valid = true};
    for (const NodeState* node : *SortedNodes(model)) {
      const int64_t free = node->gpus().free_milli();
      bound_.time_shared |= node->gpus().time_shared();
      bound_.max_free = std::max(bound_.max_free, free);
      bound_.total_free += free;
    }
  }
  if (bound_.time_shared) return true;
  const GpuAsk ask = GpuAskOf(members);
  if (ask.largest == 0) return true;  // no whole or shared GPUs (MIG, CPU)
  const GpuFreed freed = GpuFreedBy(freeing);
  if (bound_.total_free + freed.total < ask.total) return false;
  if (bound_.max_free >= ask.largest) return true;
  for (const auto& [name, milli] : freed.on_node) {
    const NodeState* node = model.FindNode(name);
    if (node != nullptr && node->gpus().free_milli() + milli >= ask.largest) {
      return true;
    }
  }
  return false;
}

}  // namespace gpusched
