#include "api/kube/dra_attach.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace gpusched::kube {

void DraAttacher::SetMappings(std::vector<DeviceClassMapping> mappings) {
  {
    std::lock_guard lock(mu_);
    mappings_ = std::move(mappings);
  }
  ++mappings_version_;
}

void DraAttacher::AttachTo(Pod& pod) const {
  pod.dra_demand = nullptr;
  pod.claim_hold = {};
  if (pod.resource_claims.empty()) {
    pod.claim_requests = ResourceList();
    return;
  }
  std::vector<DeviceClassMapping> mappings;
  {
    std::lock_guard lock(mu_);
    mappings = mappings_;
  }
  DraSync::PodClaims claims = dra_.ClaimsOf(pod, mappings);
  pod.claim_requests = std::move(claims.charge.requests);
  pod.claim_hold = claims.charge.hold;
  SayOnce(pod, claims);
  if (!CountSaysAll(claims.demand)) {
    pod.dra_demand =
        std::make_shared<const DraDemand>(std::move(claims.demand));
  }
}

// Pods are seen on every change, so each reason is said once: an uncharged
// claim once per pod, a request left to kube-scheduler once per class and
// reason (the reason names the selector).
void DraAttacher::SayOnce(const Pod& pod,
                          const DraSync::PodClaims& claims) const {
  std::lock_guard lock(mu_);
  if (said_.size() > 100000) said_.clear();  // bounded
  for (const std::string& why : claims.charge.uncharged) {
    if (!said_.insert(absl::StrCat(pod.meta.uid, " ", why)).second) continue;
    spdlog::info("dra: pod {}: {} is not charged to quota", pod.Key(), why);
  }
  if (const ClaimHold& hold = claims.charge.hold;
      hold.held() &&
      said_.insert(absl::StrCat(pod.meta.uid, " ", hold.reason)).second) {
    spdlog::info("dra: pod {} waits: {}", pod.Key(), hold.reason);
  }
  for (const DraRequestDemand& request : claims.demand.requests) {
    for (const DraAlternativeDemand& alt : request.alternatives) {
      if (alt.undecided.empty()) continue;
      std::string key = absl::StrCat(alt.device_class, "\n", alt.undecided);
      if (!said_.insert(std::move(key)).second) continue;
      spdlog::info(
          "dra: pod {}: {} request {}: {}; kube-scheduler decides where it "
          "fits",
          pod.Key(), request.claim, alt.name, alt.undecided);
    }
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
