#ifndef GPUSCHED_SCHEDULER_DRA_INVENTORY_H_
#define GPUSCHED_SCHEDULER_DRA_INVENTORY_H_

// The devices DRA drivers publish, node by node, and which of them can be
// allocated now, counted as kube-scheduler's structured allocator counts
// them (k8s.io/dynamic-resource-allocation/structured, v1.37):
// - only the newest generation of each pool counts, and only when all of
//   that generation's slices are here (an incomplete pool is skipped);
// - a device is in use while some claim's status.allocation names it
//   (admin access does not take it);
// - a partitionable device is free only while its slice's shared counters
//   still hold what it consumes (a GPU whose memory slices MIG partitions
//   took is not free as a whole GPU);
// - a device tainted NoSchedule or NoExecute, on its slice or by a
//   DeviceTaintRule, is not offered (gpusched treats it as unhealthy).

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/dra_objects.h"
#include "scheduler/dra_selector_memo.h"

namespace gpusched {

// "driver/pool/device", how allocations and taint rules name a device.
std::string DraDeviceKey(std::string_view driver, std::string_view pool,
                         std::string_view device);

struct DraDeviceState {
  std::string driver;
  std::string pool;
  DraDevice device;   // taints include those DeviceTaintRules add
  std::string claim;  // the claim ("ns/name") allocated it; "" when not
  // Free, but what it consumes is no longer in its shared counters.
  bool counters_spent = false;
  // The pod the claim is reserved for (its first status.reservedFor
  // UID): the pod that uses the device. "" when not reserved.
  std::string reserved_for;

  // NoSchedule or NoExecute.
  bool tainted() const;
  bool offered() const {
    return claim.empty() && !counters_spent && !tainted();
  }
  friend bool operator==(const DraDeviceState&,
                         const DraDeviceState&) = default;
};

struct DraNodeDevices {
  std::vector<DraDeviceState> devices;  // by driver, pool, device name
  // Why some published devices are not counted, for /v1/nodes and logs:
  // "pool gpu.nvidia.com/dgx-1: generation 3 has 1 of 2 slices".
  std::vector<std::string> problems;
  // Selector answers per device, filled by FitDraDemand: valid because a
  // node's devices are not changed once shared (Node::dra_devices).
  DraSelectorMemo memo;

  friend bool operator==(const DraNodeDevices&,
                         const DraNodeDevices&) = default;
};

// Same devices (both null, or equal), so that an unchanged node is not
// rebuilt.
bool SameDraDevices(const std::shared_ptr<const DraNodeDevices>& a,
                    const std::shared_ptr<const DraNodeDevices>& b);

class DraInventory {
 public:
  // Slices not local to one node (nodeSelector, allNodes) are ignored:
  // they hold network-attached devices, not a node's GPUs.
  void UpsertSlice(ResourceSlice slice);
  void DeleteSlice(std::string_view name);
  void UpsertClaim(ResourceClaim claim);
  void DeleteClaim(std::string_view key);
  void UpsertTaintRule(DeviceTaintRule rule);
  void DeleteTaintRule(std::string_view name);
  // Before a complete list of that kind is upserted again.
  void ClearSlices();
  void ClearClaims();
  void ClearTaintRules() { rules_.clear(); }

  DraNodeDevices NodeDevices(std::string_view node) const;
  // Nodes with at least one node-local slice, sorted.
  std::vector<std::string> Nodes() const;
  // The claim that holds the device, or "".
  const std::string& HolderOf(std::string_view device_key) const;
  // The first pod UID the claim (by DraKey) is reserved for, or "".
  const std::string& ReservedFor(std::string_view claim) const;

 private:
  struct PoolSlices;
  std::map<std::string, PoolSlices> CurrentPools(std::string_view node,
                                                 DraNodeDevices& out) const;
  void AddTaintsFromRules(DraDeviceState& state) const;
  void MarkSpentCounters(const std::vector<const ResourceSlice*>& pool_slices,
                         std::vector<DraDeviceState>& devices) const;

  std::map<std::string, ResourceSlice, std::less<>> slices_;  // by name
  std::map<std::string, std::set<std::string>, std::less<>> slices_by_node_;
  std::map<std::string, ResourceClaim, std::less<>> claims_;  // by DraKey
  std::map<std::string, std::string, std::less<>> holder_;    // device key
  std::map<std::string, DeviceTaintRule, std::less<>> rules_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_INVENTORY_H_
