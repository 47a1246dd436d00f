// coordination.k8s.io/v1 Lease JSON: holder, renewal and duration, and the
// field named when a Lease cannot be read.
#include "api/codec/lease_json.h"

#include <gtest/gtest.h>

#include <string>

#include "absl/time/civil_time.h"

namespace gpusched {
namespace {

absl::StatusOr<LeaseState> Decode(const std::string& json) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) return absl::InvalidArgumentError("json");
  return DecodeLease(root);
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
  EXPECT_FALSE(state->renewed.has_value());
}

TEST(LeaseStateTest, BadRenewTimeNamesTheField) {
  absl::StatusOr<LeaseState> state = Decode(
      R"({"spec": {"holderIdentity": "a_1", "renewTime": "yesterday"}})");
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.status().message().find("Lease.spec.renewTime"),
            std::string::npos)
      << state.status();
}

TEST(LeaseStateTest, WrongTypesNameTheField) {
  struct Case {
    std::string json;
    std::string message;
  } cases[] = {
      {R"({"spec": {"holderIdentity": 7}})",
       "Lease.spec.holderIdentity: expected string, got number"},
      {R"({"spec": {"leaseDurationSeconds": "15"}})",
       "Lease.spec.leaseDurationSeconds: expected integer, got string"},
      {R"({"spec": []})", "Lease.spec: expected object, got array"},
      {R"([])", "Lease: expected object, got array"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<LeaseState> state = Decode(c.json);
    ASSERT_FALSE(state.ok()) << c.json;
    EXPECT_EQ(state.status().message(), c.message);
  }
}

TEST(LeaseListTest, TheLastItemIsTheLease) {
  absl::StatusOr<std::optional<LeaseState>> state = DecodeLeaseList(
      R"({"kind":"LeaseList","metadata":{"resourceVersion":"9"},"items":[
          {"spec":{"holderIdentity":"a_1","leaseDurationSeconds":15}}]})");
  ASSERT_TRUE(state.ok()) << state.status();
  ASSERT_TRUE(state->has_value());
  EXPECT_EQ((*state)->holder, "a_1");
  EXPECT_EQ((*state)->duration_seconds, 15);
}

TEST(LeaseListTest, NoItemsIsNoLease) {
  absl::StatusOr<std::optional<LeaseState>> state =
      DecodeLeaseList(R"({"kind":"LeaseList","items":[]})");
  ASSERT_TRUE(state.ok());
  EXPECT_FALSE(state->has_value());
}

TEST(LeaseListTest, ABadItemIsNamedWithItsIndex) {
  absl::StatusOr<std::optional<LeaseState>> state = DecodeLeaseList(
      R"({"items":[{"spec":{}},{"spec":{"renewTime":"soon"}}]})");
  ASSERT_FALSE(state.ok());
  EXPECT_NE(state.status().message().find(
                "LeaseList.items[1].spec.renewTime: invalid RFC 3339 time"),
            std::string::npos)
      << state.status();
  EXPECT_FALSE(DecodeLeaseList("{").ok());
}

}  // namespace
}  // namespace gpusched
