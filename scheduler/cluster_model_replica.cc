// ClusterModel as a replica of another: versions, the sync by version and
// the record of the pods a replica's owner changed (cluster_model.h).
#include <atomic>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cluster_model.h"

namespace gpusched {

ClusterModel::NodeVersion ClusterModel::VersionOf(const NodeState& node) const {
  auto mark = bound_marks_.find(node.name());
  return {.state = node.generation(),
          .marks = mark == bound_marks_.end() ? 0 : mark->second};
}

void ClusterModel::NoteChanged(std::string_view uid, std::string_view pod_key,
                               bool was_bound) {
  if (record_changes_) {
    // The first change keeps its was_bound: the state the pass began from.
    changed_pods_.try_emplace(std::string(uid),
                              ChangedPod{std::string(pod_key), was_bound});
  }
}

// Only the entries that still point at this node: a pod that moved to a
// node copied before this one is indexed there already.
void ClusterModel::UnindexPodsOf(const NodeState& node) {
  for (const auto& [key, allocation] : node.pods()) {
    auto placed = pods_by_uid_.find(allocation.uid);
    if (placed == pods_by_uid_.end() || placed->second.node != node.name()) {
      continue;
    }
    pods_by_uid_.erase(placed);
    guessed_.erase(allocation.uid);
  }
}

// Copies into the NodeState this model has, when it has one, rather than
// replacing it: the queueing engine keeps pointers to nodes (sorted lists
// per node_set_generation) across passes.
void ClusterModel::CopyNodeFrom(const ClusterModel& source,
                                const NodeState& theirs) {
  auto mine = nodes_.find(theirs.name());
  if (mine == nodes_.end()) {
    ++node_set_generation_;
    nodes_.emplace(theirs.name(), std::make_unique<NodeState>(theirs));
  } else {
    UnindexPodsOf(*mine->second);
    if (mine->second->node().meta.labels != theirs.node().meta.labels) {
      ++node_set_generation_;
    }
    *mine->second = theirs;
  }
  for (const auto& [key, allocation] : theirs.pods()) {
    pods_by_uid_.insert_or_assign(allocation.uid,
                                  source.pods_by_uid_.at(allocation.uid));
    if (auto guessed = source.guessed_.find(allocation.uid);
        guessed != source.guessed_.end()) {
      guessed_.insert_or_assign(allocation.uid, guessed->second);
    }
  }
  if (auto mark = source.bound_marks_.find(theirs.name());
      mark != source.bound_marks_.end()) {
    bound_marks_.insert_or_assign(theirs.name(), mark->second);
  } else {
    bound_marks_.erase(theirs.name());
  }
}

uint64_t ClusterModel::NextModelId() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

void ClusterModel::Touch(std::string_view name) {
  const uint64_t stamp = ++touch_clock_;
  if (auto it = stamp_of_node_.find(name); it != stamp_of_node_.end()) {
    touched_by_stamp_.erase(it->second);
    it->second = stamp;
  } else {
    stamp_of_node_.emplace(std::string(name), stamp);
  }
  touched_by_stamp_.emplace(stamp, std::string(name));
}

size_t ClusterModel::SyncFrom(const ClusterModel& source) {
  const bool same_source =
      synced_from_ == &source && synced_from_id_ == source.id_;
  const size_t synced =
      same_source ? SyncTouchedNodes(source) : SyncEveryNode(source);
  synced_from_ = &source;
  synced_from_id_ = source.id_;
  source_synced_through_ = source.touch_clock_;
  own_synced_through_ = touch_clock_;
  return synced;
}

size_t ClusterModel::SyncEveryNode(const ClusterModel& source) {
  std::vector<std::string> names;
  for (const auto& [name, mine] : nodes_) {
    if (!source.nodes_.contains(name)) names.push_back(name);
  }
  for (const auto& [name, theirs] : source.nodes_) names.push_back(name);
  size_t synced = 0;
  for (const std::string& name : names) synced += SyncNode(source, name);
  return synced;
}

// The nodes the source touched since the last sync (its changes to bring
// over) and those this model touched (the owner's trials to undo).
size_t ClusterModel::SyncTouchedNodes(const ClusterModel& source) {
  std::set<std::string> names;
  for (const auto& [model, since] :
       {std::pair{&source, source_synced_through_},
        std::pair{static_cast<const ClusterModel*>(this),
                  own_synced_through_}}) {
    for (auto it = model->touched_by_stamp_.upper_bound(since);
         it != model->touched_by_stamp_.end(); ++it) {
      names.insert(it->second);
    }
  }
  size_t synced = 0;
  for (const std::string& name : names) synced += SyncNode(source, name);
  return synced;
}

bool ClusterModel::SyncNode(const ClusterModel& source,
                            const std::string& name) {
  auto theirs = source.nodes_.find(name);
  auto mine = nodes_.find(name);
  if (theirs == source.nodes_.end()) {
    if (mine == nodes_.end()) return false;
    Touch(name);
    UnindexPodsOf(*mine->second);
    bound_marks_.erase(name);
    nodes_.erase(mine);
    ++node_set_generation_;
    return true;
  }
  if (mine != nodes_.end() &&
      VersionOf(*mine->second) == source.VersionOf(*theirs->second)) {
    return false;
  }
  Touch(name);
  CopyNodeFrom(source, *theirs->second);
  return true;
}

}  // namespace gpusched
