#include "api/kube/lease_follower.h"

#include <gtest/gtest.h>

#include <string>

namespace gpusched::kube {
namespace {

absl::StatusOr<LeaseState> Decode(const std::string& json) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) return absl::InvalidArgumentError("json");
  return DecodeLease(root);
}

const absl::Time kRenewed = absl::FromUnixSeconds(1'800'000'000);

LeaseState HeldFor(std::string holder) {
  return {.holder = std::move(holder), .renewed = kRenewed,
          .duration_seconds = 15};
}

TEST(LeaseStateTest, DecodesKubeSchedulersLease) {
  absl::StatusOr<LeaseState> state = Decode(R"({
    "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
    "metadata": {"name": "gpusched", "namespace": "gpusched-system"},
    "spec": {"holderIdentity": "gpusched-7d9f_2b7c-11",
             "leaseDurationSeconds": 15,
             "acquireTime": "2027-01-15T08:00:00.000000Z",
             "renewTime": "2027-01-15T08:00:10.250000Z",
             "leaseTransitions": 3}})");
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->holder, "gpusched-7d9f_2b7c-11");
  EXPECT_EQ(state->duration_seconds, 15);
  ASSERT_TRUE(state->renewed.has_value());
  EXPECT_EQ(*state->renewed,
            absl::FromCivil(absl::CivilSecond(2027, 1, 15, 8, 0, 10),
                            absl::UTCTimeZone()) +
                absl::Milliseconds(250));
}

TEST(LeaseStateTest, ReleasedLeaseHasNoHolder) {
  absl::StatusOr<LeaseState> state =
      Decode(R"({"spec": {"leaseDurationSeconds": 1}})");
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->holder, "");
  EXPECT_FALSE(HeldBy(*state, "pod-a", kRenewed));
}

TEST(LeaseStateTest, BadRenewTimeNamesTheField) {
  absl::StatusOr<LeaseState> state =
      Decode(R"({"spec": {"holderIdentity": "a_1", "renewTime": "yesterday"}})");
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.status().message().find("Lease.spec.renewTime"),
            std::string::npos)
      << state.status();
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
