#ifndef GPUSCHED_SCHEDULER_CLUSTER_MODEL_H_
#define GPUSCHED_SCHEDULER_CLUSTER_MODEL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/base/strings.h"
#include "scheduler/k8s_objects.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"

namespace gpusched {

// Where a placed pod is, by UID.
struct PlacedPod {
  std::string pod_key;
  std::string node;
  // False while the pod is only assumed on the node (placed by admission,
  // not yet bound); true once bound or found running.
  bool bound = true;
};

// A pod a replica's owner changed (TakeChangedPods), and whether it was
// bound before the first of those changes: a commit must not take off the
// extender's model a pod that was bound there meanwhile on the strength of
// a replica that never saw it bound.
struct ChangedPod {
  std::string pod_key;
  bool was_bound = false;
  bool operator==(const ChangedPod&) const = default;
};

// A pod taken off a removed node, with what it held.
struct DetachedPod {
  PodAllocation allocation;
  bool bound = true;
};

// Nodes and the pods placed on them. Not synchronised: the owner (the
// extender service, the simulator) holds the lock that guards it.
//
// Invariants: every pod is on exactly one node; pods_by_uid_ indexes
// exactly the pods of all NodeStates.
class ClusterModel {
 public:
  // Adds a node or replaces its object, keeping the pods placed on it.
  // Returns a warning (empty if none) for pods whose devices vanished.
  std::string UpsertNode(Node node);
  bool RemoveNode(std::string_view name);
  // RemoveNode that hands back what its pods held (and whether each was
  // bound), so they can be put back with Attach when the node returns.
  bool RemoveNode(std::string_view name, std::vector<DetachedPod>* detached);
  // Puts a detached pod back on `node` with what it held; fails (changing
  // nothing) for an unknown node, a duplicate UID or devices not free.
  absl::Status Attach(std::string_view node, const DetachedPod& pod);

  // Records a pod that already runs on its spec.nodeName, on the GPUs its
  // gpusched.io/gpu-ids annotation names. When the annotation is absent or
  // names GPUs that are not free, the allocator picks and `warning` says so.
  // Fails (changing nothing) for an unknown node or a duplicate UID.
  absl::Status AddRunningPod(const Pod& pod, std::string* warning = nullptr);
  // Places a pod with a known assignment (bind, simulator).
  absl::Status Place(const Pod& pod, std::string_view node,
                     GpuAssignment assignment, bool bound = true);
  // Marks an assumed pod as bound; false if it is not placed.
  bool MarkBound(std::string_view uid);
  bool RemovePod(std::string_view uid);

  const NodeState* FindNode(std::string_view name) const;
  const PlacedPod* FindPodByUid(std::string_view uid) const;
  // Nodes sorted by name, for listings and deterministic walks.
  std::vector<const NodeState*> SortedNodes() const;
  size_t node_count() const { return nodes_.size(); }
  // Changes whenever a node is added or removed or its labels change (not
  // when only its status or pods change), so a caller may keep
  // SortedNodes(), or a list of it filtered by labels, between calls.
  uint64_t node_set_generation() const { return node_set_generation_; }
  size_t pod_count() const { return pods_by_uid_.size(); }

  // Replicas (cluster_model_replica.cc): the admission loop plans on its
  // own copy of the extender's model and publishes only what it changed.
  //
  // A node's version changes whenever the node, a pod on it or a pod's
  // bound flag changes, and no value is ever reused, not even by another
  // model: two models whose node has the same version hold it alike.
  struct NodeVersion {
    uint64_t state = 0;  // NodeState::generation()
    uint64_t marks = 0;  // the last MarkBound of a pod on the node
    friend bool operator==(const NodeVersion&, const NodeVersion&) = default;
  };
  NodeVersion VersionOf(const NodeState& node) const;
  // Makes this model equal to `source` by copying only the nodes whose
  // version differs and adding or dropping the nodes only one of them has,
  // as kube-scheduler's cache updates its snapshot by generation. Returns
  // how many nodes it copied or dropped. Records no pod change.
  //
  // Synced again from the same source, it looks only at the nodes either
  // model touched since (the touch journal below), not at every node: the
  // admission loop syncs before each pass, and comparing 5,000 nodes by
  // name was a fifth of gpusched's CPU while queued pods streamed in.
  size_t SyncFrom(const ClusterModel& source);
  // While on, every pod placed, removed or marked bound is recorded (not
  // the pods that go with a removed node), for TakeChangedPods.
  void RecordPodChanges(bool on) { record_changes_ = on; }
  // The pods changed since the last call, by UID; a pod placed and removed
  // again is listed though it is back as it was.
  std::map<std::string, ChangedPod> TakeChangedPods() {
    return std::exchange(changed_pods_, {});
  }

