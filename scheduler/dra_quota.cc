#include "scheduler/dra_quota.h"

#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

constexpr std::string_view kNvidiaGpuClass = "gpu.nvidia.com";

// What a DeviceClass's devices count as in quota.
struct ClassQuota {
  enum class Kind { kResource, kOutside, kUnmapped, kClassNotKnown };
  Kind kind = Kind::kUnmapped;
  std::string resource;
};

// The policy's mappings decide when it names any resource; otherwise the
// defaults do, which need the class itself (its extendedResourceName).
ClassQuota QuotaOfClass(std::string_view class_name, const DraCatalog& catalog,
                        const std::vector<DeviceClassMapping>& mappings) {
  using Kind = ClassQuota::Kind;
  bool mapped_explicitly = false;
  for (const DeviceClassMapping& mapping : mappings) {
    for (const std::string& name : mapping.device_classes) {
      if (name != class_name) continue;
      if (mapping.outside_quota) return {Kind::kOutside, ""};
      return {Kind::kResource, mapping.resource};
    }
    mapped_explicitly |= !mapping.outside_quota;
  }
  if (mapped_explicitly) return {Kind::kUnmapped, ""};
  auto found = catalog.classes.find(class_name);
  if (found != catalog.classes.end()) {
    std::string resource = DefaultClassResource(found->second);
    if (resource.empty()) return {Kind::kUnmapped, ""};
    return {Kind::kResource, std::move(resource)};
  }
  if (class_name == kNvidiaGpuClass) {
    return {Kind::kResource, std::string(kNvidiaGpu)};
  }
  return {Kind::kClassNotKnown, ""};
}

// What one request (or one of its alternatives) is charged.
struct RequestCharge {
  enum class Kind { kCharged, kOutside, kHeld };
  Kind kind = Kind::kCharged;
  std::string resource;
  int64_t count = 0;
  ClaimHold hold;  // kHeld: the field path and why

  std::string Describe() const {
    return kind == Kind::kOutside ? std::string("nothing (outside quota)")
                                  : absl::StrCat(count, " ", resource);
  }
};

RequestCharge Held(ClaimHold::Kind kind, std::string reason) {
  return {.kind = RequestCharge::Kind::kHeld,
          .hold = {.kind = kind, .reason = std::move(reason)}};
}

// `path` is the alternative's field path ("spec.devices.requests[0]
// .exactly").
RequestCharge ChargeAlternative(
    const DraRequestAlternative& alt, const std::string& path,
    const DraCatalog& catalog,
    const std::vector<DeviceClassMapping>& mappings) {
  using Kind = ClaimHold::Kind;
  if (alt.admin_access) {
    return Held(Kind::kInadmissible,
                absl::StrCat(path,
                             ".adminAccess: Unsupported value: true: admin "
                             "access is not charged to quota"));
  }
  if (alt.mode == DraRequestAlternative::Mode::kAll) {
    return Held(Kind::kInadmissible,
                absl::StrCat(path,
                             ".allocationMode: Unsupported value: \"All\": "
                             "quota cannot charge a device count known only "
                             "at allocation"));
  }
  const ClassQuota quota = QuotaOfClass(alt.device_class, catalog, mappings);
  switch (quota.kind) {
    case ClassQuota::Kind::kResource:
      return {.resource = quota.resource, .count = alt.count};
    case ClassQuota::Kind::kOutside:
      return {.kind = RequestCharge::Kind::kOutside};
    case ClassQuota::Kind::kClassNotKnown:
      return Held(Kind::kClaimNotKnown,
                  absl::StrCat(path,
                               ".deviceClassName: waiting for "
                               "DeviceClass \"",
                               alt.device_class, "\": not known yet"));
    case ClassQuota::Kind::kUnmapped:
      break;
  }
  return Held(Kind::kInadmissible,
              absl::StrCat(path, ".deviceClassName: Not found: DeviceClass \"",
                           alt.device_class,
                           "\" maps to no quota resource (SchedulerConfig "
                           "spec.resources.deviceClassMappings; "
                           "deviceClassesOutsideQuota leaves a class "
                           "uncharged)"));
}

