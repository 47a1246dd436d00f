#include "api/kube/lease_follower.h"

#include <gtest/gtest.h>

#include <string>

namespace gpusched::kube {
namespace {

const absl::Time kRenewed = absl::FromUnixSeconds(1'800'000'000);

LeaseState HeldFor(std::string holder) {
  return {
      .holder = std::move(holder), .renewed = kRenewed, .duration_seconds = 15};
}

TEST(HeldByTest, OwnPodsSchedulerHoldsItUntilExpiry) {
  const LeaseState lease = HeldFor("pod-a_5f3e");
  EXPECT_TRUE(HeldBy(lease, "pod-a", kRenewed + absl::Seconds(14)));
  EXPECT_FALSE(HeldBy(lease, "pod-a", kRenewed + absl::Seconds(15)));
}

TEST(HeldByTest, IdentityMustMatchUpToTheUnderscore) {
  const LeaseState lease = HeldFor("pod-ab_5f3e");
  EXPECT_FALSE(HeldBy(lease, "pod-a", kRenewed));
  EXPECT_TRUE(HeldBy(lease, "pod-ab", kRenewed));
  EXPECT_FALSE(HeldBy(HeldFor("pod-a"), "pod-a", kRenewed));
  EXPECT_FALSE(HeldBy(lease, "", kRenewed));
}

}  // namespace
}  // namespace gpusched::kube
