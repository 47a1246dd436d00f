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
  Node node_;
  GpuInventory gpus_;
  ResourceList requested_;
  std::map<std::string, PodAllocation, std::less<>> pods_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_NODE_STATE_H_
