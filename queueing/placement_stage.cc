#include "queueing/placement_stage.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/node_predicates.h"

namespace gpusched {

const std::vector<const NodeState*>* GangPlacementStage::SortedNodes() {
  if (sorted_nodes_generation_ != model_->node_set_generation()) {
    sorted_nodes_ = model_->SortedNodes();
    sorted_nodes_generation_ = model_->node_set_generation();
  }
  return &sorted_nodes_;
}

const std::vector<const NodeState*>* GangPlacementStage::NodesWithLabels(
    const StringMap& labels) {
  const std::vector<const NodeState*>& sorted = *SortedNodes();
  if (nodes_with_labels_generation_ != model_->node_set_generation()) {
    nodes_with_labels_.clear();
    nodes_with_labels_generation_ = model_->node_set_generation();
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

NodeScoreMemo* GangPlacementStage::ScoreMemo() {
  // Scores read the weights' task-shape model; a new model, new scores.
  if (weights_->workload().version() != score_memo_model_version_) {
    score_memo_.Clear();
    score_memo_model_version_ = weights_->workload().version();
  }
  return &score_memo_;
}

GangPlacement GangPlacementStage::PlaceOrRecall(
    const std::string& owner, std::string memo_key,
    const GangPlacementRequest& request) {
  ++searches_;
  if (in_trial_) return PlaceGang(*model_, request);
  if (auto it = failures_.find(memo_key); it != failures_.end()) {
    const auto& [first, why] = it->second;
    // Others of the same shape get the first's text: it names its members.
    return GangPlacement{
        .outcome = GangPlacement::Outcome::kNoFitRemembered,
        .reason = first == owner ? why.text
                                 : absl::StrCat("as for ", first, ": ",
                                                why.text),
        .code = why.code};
  }
  GangPlacement placement = PlaceGang(*model_, request);
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
    const std::vector<const Pod*>& members,
    const std::vector<const Workload*>& freeing) {
  ++searches_;
  if (!bound_.valid) {
    bound_ = CapacityBound{.valid = true};
    for (const NodeState* node : *SortedNodes()) {
      const int64_t free = node->gpus().free_milli();
      bound_.time_shared |= node->gpus().time_shared();
      bound_.max_free = std::max(bound_.max_free, free);
      bound_.total_free += free;
    }
  }
  if (bound_.time_shared) return true;
  int64_t largest = 0, total = 0;
  for (const Pod* pod : members) {
    const int64_t milli = GpuDemandMilli(*pod);
    largest = std::max(largest, milli);
    total += milli;
  }
  if (largest == 0) return true;  // no whole or shared GPUs (MIG, CPU)
  std::map<std::string, int64_t> freed_on;
  int64_t freed = 0;
  for (const Workload* v : freeing) {
    for (const auto& [pod, placement] : v->placements) {
      const int64_t milli =
          int64_t{placement.gpus.milli_per_gpu} *
          static_cast<int64_t>(placement.gpus.gpu_ids.size());
      freed_on[placement.node] += milli;
      freed += milli;
    }
  }
  if (bound_.total_free + freed < total) return false;
  if (bound_.max_free >= largest) return true;
  for (const auto& [name, milli] : freed_on) {
    const NodeState* node = model_->FindNode(name);
    if (node != nullptr && node->gpus().free_milli() + milli >= largest) {
      return true;
    }
  }
  return false;
}

}  // namespace gpusched
