#include "api/codec/requeue_state_json.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

std::string DecodeErrorOf(std::string_view text) {
  absl::StatusOr<std::vector<RequeueRecord>> decoded = DecodeRequeueState(text);
  EXPECT_FALSE(decoded.ok()) << text;
  return std::string(decoded.status().message());
}

TEST(RequeueStateJsonTest, RoundTripsEveryField) {
  const std::vector<RequeueRecord> records = {
      {.workload = "ml/train",
       .count = 2,
       .requeue_at_ms = 1'795'000'060'000,
       .queued_from_ms = 1'795'000'000'000,
       .code = ReasonCode::kPodsReadyTimeout,
       .message = "only 1 of 2 members bound within 60s; \"quoted\""},
      {.workload = "ml/eval",
       .count = 3,
       .deactivated = true,
       .code = ReasonCode::kRequeuingLimitExceeded,
       .message = "deactivated"},
      {.workload = "ml/checked", .code = ReasonCode::kAdmissionCheck},
      {.workload = "ml/quiet", .count = 1}};
  absl::StatusOr<std::vector<RequeueRecord>> decoded =
      DecodeRequeueState(EncodeRequeueState(records));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, records);
  EXPECT_THAT(EncodeRequeueState(records),
              HasSubstr(R"("reason":"PodsReadyTimeout")"));
}

TEST(RequeueStateJsonTest, EmptyAndMissingListsAreNoRecords) {
  EXPECT_TRUE(DecodeRequeueState("{}")->empty());
  EXPECT_TRUE(DecodeRequeueState(R"({"workloads":[]})")->empty());
  EXPECT_EQ(EncodeRequeueState({}), R"({"workloads":[]})");
}

TEST(RequeueStateJsonTest, ErrorsNameTheFieldTheyReject) {
  EXPECT_THAT(DecodeErrorOf(R"({"workloads":{}})"),
              HasSubstr("requeue.json.workloads: expected array"));
  EXPECT_THAT(DecodeErrorOf(R"({"workloads":[{"count":1}]})"),
              HasSubstr("requeue.json.workloads[0].workload: missing"));
  EXPECT_THAT(
      DecodeErrorOf(R"({"workloads":[{"workload":"a/b","count":"2"}]})"),
      HasSubstr("requeue.json.workloads[0].count: expected integer"));
  EXPECT_THAT(DecodeErrorOf(R"({"workloads":[{"workload":"a/b","count":-1}]})"),
              HasSubstr("workloads[0].count: cannot be negative"));
  EXPECT_THAT(
      DecodeErrorOf(R"({"workloads":[{"workload":"a/b","requeueAtMs":-5}]})"),
      HasSubstr("workloads[0].requeueAtMs: cannot be negative"));
  EXPECT_THAT(DecodeErrorOf(
                  R"({"workloads":[{"workload":"a/b","count":99999999999}]})"),
              HasSubstr("workloads[0].count: too large"));
  EXPECT_THAT(DecodeErrorOf(
                  R"({"workloads":[{"workload":"a/b","deactivated":"yes"}]})"),
              HasSubstr("workloads[0].deactivated: expected boolean"));
  EXPECT_THAT(DecodeErrorOf(
                  R"({"workloads":[{"workload":"a/b","reason":"Preempted"}]})"),
              HasSubstr("workloads[0].reason: \"Preempted\" is none of"));
  EXPECT_THAT(DecodeErrorOf(R"({"workloads":[)"), HasSubstr("malformed JSON"));
  EXPECT_THAT(DecodeErrorOf("[]"), HasSubstr("expected object"));
}

}  // namespace
}  // namespace gpusched
