#include "scheduler/dra_quota.h"

#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

constexpr std::string_view kNvidiaGpuClass = "gpu.nvidia.com";

// The resource `class_name` counts as, or "" when it counts as none.
std::string ResourceOf(std::string_view class_name, const DraCatalog& catalog,
                       const std::vector<DeviceClassMapping>& mappings) {
  if (!mappings.empty()) {
    for (const DeviceClassMapping& mapping : mappings) {
      for (const std::string& name : mapping.device_classes) {
        if (name == class_name) return mapping.resource;
      }
    }
    return "";
  }
  auto found = catalog.classes.find(class_name);
  if (found != catalog.classes.end()) {
    return DefaultClassResource(found->second);
  }
  return class_name == kNvidiaGpuClass ? std::string(kNvidiaGpu) : "";
}

struct Charge {
  std::string resource;
  int64_t count = 0;
};

// One request's charge, or why it has none.
std::optional<Charge> ChargeRequest(
    const DraDeviceRequest& request, const DraCatalog& catalog,
    const std::vector<DeviceClassMapping>& mappings, std::string& why) {
  std::optional<Charge> charge;
  for (const DraRequestAlternative& alt : request.alternatives) {
    if (alt.mode == DraRequestAlternative::Mode::kAll) {
      why = "allocation mode All is not counted";
      return std::nullopt;
    }
    if (alt.admin_access) {
      why = "admin access takes no device";
      return std::nullopt;
    }
    Charge this_one{ResourceOf(alt.device_class, catalog, mappings), alt.count};
    if (this_one.resource.empty()) {
      why = absl::StrCat("DeviceClass ", alt.device_class,
                         " maps to no quota resource");
      return std::nullopt;
    }
    if (charge.has_value() && (charge->resource != this_one.resource ||
                               charge->count != this_one.count)) {
      why = "its firstAvailable alternatives differ in resource or count";
      return std::nullopt;
    }
    charge = this_one;
  }
  return charge;
}

const DraClaimSpec* SpecOf(const Pod& pod, const PodClaimRef& ref,
                           const DraCatalog& catalog, std::string& owner) {
  const std::string& ns = pod.meta.namespace_name;
  const std::string& name = ref.ResolvedClaimName();
  if (!name.empty()) {
    const std::string key = absl::StrCat(ns, "/", name);
    owner = absl::StrCat("claim ", key);
    auto claim = catalog.claims.find(key);
    if (claim != catalog.claims.end()) return &claim->second.spec;
  }
  if (ref.template_name.empty()) return nullptr;
  owner = absl::StrCat("template ", ns, "/", ref.template_name);
  auto found = catalog.templates.find(absl::StrCat(ns, "/", ref.template_name));
  return found == catalog.templates.end() ? nullptr : &found->second.spec;
}

}  // namespace

std::string DefaultClassResource(const DeviceClass& device_class) {
  if (!device_class.extended_resource_name.empty()) {
    return device_class.extended_resource_name;
  }
  return device_class.meta.name == kNvidiaGpuClass ? std::string(kNvidiaGpu)
                                                   : "";
}

ClaimCharge ChargeClaims(const Pod& pod, const DraCatalog& catalog,
                         const std::vector<DeviceClassMapping>& mappings) {
  ClaimCharge out;
  for (const PodClaimRef& ref : pod.resource_claims) {
    std::string owner;
    const DraClaimSpec* spec = SpecOf(pod, ref, catalog, owner);
    if (spec == nullptr) {
      out.uncharged.push_back(absl::StrCat(
          owner.empty() ? "claim " + ref.name : owner, ": not known yet"));
      continue;
    }
    for (const DraDeviceRequest& request : spec->requests) {
      std::string why;
      std::optional<Charge> charge =
          ChargeRequest(request, catalog, mappings, why);
      if (charge.has_value()) {
        out.requests.Add(charge->resource, charge->count);
      } else {
        out.uncharged.push_back(
            absl::StrCat(owner, " request ", request.name, ": ", why));
      }
    }
  }
  return out;
}

}  // namespace gpusched
