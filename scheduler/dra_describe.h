// How the read surfaces (explain, the GPU map, the metrics) name and sort
// a node's DRA devices, so that each says the same of a device: its state
// of four, its taints as kubectl prints a node's, and NVIDIA's device type.
#ifndef GPUSCHED_SCHEDULER_DRA_DESCRIBE_H_
#define GPUSCHED_SCHEDULER_DRA_DESCRIBE_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "scheduler/dra_inventory.h"

namespace gpusched {

// One state per device, the first that holds: a claim's allocation names
// it; a NoSchedule or NoExecute taint keeps it off; partitions spent the
// shared counters it needs; else it is free.
enum class DraDeviceCondition { kAllocated, kTainted, kCountersSpent, kFree };
inline constexpr std::array<DraDeviceCondition, 4> kDraDeviceConditions = {
    DraDeviceCondition::kFree, DraDeviceCondition::kAllocated,
    DraDeviceCondition::kTainted, DraDeviceCondition::kCountersSpent};

DraDeviceCondition ConditionOf(const DraDeviceState& state);
// "free", "allocated", "tainted", "counters_spent" (a metric label value).
std::string_view DraConditionName(DraDeviceCondition condition);

// "xid=79:NoExecute", or "xid:NoExecute" without a value.
std::string FormatDeviceTaint(const DeviceTaint& taint);
// The taints that keep the device off (NoSchedule, NoExecute), joined by
// ", "; "" when none does.
std::string BlockingTaints(const DraDevice& device);

// A string attribute in the driver's own domain ("type" of
// gpu.nvidia.com: "gpu", "mig"), or "" when absent or not a string.
std::string DriverTextAttribute(const DraDeviceState& state,
                                std::string_view name);

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_DESCRIBE_H_
