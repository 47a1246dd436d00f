#ifndef GPUSCHED_API_CODEC_DRA_JSON_H_
#define GPUSCHED_API_CODEC_DRA_JSON_H_

// Dynamic Resource Allocation objects of resource.k8s.io/v1 (Kubernetes
// v1.37) in JSON, as the API server writes them, to the domain views of
// scheduler/dra_objects.h. As for Pods and Nodes (k8s_json.h) only the
// fields gpusched uses are read, unknown fields are ignored and null means
// absent. Errors are InvalidArgument naming the field path:
// `ResourceSlice.spec.devices[2].capacity.memory.value: invalid quantity
// "x": ...`.
//
// What is read, beyond metadata:
//   ResourceSlice: spec.driver, spec.pool.{name,generation,
//     resourceSliceCount}, spec.nodeName, spec.sharedCounters[], and per
//     device name, attributes (string, int, bool or version; the list
//     kinds ints/strings/bools/versions are skipped), capacity, taints and
//     consumesCounters[]. Attribute and capacity names are qualified with
//     spec.driver (QualifyDraName); quantities are milli-units.
//   DeviceClass: spec.selectors[].cel.expression, spec.extendedResourceName.
//   ResourceClaim: spec.devices.{requests,constraints}; status.allocation
//     (devices.results[], nodeSelector) and status.reservedFor[].uid.
//   ResourceClaimTemplate: spec.spec.devices, as a claim's spec.devices.
//   DeviceTaintRule: spec.deviceSelector.{driver,pool,device}, spec.taint.
// Rejected, because the scheduler would be misled: a device without a
// name, a quantity that does not parse, a negative count, an unknown
// allocationMode, a request with neither or both of exactly and
// firstAvailable, a selector without cel.expression, and a value of the
// wrong JSON type where an object, array, string, integer or boolean is
// read.

#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/dra_objects.h"
#include "simdjson.h"

namespace gpusched {

// `path` prefixes every error message, e.g. "ResourceSlice" or "items[3]".
absl::StatusOr<ResourceSlice> DecodeResourceSlice(simdjson::dom::element value,
                                                  std::string_view path);
absl::StatusOr<DeviceClass> DecodeDeviceClass(simdjson::dom::element value,
                                              std::string_view path);
absl::StatusOr<ResourceClaim> DecodeResourceClaim(simdjson::dom::element value,
                                                  std::string_view path);
absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(
    simdjson::dom::element value, std::string_view path);
absl::StatusOr<DeviceTaintRule> DecodeDeviceTaintRule(
    simdjson::dom::element value, std::string_view path);

// Convenience: parse `json` then decode it; error paths start with the kind
// ("ResourceSlice", "DeviceClass", ...). Malformed JSON is InvalidArgument
// naming the byte offset, line and column.
absl::StatusOr<ResourceSlice> ResourceSliceFromJson(std::string_view json);
absl::StatusOr<DeviceClass> DeviceClassFromJson(std::string_view json);
absl::StatusOr<ResourceClaim> ResourceClaimFromJson(std::string_view json);
absl::StatusOr<ResourceClaimTemplate> ResourceClaimTemplateFromJson(
    std::string_view json);
absl::StatusOr<DeviceTaintRule> DeviceTaintRuleFromJson(std::string_view json);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_DRA_JSON_H_
