#ifndef GPUSCHED_SCHEDULER_CLUSTER_MODEL_H_
#define GPUSCHED_SCHEDULER_CLUSTER_MODEL_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
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

 private:
  NodeState* MutableNode(std::string_view name);

  StringKeyMap<std::unique_ptr<NodeState>> nodes_;
  uint64_t node_set_generation_ = 0;
  StringKeyMap<PlacedPod> pods_by_uid_;
  // Running pods whose devices the allocator chose because they carry no
  // usable gpusched.io/gpu-ids (another scheduler placed them): a pod whose
  // recorded ids claim the same devices moves them elsewhere.
  StringKeyMap<Pod> guessed_;

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
