#include "queueing/gang_trial.h"

namespace gpusched {

PlacementTrial::PlacementTrial(ClusterModel* model, const Workload& w,
                               std::map<std::string, Placement> placements,
                               FrAmounts charged, std::string flavors)
    : model_(model),
      committed_{std::move(charged), std::move(placements),
                 std::move(flavors)} {
  // The UIDs now: the workload may change before the trial is dropped.
  for (const auto& [pod, placement] : committed_.placements) {
    if (auto it = w.pods.find(pod); it != w.pods.end()) {
      uids_.push_back(PodUid(it->second));
    }
  }
}

PlacementTrial::PlacementTrial(PlacementTrial&& other) noexcept
    : model_(other.model_),
      uids_(std::exchange(other.uids_, {})),
      committed_(std::move(other.committed_)) {}

PlacementTrial& PlacementTrial::operator=(PlacementTrial&& other) noexcept {
  if (this != &other) {
    Undo();
    model_ = other.model_;
    uids_ = std::exchange(other.uids_, {});
    committed_ = std::move(other.committed_);
  }
  return *this;
}

PlacementTrial::Committed PlacementTrial::Commit() && {
  uids_.clear();
  return std::move(committed_);
}

void PlacementTrial::Undo() {
  for (const std::string& uid : uids_) model_->RemovePod(uid);
  uids_.clear();
}

HeldPlacement TakeOff(ClusterModel& model, QuotaTree& quota, Workload& w) {
  HeldPlacement held{w.placements, w.charged};
  for (const auto& [pod, placement] : w.placements) {
    model.RemovePod(PodUid(w.pods[pod]));
  }
  quota.RemoveUsage(w.cluster_queue, w.charged);
  w.placements.clear();
  w.charged.clear();
  return held;
}

void PutBack(ClusterModel& model, QuotaTree& quota, Workload& w,
             HeldPlacement held) {
  for (const auto& [pod, placement] : held.placements) {
    Pod bound = w.pods[pod];
    bound.node_name = placement.node;
    (void)model.Place(bound, placement.node, placement.gpus,
                      w.bound.contains(pod));
  }
  quota.AddUsage(w.cluster_queue, held.charged);
  w.placements = std::move(held.placements);
  w.charged = std::move(held.charged);
}

size_t VictimTrial::TakeOff(Workload& w) {
  taken_.emplace_back(&w, gpusched::TakeOff(*model_, *quota_, w));
  return taken_.size() - 1;
}

void VictimTrial::PutBack(size_t i) {
  auto& [w, held] = taken_[i];
  if (!held) return;
  gpusched::PutBack(*model_, *quota_, *w, *std::move(held));
  held.reset();
}

void VictimTrial::TakeOffAgain(size_t i) {
  auto& [w, held] = taken_[i];
  if (held) return;
  held = gpusched::TakeOff(*model_, *quota_, *w);
}

void VictimTrial::PutBackAll(bool last_first) {
  const size_t n = taken_.size();
  for (size_t k = 0; k < n; ++k) PutBack(last_first ? n - 1 - k : k);
}

}  // namespace gpusched
