#ifndef GPUSCHED_SCHEDULER_GPU_INVENTORY_H_
#define GPUSCHED_SCHEDULER_GPU_INVENTORY_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/gpu_labels.h"
#include "scheduler/gpu_set_cache.h"
#include "scheduler/gpu_topology.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

inline constexpr int kMilliPerGpu = 1000;

// One physical GPU offered as nvidia.com/gpu (MIG-enabled GPUs are offered
// as MIG instances instead and are not devices here).
struct GpuDevice {
  int index = 0;
  int free_milli = kMilliPerGpu;
  bool healthy = true;
  std::vector<std::string> holders;  // keys of pods using it, sorted
  // The DRA driver's name for it ("gpu-3"); "" for device-plugin GPUs.
  std::string dra_name;
};

// The instances of one MIG profile on a node (mixed strategy).
struct MigPool {
  std::string resource;  // "nvidia.com/mig-3g.20gb"
  int64_t capacity = 0;  // allocatable instances
  int64_t used = 0;
  std::vector<std::string> holders;
};

// The GPUs a pod holds on its node.
struct GpuAssignment {
  std::vector<int> gpu_ids;  // sorted
  int milli_per_gpu = 0;     // taken on each of gpu_ids
  std::vector<std::pair<std::string, int64_t>> mig;
  // On a node served by DRA, the driver's names of gpu_ids: gpusched only
  // plans these (kube-scheduler's DynamicResources plugin allocates), so
  // a binding records them as planned, not as gpusched.io/gpu-ids.
  std::vector<std::string> dra_names;

  bool empty() const { return gpu_ids.empty() && mig.empty(); }
  friend bool operator==(const GpuAssignment&, const GpuAssignment&) = default;
};

// "0,1,5": the value gpusched writes in gpusched.io/gpu-ids.
std::string FormatGpuIds(const std::vector<int>& ids);
// Parses "0,1,5"; rejects junk, negatives and duplicates.
absl::StatusOr<std::vector<int>> ParseGpuIds(std::string_view text);

// The GPU side of one node: devices, MIG pools, sharing and topology, and
// what of it is in use.
//
// Invariants: 0 <= free_milli <= 1000 for every device; 0 <= used <=
// capacity for every MIG pool; Apply either changes everything or nothing.
class GpuInventory {
 public:
  GpuInventory() = default;
  // Reads allocatable/capacity, GFD labels and the topology annotation as
  // the codec read it (Node::gpu_topology).
  static GpuInventory FromNode(const Node& node);

  const GpuLabels& labels() const { return labels_; }
  const std::vector<GpuDevice>& devices() const { return devices_; }
  const std::vector<MigPool>& mig_pools() const { return mig_pools_; }
  const MigPool* FindMig(std::string_view resource) const;
  const GpuTopology& topology() const { return topology_; }
  // Memoised set choices for this topology; null for very large nodes.
  const GpuSetCache* set_cache() const { return set_cache_.get(); }
  // Where the topology came from, for /v1/nodes and logs.
  const std::string& topology_source() const { return topology_source_; }
  // Non-empty when the node's annotation was rejected (and the default used).
  const std::string& topology_error() const { return topology_error_; }
  // Time-slicing/MPS replicas per GPU; 1 when not shared.
  int replicas() const { return labels_.replicas; }
  bool time_shared() const { return labels_.replicas > 1; }
  // Milli-GPU one plain nvidia.com/gpu replica takes on a shared node.
  int replica_milli() const { return kMilliPerGpu / labels_.replicas; }

  int healthy_devices() const;
  int64_t total_milli() const;  // healthy devices only
  // Healthy devices only; kept with every change, since admission reads
  // it for every node it considers.
  int64_t free_milli() const { return free_milli_; }

  absl::Status Apply(const GpuAssignment& assignment, std::string_view pod);
  void Release(const GpuAssignment& assignment, std::string_view pod);

  // On a node served by DRA, the GPUs and MIG instances that claims
  // reserved for pod `uid` hold: the claims' hold is handed to the pod
  // (released here, for the caller to Apply as the pod's) so that one
  // device is held once, by the pod that uses it. Returns nothing when no
  // claim of the pod holds any.
  std::optional<GpuAssignment> TakeClaimedBy(std::string_view uid);
  // The DRA names of `gpu_ids` (GpuAssignment::dra_names); empty where
  // the device plugin serves the GPUs.
  std::vector<std::string> DraNamesOf(const std::vector<int>& gpu_ids) const;
  bool HasClaimedBy(std::string_view uid) const {
    return claimed_by_pod_.contains(uid);
  }

 private:
  absl::Status CheckApplicable(const GpuAssignment& assignment) const;
  void LoadTopology(const Node& node);
  // MIG instances one claim reserved for a pod holds in one pool.
  struct ClaimedMig {
    std::string resource;  // "nvidia.com/mig-1g.10gb"
    std::string holder;    // "claim ns/name", as in MigPool::holders
    int64_t count = 0;
  };
  // What the claims reserved for one pod hold here, each device with its
  // holder name ("claim ns/name"); see TakeClaimedBy.
  struct ClaimedDevices {
    std::vector<std::pair<int, std::string>> gpus;  // by GPU index
    std::vector<ClaimedMig> mig;
  };

  // The GPUs and MIG devices of a node served by NVIDIA's DRA driver
  // (gpu_inventory_dra.cc).
  void LoadDraDevices(const DraNodeDevices& dra);
  void LoadDraMig(const DraNodeDevices& dra);
  void TakeClaimedMig(const std::vector<ClaimedMig>& claimed,
                      GpuAssignment& assignment);
  // free_milli_ from the devices.
  void CountFree();

  GpuLabels labels_;
  std::vector<GpuDevice> devices_;
  std::vector<MigPool> mig_pools_;
  GpuTopology topology_;
  std::shared_ptr<const GpuSetCache> set_cache_;
  std::string topology_source_;
  std::string topology_error_;
  int64_t free_milli_ = 0;
  // Claim-held devices by the UID of the pod the claim is reserved for.
  std::map<std::string, ClaimedDevices, std::less<>> claimed_by_pod_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_INVENTORY_H_
