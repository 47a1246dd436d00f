// ClusterModel as a replica of another: versions, the sync by version and
// the record of the pods a replica's owner changed (cluster_model.h).
#include <string>
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

size_t ClusterModel::SyncFrom(const ClusterModel& source) {
  size_t synced = 0;
  std::vector<std::string> dropped;
  for (const auto& [name, mine] : nodes_) {
    if (!source.nodes_.contains(name)) dropped.push_back(name);
  }
  for (const std::string& name : dropped) {
    UnindexPodsOf(*nodes_.find(name)->second);
    bound_marks_.erase(name);
    nodes_.erase(name);
    ++node_set_generation_;
    ++synced;
  }
  for (const auto& [name, theirs] : source.nodes_) {
    auto mine = nodes_.find(name);
    if (mine != nodes_.end() &&
        VersionOf(*mine->second) == source.VersionOf(*theirs)) {
      continue;
    }
    CopyNodeFrom(source, *theirs);
    ++synced;
  }
  return synced;
}

}  // namespace gpusched