// `path` is the request's field path ("spec.devices.requests[0]").
RequestCharge ChargeRequest(const DraDeviceRequest& request,
                            const std::string& path, const DraCatalog& catalog,
                            const std::vector<DeviceClassMapping>& mappings) {
  if (!request.first_available) {
    if (request.alternatives.empty()) return {};  // counts nothing
    return ChargeAlternative(request.alternatives.front(),
                             absl::StrCat(path, ".exactly"), catalog, mappings);
  }
  std::optional<RequestCharge> first;
  for (size_t j = 0; j < request.alternatives.size(); ++j) {
    RequestCharge each = ChargeAlternative(
        request.alternatives[j], absl::StrCat(path, ".firstAvailable[", j, "]"),
        catalog, mappings);
    if (each.kind == RequestCharge::Kind::kHeld) return each;
    if (!first) {
      first = std::move(each);
    } else if (each.kind != first->kind || each.resource != first->resource ||
               each.count != first->count) {
      return Held(
          ClaimHold::Kind::kInadmissible,
          absl::StrCat(path,
                       ".firstAvailable: Invalid value: its "
                       "alternatives charge differently (",
                       first->Describe(), ", ", each.Describe(),
                       "): quota cannot tell which one will be allocated"));
    }
  }
  return first.value_or(RequestCharge{});
}

// The spec a claim reference stands for, who holds it and the path of its
// requests there.
struct ClaimSource {
  const DraClaimSpec* spec = nullptr;
  std::string owner;  // "ResourceClaimTemplate ml/two-gpus"
  std::string requests_path;
};

ClaimSource SourceOf(const Pod& pod, const PodClaimRef& ref,
                     const DraCatalog& catalog) {
  const std::string& ns = pod.meta.namespace_name;
  ClaimSource out;
  if (const std::string& name = ref.ResolvedClaimName(); !name.empty()) {
    const std::string key = absl::StrCat(ns, "/", name);
    out.owner = absl::StrCat("ResourceClaim ", key);
    out.requests_path = "spec.devices.requests";
    auto claim = catalog.claims.find(key);
    if (claim != catalog.claims.end()) out.spec = &claim->second.spec;
  }
  if (out.spec != nullptr || ref.template_name.empty()) return out;
  const std::string key = absl::StrCat(ns, "/", ref.template_name);
  out.owner = absl::StrCat("ResourceClaimTemplate ", key);
  out.requests_path = "spec.spec.devices.requests";
  auto found = catalog.templates.find(key);
  if (found != catalog.templates.end()) out.spec = &found->second.spec;
  return out;
}

// Keeps the first inadmissible request, else the first claim not known.
void NoteHold(ClaimHold hold, ClaimCharge& out) {
  if (out.hold.kind == ClaimHold::Kind::kInadmissible) return;
  if (out.hold.held() && hold.kind != ClaimHold::Kind::kInadmissible) return;
  out.hold = std::move(hold);
}

void ChargeSpec(const ClaimSource& source, const std::string& pod_ref,
                const DraCatalog& catalog,
                const std::vector<DeviceClassMapping>& mappings,
                ClaimCharge& out) {
  const std::vector<DraDeviceRequest>& requests = source.spec->requests;
  for (size_t i = 0; i < requests.size(); ++i) {
    RequestCharge charge = ChargeRequest(
        requests[i], absl::StrCat(source.requests_path, "[", i, "]"), catalog,
        mappings);
    switch (charge.kind) {
      case RequestCharge::Kind::kCharged:
        if (!charge.resource.empty()) {
          out.requests.Add(charge.resource, charge.count);
        }
        break;
      case RequestCharge::Kind::kOutside:
        out.uncharged.push_back(
            absl::StrCat(source.owner, " request ", requests[i].name,
                         ": its DeviceClass is outside quota "
                         "(deviceClassesOutsideQuota)"));
        break;
      case RequestCharge::Kind::kHeld:
        charge.hold.reason =
            absl::StrCat(pod_ref, ": ", source.owner, " ", charge.hold.reason);
        NoteHold(std::move(charge.hold), out);
        break;
    }
  }
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
  for (size_t k = 0; k < pod.resource_claims.size(); ++k) {
    const PodClaimRef& ref = pod.resource_claims[k];
    const std::string pod_ref =
        absl::StrCat("pod spec.resourceClaims[", k, "] (", ref.name, ")");
    const ClaimSource source = SourceOf(pod, ref, catalog);
    if (source.owner.empty()) continue;  // names no claim: nothing to charge
    if (source.spec == nullptr) {
      NoteHold({.kind = ClaimHold::Kind::kClaimNotKnown,
                .reason = absl::StrCat(pod_ref, ": waiting for ", source.owner,
                                       ": not known yet")},
               out);
      continue;
    }
    ChargeSpec(source, pod_ref, catalog, mappings, out);
  }
  return out;
}

}  // namespace gpusched
