#include "scheduler/dra_describe.h"

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {

DraDeviceCondition ConditionOf(const DraDeviceState& state) {
  if (!state.claim.empty()) return DraDeviceCondition::kAllocated;
  if (state.tainted()) return DraDeviceCondition::kTainted;
  if (state.counters_spent) return DraDeviceCondition::kCountersSpent;
  return DraDeviceCondition::kFree;
}

std::string_view DraConditionName(DraDeviceCondition condition) {
  switch (condition) {
    case DraDeviceCondition::kAllocated:
      return "allocated";
    case DraDeviceCondition::kTainted:
      return "tainted";
    case DraDeviceCondition::kCountersSpent:
      return "counters_spent";
    case DraDeviceCondition::kFree:
      break;
  }
  return "free";
}

std::string FormatDeviceTaint(const DeviceTaint& taint) {
  return taint.value.empty()
             ? absl::StrCat(taint.key, ":", taint.effect)
             : absl::StrCat(taint.key, "=", taint.value, ":", taint.effect);
}

std::string BlockingTaints(const DraDevice& device) {
  std::string out;
  for (const DeviceTaint& taint : device.taints) {
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    absl::StrAppend(&out, out.empty() ? "" : ", ", FormatDeviceTaint(taint));
  }
  return out;
}

std::string DriverTextAttribute(const DraDeviceState& state,
                                std::string_view name) {
  auto it =
      state.device.attributes.find(absl::StrCat(state.driver, "/", Sv(name)));
  if (it == state.device.attributes.end() ||
      it->second.kind != DraAttribute::Kind::kString) {
    return "";
  }
  return it->second.text;
}

}  // namespace gpusched
