#include "api/kube/dra_attach.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {

void DraAttacher::SetMappings(std::vector<DeviceClassMapping> mappings) {
  std::lock_guard lock(mu_);
  mappings_ = std::move(mappings);
}

void DraAttacher::AttachTo(Pod& pod) const {
  pod.dra_demand = nullptr;
  if (pod.resource_claims.empty()) {
    pod.claim_requests = ResourceList();
    return;
  }
  DraDemand demand = dra_.DemandOf(pod);
  if (!CountSaysAll(demand)) {
    pod.dra_demand = std::make_shared<const DraDemand>(std::move(demand));
  }
  std::vector<DeviceClassMapping> mappings;
  {
    std::lock_guard lock(mu_);
    mappings = mappings_;
  }
  ClaimCharge charge = dra_.ChargeClaimsOf(pod, mappings);
  pod.claim_requests = std::move(charge.requests);
  if (charge.uncharged.empty()) return;
  std::lock_guard lock(mu_);
  for (const std::string& why : charge.uncharged) {
    // Said once per pod and reason: pods are seen on every change.
    if (!said_.insert(absl::StrCat(pod.meta.uid, " ", why)).second) continue;
    if (said_.size() > 100000) said_.clear();  // bounded
    spdlog::info("dra: pod {}: {} is not charged to quota", pod.Key(), why);
  }
}

std::shared_ptr<const DraNodeDevices> DraAttacher::DevicesOf(
    const std::string& node) const {
  DraNodeDevices devices = dra_.NodeDevices(node);
  if (devices.devices.empty() && devices.problems.empty()) return nullptr;
  return std::make_shared<const DraNodeDevices>(std::move(devices));
}

void DraAttacher::AttachTo(Node& node) const {
  node.dra_devices = DevicesOf(node.meta.name);
}

}  // namespace gpusched::kube
