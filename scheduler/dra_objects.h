#ifndef GPUSCHED_SCHEDULER_DRA_OBJECTS_H_
#define GPUSCHED_SCHEDULER_DRA_OBJECTS_H_

// Plain domain views of the Dynamic Resource Allocation objects
// (resource.k8s.io/v1, as served by Kubernetes v1.37) that gpusched reads:
// the devices drivers publish (ResourceSlice), how users ask for them
// (DeviceClass, ResourceClaim, ResourceClaimTemplate) and which devices are
// kept off (DeviceTaintRule). Only the fields gpusched uses are kept; the
// codec in api/codec/dra_json.h fills them from JSON.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/k8s_objects.h"

namespace gpusched {

// One typed attribute value (resource.k8s.io/v1 DeviceAttribute). Exactly
// one of the four kinds; list-valued attributes are not read.
struct DraAttribute {
  enum class Kind { kString, kInt, kBool, kVersion };
  Kind kind = Kind::kString;
  std::string text;  // kString and kVersion (semantic version text)
  int64_t number = 0;
  bool flag = false;

  friend bool operator==(const DraAttribute&, const DraAttribute&) = default;
};

// Attribute and capacity names are stored fully qualified
// ("gpu.nvidia.com/productName"): a name the driver wrote without a domain
// is in the driver's own domain, as kube-scheduler's CEL environment reads
// it (device.attributes['gpu.nvidia.com'].productName).
using DraAttributes = std::map<std::string, DraAttribute, std::less<>>;
// Capacities in milli-units (80Gi of memory is 85899345920000), so that
// fractional quantities compare exactly.
using DraQuantities = std::map<std::string, int64_t, std::less<>>;

// A taint on a device (KEP-5055): NoSchedule keeps new allocations off,
// NoExecute also evicts the pods using it, None only informs.
struct DeviceTaint {
  std::string key;
  std::string value;
  std::string effect;  // NoSchedule | NoExecute | None

  friend bool operator==(const DeviceTaint&, const DeviceTaint&) = default;
};

struct DeviceToleration {
  std::string key;  // empty with operator Exists tolerates every key
  std::string op;   // "Equal" (default) | "Exists"
  std::string value;
  std::string effect;  // empty tolerates every effect
};

// What one device takes from its slice's shared counters (partitionable
// devices: a MIG partition takes memory slices of its parent GPU).
struct DraCounterConsumption {
  std::string counter_set;
  DraQuantities counters;  // milli-units

  friend bool operator==(const DraCounterConsumption&,
                         const DraCounterConsumption&) = default;
};

struct DraCounterSet {
  std::string name;
  DraQuantities counters;  // milli-units
};

struct DraDevice {
  std::string name;  // unique within its pool: "gpu-0", "gpu-0-mig-1g.10gb-0"
  DraAttributes attributes;
  DraQuantities capacity;
  std::vector<DraCounterConsumption> consumes_counters;
  std::vector<DeviceTaint> taints;

  friend bool operator==(const DraDevice&, const DraDevice&) = default;
};

// A ResourceSlice: some or all of one driver's pool of devices. gpusched
// reads node-local slices (spec.nodeName); slices for all nodes or a node
// selector hold network-attached devices, not a node's GPUs.
struct ResourceSlice {
  ObjectMeta meta;
  std::string driver;  // "gpu.nvidia.com"
  std::string pool;
  int64_t pool_generation = 0;
  int64_t pool_slice_count = 1;
  std::string node_name;  // "" unless node-local
  std::vector<DraCounterSet> shared_counters;
  std::vector<DraDevice> devices;
};

// A DeviceClass: the selectors every request naming it adds, and the
// extended resource (KEP-5004) an ordinary container request is served by.
struct DeviceClass {
  ObjectMeta meta;
  std::vector<std::string> selectors;  // CEL expressions, all must hold
  std::string extended_resource_name;  // "" unless set
};

// One way to satisfy a request: `exactly`, or one of `firstAvailable`.
struct DraRequestAlternative {
  std::string name;  // the request's, or "request/subrequest"
  std::string device_class;
  std::vector<std::string> selectors;  // CEL expressions, all must hold
  enum class Mode { kExactCount, kAll };
  Mode mode = Mode::kExactCount;
  int64_t count = 1;
  bool admin_access = false;
  std::vector<DeviceToleration> tolerations;
};

struct DraDeviceRequest {
  std::string name;
  // One entry for `exactly`; the subrequests in order for firstAvailable.
  std::vector<DraRequestAlternative> alternatives;
  bool first_available = false;
};

// matchAttribute / distinctAttribute over some requests (all when empty).
struct DraConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;     // fully qualified, or ""
  std::string distinct_attribute;  // fully qualified, or ""
};

struct DraClaimSpec {
  std::vector<DraDeviceRequest> requests;
  std::vector<DraConstraint> constraints;
};

// A device some claim's status.allocation names: in use while it does.
struct DraAllocatedDevice {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  bool admin_access = false;  // admin access does not take the device

  friend bool operator==(const DraAllocatedDevice&,
                         const DraAllocatedDevice&) = default;
};

struct ResourceClaim {
  ObjectMeta meta;
  DraClaimSpec spec;
  bool allocated = false;  // status.allocation is set
  std::vector<DraAllocatedDevice> allocation;
  // The node the allocation is bound to (its nodeSelector's
  // metadata.name), "" when not node-local.
  std::string allocated_node;
  std::vector<std::string> reserved_for_uids;  // status.reservedFor[].uid
};

struct ResourceClaimTemplate {
  ObjectMeta meta;
  DraClaimSpec spec;  // spec.spec
};

// A DeviceTaintRule: a taint on every device its selector names (all unset
// selects every device).
struct DeviceTaintRule {
  ObjectMeta meta;
  std::optional<std::string> driver;
  std::optional<std::string> pool;
  std::optional<std::string> device;
  DeviceTaint taint;
};

// "namespace/name" for namespaced DRA objects, "name" for cluster ones.
std::string DraKey(const ObjectMeta& meta);

// The fully qualified form of an attribute or capacity name: a name
// without a '/' is in `driver`'s domain.
std::string QualifyDraName(std::string_view name, std::string_view driver);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_OBJECTS_H_
