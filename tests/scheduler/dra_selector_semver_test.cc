#include "scheduler/dra_selector_semver.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

TEST(SemverTest, ReadsStrictSemanticVersions) {
  absl::StatusOr<Semver> version = ParseSemver("580.0.0-beta.2+build.7");
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->major, 580u);
  EXPECT_EQ(version->minor, 0u);
  EXPECT_EQ(version->patch, 0u);
  EXPECT_EQ(version->prerelease, "beta.2");
  absl::StatusOr<Semver> largest =
      ParseSemver("18446744073709551615.0.0--x-.0+a-b.C");
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_EQ(largest->major, 18446744073709551615u);
  EXPECT_EQ(largest->prerelease, "-x-.0");
}

TEST(SemverTest, RejectsWhatCelsSemverRejectsSayingWhy) {
  struct Case {
    std::string_view text;
    std::string_view why;
  };
  for (const Case& c : std::vector<Case>{
           {"", "empty"},
           {"550.54", "No Major.Minor.Patch"},
           {"v1.0.0", "Invalid character(s) found in Major"},
           {" 1.0.0", "Invalid character(s) found in Major"},
           {"01.0.0", "Major number must not contain leading zeroes"},
           {"1..0", "Minor number is not a 64-bit number"},
           {"1.0.00", "Patch number must not contain leading zeroes"},
           {"1.0.0.1", "Invalid character(s) found in Patch"},
           {"18446744073709551616.0.0", "not a 64-bit number"},
           {"1.0.0-", "Prerelease is empty"},
           {"1.0.0-a..b", "Prerelease is empty"},
           {"1.0.0-01", "without leading zeroes"},
           {"1.0.0-a_b", "Invalid character(s) found in prerelease"},
           {"1.0.0+", "Build meta data is empty"},
           {"1.0.0+a+b", "Invalid character(s) found in build meta data"},
       }) {
    absl::StatusOr<Semver> version = ParseSemver(c.text);
    ASSERT_FALSE(version.ok()) << c.text;
    EXPECT_THAT(std::string(version.status().message()), HasSubstr(c.why))
        << c.text;
  }
}

Semver Parsed(std::string_view text) {
  absl::StatusOr<Semver> version = ParseSemver(text);
  EXPECT_TRUE(version.ok()) << text << ": " << version.status();
  return version.value_or(Semver{});
}

// semver.org's example of precedence, each below the next.
TEST(SemverTest, OrdersBySemverPrecedence) {
  const std::vector<std::string_view> ascending = {
      "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
      "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
      "1.0.0-rc.1",  "1.0.0",         "1.0.1",
      "1.2.0",       "2.0.0",         "10.0.0"};
  for (size_t i = 0; i + 1 < ascending.size(); ++i) {
    EXPECT_EQ(CompareSemver(Parsed(ascending[i]), Parsed(ascending[i + 1])), -1)
        << ascending[i] << " < " << ascending[i + 1];
    EXPECT_EQ(CompareSemver(Parsed(ascending[i + 1]), Parsed(ascending[i])), 1)
        << ascending[i + 1] << " > " << ascending[i];
  }
}

TEST(SemverTest, BuildMetadataDoesNotCount) {
  EXPECT_EQ(CompareSemver(Parsed("1.0.0-rc.1+b.2"), Parsed("1.0.0-rc.1")), 0);
  EXPECT_EQ(CompareSemver(Parsed("1.0.0+x"), Parsed("1.0.0+y")), 0);
}

}  // namespace
}  // namespace gpusched
