// Where DeviceSelector's subset ends: expressions CEL's type checker or
// grammar rejects (the API server never stores them) and valid CEL the
// subset leaves to kube-scheduler fail Parse, naming the byte.

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/dra_selector.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

void ExpectOutside(std::string_view expression, std::string_view why) {
  absl::StatusOr<DeviceSelector> selector = DeviceSelector::Parse(expression);
  ASSERT_FALSE(selector.ok()) << expression;
  EXPECT_EQ(selector.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(selector.status().message()),
              HasSubstr("outside the supported CEL subset at byte"))
      << expression;
  EXPECT_THAT(std::string(selector.status().message()), HasSubstr(why))
      << expression;
}

void ExpectParses(std::string_view expression) {
  absl::StatusOr<DeviceSelector> selector = DeviceSelector::Parse(expression);
  EXPECT_TRUE(selector.ok()) << expression << ": " << selector.status();
}

TEST(DraSelectorSubsetTest, TypesCelsCheckerRejectsAreNotValidCel) {
  for (const char* expression : {
           "'a' == 1",
           "device.driver < 1",
           "true && 1",
           "!'a' == 'b'",
           "semver('1.0.0') != 1",
           "semver('1.0.0') < semver('2.0.0')",
           "device.attributes['d'].v < semver('1.0.0')",
           "!device.attributes['d'].x == 3",
           "1 in device.attributes['d']",
           "device.capacity['d'].m.compareTo(quantity('1')) == 'x'",
           "device.capacity['d'].m.compareTo(semver('1.0.0')) > 0",
           "semver('1.0.0').isLessThan(quantity('1'))",
       }) {
    ExpectOutside(expression, "not valid CEL");
  }
}

TEST(DraSelectorSubsetTest, TheCheckerAcceptsAttributesAgainstAnyType) {
  ExpectParses("device.attributes['d'].x == 1");
  ExpectParses("device.attributes['d'].x < 'a'");
  ExpectParses("device.attributes['d'].x != semver('1.0.0')");
  ExpectParses("device.attributes['d'].x.compareTo(quantity('1')) == 0");
  ExpectParses("semver('1.0.0').isLessThan(device.attributes['d'].x)");
  ExpectParses("device.attributes['d'].x");
  ExpectParses("!!'a' == 'b'");  // !! is dropped: 'a' == 'b'
}

TEST(DraSelectorSubsetTest, HasTakesAFieldAndReservedWordsAreNoFields) {
  ExpectOutside("has(device.attributes['d']['x'])",
                "not valid CEL: has() of other than a field");
  ExpectOutside("device.attributes['d'].in == 1",
                "at byte 23: not valid CEL: 'in' is reserved");
  ExpectOutside("device.attributes['d'].null == 1", "'null' is reserved");
  ExpectParses("device.attributes['d'].as == 1");  // a field in CEL
  ExpectParses("device.attributes['d']['in'] == 1");
}

TEST(DraSelectorSubsetTest, LexicalDetailsFollowCel) {
  ExpectParses("device.driver\t==\n'gpu'\r\f");
  ExpectOutside("device.driver ==\v'gpu'", "at byte 16: character");
  ExpectOutside("device.driver == 'g\npu'",
                "at byte 19: not valid CEL: a line break in a string");
  ExpectOutside("device.driver == '''gpu'''", "triple-quoted strings");
  ExpectOutside("device.driver == 'g\xFFpu'", "a string that is not UTF-8");
  ExpectOutside("device.driver == 'g\xED\xA0\x80'", "not UTF-8");
  ExpectParses("device.driver == 'gr\xC3\xBC\xC3\x9F'");
  ExpectOutside("device.attributes['d'].x == 9223372036854775808",
                "integer out of range");
  ExpectOutside("device.attributes['d'].x == -9223372036854775809",
                "integer out of range");
}

TEST(DraSelectorSubsetTest, MapsAndQuantitiesOnlyWhereTheSubsetReadsThem) {
  ExpectOutside("device.attributes['d'] == device.attributes['d']",
                "a map other than on the right of 'in'");
  ExpectOutside("'x' in device.attributes['d'].y",
                "'in' other than on device.attributes");
  ExpectOutside("device.driver in device.attributes['d']",
                "'in' other than after a quoted name");
  ExpectOutside("device.capacity['d'].m == quantity('1')",
                "a quantity compared other than with compareTo");
  // One literal finer than a milli-unit compares exactly, two do not.
  ExpectParses("quantity('1m').compareTo(quantity('1500u')) == -1");
  ExpectOutside("quantity('1500u').compareTo(quantity('1501u')) == -1",
                "at byte 18: two quantities finer than a milli-unit");
}

}  // namespace
}  // namespace gpusched
