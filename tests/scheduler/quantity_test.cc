#include "scheduler/quantity.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

struct QuantityCase {
  std::string_view text;
  int64_t scale;
  int64_t want;
};

TEST(ParseQuantity, ReadsEveryFormTheApiServerAccepts) {
  const QuantityCase kCases[] = {
      {"0", 1, 0},
      {"1", 1, 1},
      {"+5", 1, 5},
      {"500m", 1000, 500},              // 0.5 cpu in milli-CPU
      {"2", 1000, 2000},                // 2 * 1000
      {"1.5", 1000, 1500},              // 1.5 * 1000
      {"0.25", 1000, 250},              // 0.25 * 1000
      {"1.", 1, 1},                     // trailing point
      {"1k", 1, 1000},                  // 10^3
      {"1M", 1, 1000000},               // 10^6
      {"3G", 1, 3000000000},            // 3 * 10^9
      {"1T", 1, 1000000000000},         // 10^12
      {"1E", 1, 1000000000000000000},   // a lone E is exa: 10^18
      {"1Ki", 1, 1024},                 // 2^10
      {"16Mi", 1, 16777216},            // 16 * 2^20
      {"64Gi", 1, 68719476736},         // 64 * 2^30
      {"2Ti", 1, 2199023255552},        // 2 * 2^40
      {"1Ei", 1, 1152921504606846976},  // 2^60
      {"2e3", 1, 2000},                 // 2 * 10^3
      {"2E3", 1, 2000},                 // upper-case exponent
      {"1e+2", 1, 100},                 // explicit positive exponent
      {"15e-1", 1000, 1500},            // 1.5 cpu
      {"1.5Gi", 1, 1610612736},         // 1.5 * 2^30
  };
  for (const QuantityCase& c : kCases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<int64_t> got = ParseQuantity(c.text, c.scale);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(ParseQuantity, RoundsUpNeverDown) {
  const QuantityCase kCases[] = {
      {"0.1m", 1000, 1},   // 0.1 milli-CPU -> 1
      {"100n", 1000, 1},   // 0.0001 milli-CPU -> 1
      {"1500m", 1, 2},     // 1.5 units -> 2
      {"1001m", 1, 2},     // 1.001 -> 2
      {"1e-3", 1, 1},      // 0.001 -> 1
      {"1e-30", 1000, 1},  // tiny but positive -> 1
      {"0.000", 1000, 0},  // zero stays zero
  };
  for (const QuantityCase& c : kCases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<int64_t> got = ParseQuantity(c.text, c.scale);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, c.want);
  }
}

TEST(ParseQuantity, KeepsLongDecimalFractionsExact) {
  // 19 decimals make the divisor 10^19, larger than int64 can hold.
  EXPECT_EQ(ParseQuantity("2.0000000000000000000", 1).value_or(-1),
            2);  // 2 * 10^19 / 10^19
  EXPECT_EQ(ParseQuantity("2.0000000000000000000", 1000).value_or(-1),
            2000);  // 2 cpu in milli-CPU
  EXPECT_EQ(ParseQuantity("1.50000000000000000000", 1000).value_or(-1),
            1500);  // 1.5 * 1000
}

struct BadCase {
  std::string_view text;
  std::string_view message;
};

TEST(ParseQuantity, RejectsMalformedTextNamingTheProblem) {
  const BadCase kCases[] = {
      {"", "invalid quantity \"\": empty"},
      {"-1", "must be non-negative"},
      {"abc", "expected a digit at character 1"},
      {".", "expected a digit at character 2"},
      {"+", "expected a digit at character 2"},
      {"1x", "unknown suffix \"x\" at character 2"},
      {"12 Gi", "unknown suffix \" Gi\" at character 3"},
      {"1gi", "unknown suffix \"gi\""},
      {"1.2.3", "unknown suffix \".3\""},
      {"1e", "unknown suffix \"e\""},
      {"1e3x", "malformed exponent"},
      {"1e+", "malformed exponent"},
      {"1e41", "exponent too large"},
      {"1234567890123456789012345678901", "too many digits at character 31"},
      {"10E", "too large"},
      {"9Ei", "too large"},
  };
  for (const BadCase& c : kCases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<int64_t> got = ParseQuantity(c.text, 1);
    ASSERT_FALSE(got.ok()) << *got;
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(Message(got.status())), HasSubstr(c.message));
  }
}

TEST(ParseQuantity, RejectsValuesThatOverflowAfterScaling) {
  // 10^16 cpu is 10^19 milli-CPU, above INT64_MAX (~9.22 * 10^18).
  EXPECT_FALSE(ParseQuantity("10P", 1000).ok());
  EXPECT_TRUE(ParseQuantity("10P", 1).ok());
}

TEST(ParseScaledQuantity, SaysWhetherRoundingUpDroppedAFraction) {
  struct Case {
    std::string_view text;
    int64_t want;
    bool exact;
  };
  for (const Case& c :
       {Case{"1500m", 1500, true}, Case{"1.5", 1500, true},
        Case{"1Ki", 1024000, true}, Case{"0", 0, true}, Case{"1500u", 2, false},
        Case{"1n", 1, false}, Case{"0.0000000001", 1, false},
        Case{"1000001n", 2, false}, Case{"1.0000001", 1001, false}}) {
    absl::StatusOr<ScaledQuantity> milli = ParseScaledQuantity(c.text, 1000);
    ASSERT_TRUE(milli.ok()) << c.text << ": " << milli.status();
    EXPECT_EQ(milli->value, c.want) << c.text;
    EXPECT_EQ(milli->exact, c.exact) << c.text;
  }
}

TEST(FormatMilli, PrintsWholeUnitsPlainAndTheRestInMilli) {
  EXPECT_EQ(FormatMilli(0), "0");
  EXPECT_EQ(FormatMilli(500), "500m");
  EXPECT_EQ(FormatMilli(2000), "2");
  EXPECT_EQ(FormatMilli(1500), "1500m");
}

}  // namespace
}  // namespace gpusched
