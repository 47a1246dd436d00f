#ifndef GPUSCHED_SCHEDULER_NODE_STATE_H_
#define GPUSCHED_SCHEDULER_NODE_STATE_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// A pod placed on a node and what it holds there.
struct PodAllocation {
  std::string pod_key;  // namespace/name
  std::string uid;
  ResourceList requests;  // effective requests
  GpuAssignment gpus;
  int32_t priority = 0;
};

// One node and everything placed on it.
//
// Invariant: requested() is the sum of requests of pods(), and the GPU
// inventory holds exactly the assignments of pods().
class NodeState {
 public:
  explicit NodeState(Node node);

  const Node& node() const { return node_; }
  const std::string& name() const { return node_.meta.name; }
  const GpuInventory& gpus() const { return gpus_; }
  const ResourceList& requested() const { return requested_; }
  int pod_count() const { return static_cast<int>(pods_.size()); }
  const std::map<std::string, PodAllocation, std::less<>>& pods() const {
    return pods_;
  }
  const PodAllocation* FindPod(std::string_view key) const;

  // What the filter's quick check reads for every candidate node, kept up
  // to date beside the lists it comes from so that the check needs no name
  // lookups (see CheckPodOnNode).
  struct QuickFacts {
    int64_t cpu_allocatable = 0;  // milli-CPU; 0 when absent
    int64_t memory_allocatable = 0;
    int64_t cpu_requested = 0;
    int64_t memory_requested = 0;
    int64_t max_pods = -1;  // -1: allocatable has no "pods"
    // Cordoned, or a NoSchedule/NoExecute taint: the quick check defers.
    bool restricted = false;
  };
  const QuickFacts& quick() const { return quick_; }

  // Changes whenever anything a fit check reads changes (construction, a
  // pod added or removed, a new Node object), and is never reused, even by
  // another NodeState: a verdict remembered with it stays valid exactly as
  // long as it still equals generation(). A copy keeps the generation of the
  // state it copies, which it equals until either changes.
  uint64_t generation() const { return generation_; }

  // All or nothing: fails (changing nothing) if the GPUs are not free or the
  // pod is already here.
  absl::Status AddPod(PodAllocation allocation);
  // Returns false if the pod was not here.
  bool RemovePod(std::string_view key);
  // A newer version of the Node object: rebuilds the GPU inventory and puts
  // the existing pods back. Pods whose GPUs no longer exist stay recorded
  // without devices and are listed in the returned message.
  std::string ReplaceNode(Node node);

 private:
  // Every mutation ends here: refreshes quick() and takes a new generation.
  void RefreshQuickFacts();

  Node node_;
  uint64_t generation_ = 0;
  GpuInventory gpus_;
  ResourceList requested_;
  QuickFacts quick_;
  std::map<std::string, PodAllocation, std::less<>> pods_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_NODE_STATE_H_
