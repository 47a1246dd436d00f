// ClusterQueue spec.flavorFungibility, with Kueue's values, defaults and
// validation (apis/kueue/v1beta2/clusterqueue_types.go, FlavorFungibility).

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include "policies/object_decoders.h"

namespace gpusched::policy_internal {
namespace {

// Spellings in the order of FungibilityPolicy's enumerators; v1beta1 adds
// a deprecated one per field: `Borrow` and `Preempt` both meant "stop
// here", which Kueue's conversion maps to MayStopSearch
// (apis/kueue/v1beta1/clusterqueue_conversion.go). v1beta2's enums lack
// them (apis/kueue/v1beta2/clusterqueue_types.go).
constexpr std::array<std::string_view, 3> kWhenCanBorrow = {
    "MayStopSearch", "TryNextFlavor", "Borrow"};
constexpr std::array<std::string_view, 3> kWhenCanPreempt = {
    "MayStopSearch", "TryNextFlavor", "Preempt"};
constexpr std::array<std::string_view, 2> kPreferences = {
    "BorrowingOverPreemption", "PreemptionOverBorrowing"};

void ReadPolicyInto(DocContext& doc, const Value& value,
                    std::span<const std::string_view> names,
                    FungibilityPolicy* out) {
  if (std::optional<int> index = ReadEnum(doc, value, names)) {
    *out = *index == 1 ? FungibilityPolicy::kTryNextFlavor
                       : FungibilityPolicy::kMayStopSearch;
  }
}

}  // namespace

FlavorFungibility DecodeFlavorFungibility(DocContext& doc, const Value& value,
                                          bool v1beta1) {
  FlavorFungibility fungibility;
  if (!value.present()) return fungibility;
  const size_t spellings = v1beta1 ? 3 : 2;
  MapReader reader(doc, value);
  ReadPolicyInto(doc, reader.Get("whenCanBorrow"),
                 std::span(kWhenCanBorrow).first(spellings),
                 &fungibility.when_can_borrow);
  ReadPolicyInto(doc, reader.Get("whenCanPreempt"),
                 std::span(kWhenCanPreempt).first(spellings),
                 &fungibility.when_can_preempt);
  const Value preference = reader.Get("preference");
  std::optional<int> index = ReadEnum(doc, preference, kPreferences);
  reader.Finish();
  if (!index) return fungibility;
  fungibility.preference = static_cast<FlavorPreference>(*index);
  // Kueue's CEL rule on FlavorFungibility: a preference only chooses among
  // candidates when the search goes on past both borrowing and preemption.
  if (fungibility.when_can_borrow != FungibilityPolicy::kTryNextFlavor ||
      fungibility.when_can_preempt != FungibilityPolicy::kTryNextFlavor) {
    doc.Error(preference.line, preference.path,
              InvalidValue(preference.node.Scalar(),
                           "preference can only be set when both "
                           "whenCanBorrow and whenCanPreempt are "
                           "TryNextFlavor"));
  }
  return fungibility;
}

}  // namespace gpusched::policy_internal