 private:
  NodeState* MutableNode(std::string_view name);
  // `was_bound`: the pod's state before this change (false if absent).
  void NoteChanged(std::string_view uid, std::string_view pod_key,
                   bool was_bound);
  // SyncFrom's steps for one node: forget what this model indexes of its
  // pods, then copy the source's node and index its pods.
  void UnindexPodsOf(const NodeState& node);
  void CopyNodeFrom(const ClusterModel& source, const NodeState& theirs);
  // SyncFrom's two ways, and its step for one node by name: drop, copy or
  // leave it; true if it dropped or copied.
  size_t SyncEveryNode(const ClusterModel& source);
  size_t SyncTouchedNodes(const ClusterModel& source);
  bool SyncNode(const ClusterModel& source, const std::string& name);
  // Records that the node may have changed: every mutation of a node, its
  // pods or their bound marks goes through here (MutableNode included).
  void Touch(std::string_view name);

  StringKeyMap<std::unique_ptr<NodeState>> nodes_;
  uint64_t node_set_generation_ = 0;
  StringKeyMap<PlacedPod> pods_by_uid_;
  // Running pods whose devices the allocator chose because they carry no
  // usable gpusched.io/gpu-ids (another scheduler placed them): a pod whose
  // recorded ids claim the same devices moves them elsewhere.
  StringKeyMap<Pod> guessed_;
  // Per node name, the stamp of the last MarkBound there (NodeVersion).
  StringKeyMap<uint64_t> bound_marks_;
  bool record_changes_ = false;
  std::map<std::string, ChangedPod> changed_pods_;

  // The touch journal: each node name at the stamp of its last touch (a
  // removed node's name stays, so that a replica drops it). One entry per
  // name ever seen.
  uint64_t touch_clock_ = 0;
  std::map<uint64_t, std::string> touched_by_stamp_;
  StringKeyMap<uint64_t> stamp_of_node_;
  // Which model this one last synced from and how far into both journals.
  // A model is told apart by address and id: a copy, or a new model at a
  // freed address, has other journal stamps and is synced node by node.
  static uint64_t NextModelId();
  uint64_t id_ = NextModelId();
  const ClusterModel* synced_from_ = nullptr;
  uint64_t synced_from_id_ = 0;
  uint64_t source_synced_through_ = 0;
  uint64_t own_synced_through_ = 0;

  // AddRunningPod's two ways. On the devices the pod's annotation records;
  // nullopt when they are not free even after guessed pods moved off them.
  std::optional<absl::Status> PlaceAsRecorded(const Pod& pod,
                                              const GpuAssignment& recorded,
                                              std::string* warning);
  // Where the allocator would put it now or, if nothing fits, the pod as
  // it runs without devices the model cannot give it.
  absl::Status PlaceAsPlanned(const Pod& pod, const PodView& view,
                              const NodeState& node, std::string* warning);
  bool MoveGuessedPodsOff(std::string_view node,
                          const std::vector<int>& gpu_ids,
                          std::vector<Pod>* moved);
};

// The UID gpusched indexes a pod by: metadata.uid, or "namespace/name" for
// objects without one (hand-written cluster files).
std::string PodUid(const Pod& pod);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_CLUSTER_MODEL_H_
