// Durations, weights and quotas as the policy YAML spells them.

#include "policies/value_parsers.h"

#include <cstdint>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/base/strings.h"

namespace gpusched::policy_internal {
namespace {

struct DurationCase {
  std::string text;
  int64_t ms;
};

class DurationTest : public ::testing::TestWithParam<DurationCase> {};

TEST_P(DurationTest, ParsesGoSyntaxToMilliseconds) {
  absl::StatusOr<int64_t> ms = ParseDurationMs(GetParam().text);
  ASSERT_TRUE(ms.ok()) << ms.status();
  EXPECT_EQ(*ms, GetParam().ms);
}

INSTANTIATE_TEST_SUITE_P(
    Go, DurationTest,
    ::testing::Values(DurationCase{"300s", 300'000},
                      DurationCase{"5m", 300'000},
                      DurationCase{"1h30m", 5'400'000},  // 90 x 60 s
                      DurationCase{"250ms", 250}, DurationCase{"0", 0},
                      DurationCase{"0s", 0}, DurationCase{"1.5h", 5'400'000},
                      DurationCase{"1m30.5s", 90'500},
                      DurationCase{"2000us", 2}, DurationCase{"+10s", 10'000},
                      DurationCase{"1h0m0s", 3'600'000}));

struct BadCase {
  std::string text;
  std::string why;
};

class BadDurationTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadDurationTest, ExplainsWhy) {
  absl::StatusOr<int64_t> ms = ParseDurationMs(GetParam().text);
  ASSERT_FALSE(ms.ok());
  EXPECT_EQ(Message(ms.status()), GetParam().why);
}

INSTANTIATE_TEST_SUITE_P(
    Go, BadDurationTest,
    ::testing::Values(
        BadCase{"300",
                "must be a duration such as 300s, 5m, 1h30m or 250ms "
                "(missing unit)"},
        BadCase{"5 m",
                "must be a duration such as 300s, 5m, 1h30m or 250ms "
                "(unknown unit)"},
        BadCase{"-5s", "must be non-negative"},
        BadCase{"",
                "must be a duration such as 300s, 5m, 1h30m or 250ms "
                "(empty)"},
        BadCase{"1d",
                "must be a duration such as 300s, 5m, 1h30m or 250ms "
                "(unknown unit)"},
        BadCase{"1500us", "must be a whole number of milliseconds"},
        BadCase{"99999999999999999999h",
                "must be a duration such as 300s, 5m, 1h30m or 250ms "
                "(too large)"}));

TEST(FormatDurationTest, PrintsTheShortestGoSpelling) {
  EXPECT_EQ(FormatDurationMs(0), "0s");
  EXPECT_EQ(FormatDurationMs(250), "250ms");
  EXPECT_EQ(FormatDurationMs(300'000), "5m");
  EXPECT_EQ(FormatDurationMs(5'400'000), "1h30m");
  EXPECT_EQ(FormatDurationMs(90'500), "1m30.5s");
  EXPECT_EQ(FormatDurationMs(3'600'010), "1h0.01s");
}

TEST(WeightTest, DecimalsAndQuantitiesInThousandths) {
  EXPECT_EQ(*ParseWeightMilli("0.5"), 500);
  EXPECT_EQ(*ParseWeightMilli("2"), 2000);
  EXPECT_EQ(*ParseWeightMilli("1500m"), 1500);
  EXPECT_EQ(*ParseWeightMilli("0"), 0);
  EXPECT_EQ(Message(ParseWeightMilli("-1").status()), "must be non-negative");
  EXPECT_FALSE(ParseWeightMilli("heavy").ok());
}

TEST(QuotaTest, UsesResourceListUnits) {
  EXPECT_EQ(*ParseQuota("cpu", "500m"), 500);
  EXPECT_EQ(*ParseQuota("cpu", "8"), 8000);
  EXPECT_EQ(*ParseQuota("memory", "64Gi"), int64_t{64} << 30);
  EXPECT_EQ(*ParseQuota("nvidia.com/gpu", "8"), 8);
}

TEST(QuotaTest, RefusesAmountsWhoseSumsCouldOverflow) {
  EXPECT_EQ(*ParseQuota("memory", "4Pi"), int64_t{1} << 52);
  absl::StatusOr<int64_t> huge = ParseQuota("memory", "5Pi");
  ASSERT_FALSE(huge.ok());
  EXPECT_THAT(std::string(Message(huge.status())),
              testing::HasSubstr("must be at most 4096Ti"));
  EXPECT_FALSE(ParseQuota("nvidia.com/gpu", "9e18").ok());
}

TEST(NameRulesTest, KubernetesNames) {
  EXPECT_EQ(DnsSubdomainError("team-a.prod"), "");
  EXPECT_NE(DnsSubdomainError("team-a."), "");
  EXPECT_NE(DnsSubdomainError("Team"), "");
  EXPECT_EQ(DnsLabelError("team-a"), "");
  EXPECT_NE(DnsLabelError("team.a"), "");
  EXPECT_EQ(QualifiedNameError("nvidia.com/mig-1g.5gb"), "");
  EXPECT_EQ(QualifiedNameError("cpu"), "");
  EXPECT_NE(QualifiedNameError("Nvidia.com/gpu"), "");
  EXPECT_NE(QualifiedNameError("nvidia.com/"), "");
  EXPECT_EQ(LabelValueError("NVIDIA-H100-80GB-HBM3"), "");
  EXPECT_NE(LabelValueError("a b"), "");
}

}  // namespace
}  // namespace gpusched::policy_internal
