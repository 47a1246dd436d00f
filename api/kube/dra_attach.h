// Puts what DRA says about a node or a pod onto the objects the model and
// the queueing core read, so that neither needs to know DRA: a node gets
// its devices (Node::dra_devices, read by GpuInventory), a pod the charge
// of its resource claims in quota's resource names (Pod::claim_requests).
#ifndef GPUSCHED_API_KUBE_DRA_ATTACH_H_
#define GPUSCHED_API_KUBE_DRA_ATTACH_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "api/kube/dra_sync.h"
#include "scheduler/dra_quota.h"
#include "scheduler/k8s_objects.h"

namespace gpusched::kube {

// Thread-safe. The DraSync must outlive it.
class DraAttacher {
 public:
  explicit DraAttacher(const DraSync& dra,
                       std::vector<DeviceClassMapping> mappings = {})
      : dra_(dra), mappings_(std::move(mappings)) {}

  // The policy's deviceClassMappings (empty: the defaults, dra_quota.h).
  void SetMappings(std::vector<DeviceClassMapping> mappings);

  // Sets pod.claim_requests, and pod.dra_demand where the node check
  // needs more than the count; a pod without resource claims gets neither.
  // A request that is not charged is logged once per pod and reason, a
  // request gpusched leaves to kube-scheduler once per class and reason.
  void AttachTo(Pod& pod) const;
  // Sets node.dra_devices: null where no driver publishes devices for it.
  void AttachTo(Node& node) const;
  // The devices to attach to `node`, as AttachTo(Node&) would.
  std::shared_ptr<const DraNodeDevices> DevicesOf(
      const std::string& node) const;

  const DraSync& sync() const { return dra_; }
  // Changes whenever a pod's charge or demand could: the DRA catalog, or
  // the mappings.
  uint64_t ClaimsVersion() const {
    return dra_.catalog_version() + mappings_version_;
  }

 private:
  void SayOnce(const Pod& pod, const DraSync::PodClaims& claims) const;

  const DraSync& dra_;
  mutable std::mutex mu_;
  std::vector<DeviceClassMapping> mappings_;  // guarded by mu_
  mutable std::set<std::string> said_;        // guarded by mu_
  std::atomic<uint64_t> mappings_version_{0};
};

}  // namespace gpusched::kube

#endif  // GPUSCHED_API_KUBE_DRA_ATTACH_H_
