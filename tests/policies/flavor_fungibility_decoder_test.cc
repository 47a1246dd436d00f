// ClusterQueue spec.flavorFungibility: Kueue's values and defaults and the
// deprecated v1beta1 spellings (its errors: document_errors_test.cc).

#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "policies/policy_loader.h"

namespace gpusched {
namespace {

// The fungibility ClusterQueue "a" decodes to with `fungibility` as its
// spec.flavorFungibility (a YAML flow mapping; "" leaves it out).
FlavorFungibility Decoded(std::string_view api, std::string_view fungibility) {
  std::string yaml = "apiVersion: kueue.x-k8s.io/";
  yaml += api;
  yaml += "\nkind: ClusterQueue\nmetadata: {name: a}\nspec: {";
  if (!fungibility.empty()) {
    yaml += "flavorFungibility: ";
    yaml += fungibility;
  }
  yaml += "}\n";
  const PolicyResult result = ParsePolicyText(yaml, "p.yaml");
  EXPECT_TRUE(result.errors.empty())
      << (result.errors.empty() ? "" : result.errors[0].message);
  if (!result.policy) return {};
  return result.policy->cluster_queues.at(0).flavor_fungibility;
}

TEST(FlavorFungibilityDecoderTest, AbsentTakesKueuesDefaults) {
  const FlavorFungibility f = Decoded("v1beta2", "");
  EXPECT_EQ(f.when_can_borrow, FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(f.when_can_preempt, FungibilityPolicy::kTryNextFlavor);
  EXPECT_FALSE(f.preference.has_value());
}

TEST(FlavorFungibilityDecoderTest, EmptyMappingTakesKueuesDefaults) {
  const FlavorFungibility f = Decoded("v1beta2", "{}");
  EXPECT_EQ(f.when_can_borrow, FungibilityPolicy::kMayStopSearch);
  EXPECT_EQ(f.when_can_preempt, FungibilityPolicy::kTryNextFlavor);
}

TEST(FlavorFungibilityDecoderTest, ReadsBothPoliciesAndPreference) {
  const FlavorFungibility f =
      Decoded("v1beta2",
              "{whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, "
              "preference: PreemptionOverBorrowing}");
  EXPECT_EQ(f.when_can_borrow, FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(f.when_can_preempt, FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(f.preference, FlavorPreference::kPreemptionOverBorrowing);
}

TEST(FlavorFungibilityDecoderTest, ReadsMayStopSearchForPreemption) {
  const FlavorFungibility f =
      Decoded("v1beta2", "{whenCanPreempt: MayStopSearch}");
  EXPECT_EQ(f.when_can_preempt, FungibilityPolicy::kMayStopSearch);
}

// apis/kueue/v1beta1/clusterqueue_conversion.go: Borrow and Preempt become
// MayStopSearch.
TEST(FlavorFungibilityDecoderTest, V1beta1BorrowIsMayStopSearch) {
  const FlavorFungibility f = Decoded(
      "v1beta1", "{whenCanBorrow: Borrow, whenCanPreempt: TryNextFlavor}");
  EXPECT_EQ(f.when_can_borrow, FungibilityPolicy::kMayStopSearch);
}

TEST(FlavorFungibilityDecoderTest, V1beta1PreemptIsMayStopSearch) {
  const FlavorFungibility f =
      Decoded("v1beta1",
              "{whenCanBorrow: TryNextFlavor, whenCanPreempt: "
              "Preempt}");
  EXPECT_EQ(f.when_can_borrow, FungibilityPolicy::kTryNextFlavor);
  EXPECT_EQ(f.when_can_preempt, FungibilityPolicy::kMayStopSearch);
}

}  // namespace
}  // namespace gpusched
