// The GPU map: every node's GPUs and MIG instances with the pods holding
// them, as an immutable snapshot of the cluster model. The dashboard and
// the visibility API's gpunodes read it; they never take the model's lock
// on a request. GpuMapBuilder makes a new snapshot from the model (under
// the caller's shared lock) and shares every node whose state did not
// change with the snapshot before, so a 5,000-node cluster costs a version
// check per node, not a copy of every GPU.
#ifndef GPUSCHED_SCHEDULER_GPU_MAP_H_
#define GPUSCHED_SCHEDULER_GPU_MAP_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/base/strings.h"
#include "scheduler/cluster_model.h"

namespace gpusched {

// A pod holding part of a GPU or a MIG pool: an index into its node's pods
// and how much it holds there (milli-GPU on a device, instances in a pool).
struct GpuMapHold {
  size_t pod = 0;
  int64_t amount = 0;
  friend bool operator==(const GpuMapHold&, const GpuMapHold&) = default;
};

// One whole GPU (nvidia.com/gpu; a time-shared GPU's replicas are its
// holders' milli-GPU).
struct GpuMapDevice {
  int index = 0;
  bool healthy = true;
  int used_milli = 0;
  std::vector<GpuMapHold> holders;  // by pod key
  // On a node served by DRA: the driver's name for it ("gpu-3"), the claim
  // its allocation names ("ns/name", "" when none) and its taints
  // ("xid=79:NoExecute"). Empty for device-plugin GPUs.
  std::string dra_name;
  std::string claim;
  std::vector<std::string> taints;
  friend bool operator==(const GpuMapDevice&, const GpuMapDevice&) = default;
};

// The instances of one MIG profile on a node.
struct GpuMapMigPool {
  std::string profile;  // "3g.20gb"
  int64_t capacity = 0;
  int64_t used = 0;
  std::vector<GpuMapHold> holders;  // by pod key
  // On a node served by DRA: the devices of this profile it counts
  // ("gpu-0-mig-1g.10gb-0"); a tainted one is left out of the capacity
  // and named in GpuMapNode::dra_tainted instead.
  std::vector<std::string> dra_devices;
  friend bool operator==(const GpuMapMigPool&, const GpuMapMigPool&) = default;
};

// Where a node's GPUs come from (GpuInventory::FromNode): the device
// plugin's counts in allocatable win; else the devices a DRA driver
// publishes in ResourceSlices.
enum class GpuSource { kNone, kDevicePlugin, kDra };
std::string_view GpuSourceName(GpuSource source);  // "", DevicePlugin, DRA
GpuSource GpuSourceOf(const NodeState& node);

struct GpuMapNode {
  std::string name;
  // The GPU Feature Discovery labels a map is read with (product, memory,
  // count, MIG strategy, sharing, replicas), as the node carries them.
  std::vector<std::pair<std::string, std::string>> labels;
  std::string product;  // without GFD's -SHARED suffix
  int64_t memory_mib = 0;
  int replicas = 1;  // time-slicing/MPS replicas per GPU
  bool unschedulable = false;
  // The node lifecycle controller's not-ready or unreachable taint: the
  // node's kubelet stopped reporting, so its GPUs may be gone.
  bool not_ready = false;
  std::vector<std::string> pods;  // keys of the pods holding GPUs, sorted
  std::vector<GpuMapDevice> gpus;
  std::vector<GpuMapMigPool> mig;
  GpuSource gpu_source = GpuSource::kNone;
  // DRA devices of the node kept off by a NoSchedule or NoExecute taint
  // ("gpu-5 xid=79:NoExecute"), and pools not counted (DraNodeDevices::
  // problems): shown whether or not the node's GPUs come from DRA.
  std::vector<std::string> dra_tainted;
  std::vector<std::string> dra_problems;
  friend bool operator==(const GpuMapNode&, const GpuMapNode&) = default;
};

struct GpuMap {
  // Changes whenever any node of the map changed (a client may keep its
  // drawing while it is the same).
  uint64_t generation = 0;
  int64_t built_at_ms = 0;
  std::vector<std::shared_ptr<const GpuMapNode>> nodes;  // by name
};

// The map of one node as the model holds it now.
GpuMapNode MapNode(const NodeState& node);

// Not thread-safe: one owner builds, readers share the snapshots.
class GpuMapBuilder {
 public:
  // The model's map now. Nodes whose generation did not change are the
  // previous snapshot's, and when no node changed the previous snapshot
  // itself is returned. Call it with the model's lock held (shared).
  std::shared_ptr<const GpuMap> Build(const ClusterModel& model,
                                      int64_t now_ms);

 private:
  struct Kept {
    uint64_t generation = 0;
    std::shared_ptr<const GpuMapNode> node;
  };
  std::shared_ptr<const GpuMap> last_;
  StringKeyMap<Kept> kept_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_MAP_H_
