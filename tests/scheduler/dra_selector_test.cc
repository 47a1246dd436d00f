#include "scheduler/dra_selector.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

constexpr char kDriver[] = "gpu.nvidia.com";

DraAttribute Text(std::string text) {
  return {DraAttribute::Kind::kString, std::move(text)};
}
DraAttribute Int(int64_t number) {
  return {DraAttribute::Kind::kInt, "", number};
}
DraAttribute Version(std::string text) {
  return {DraAttribute::Kind::kVersion, std::move(text)};
}

// gpu-3 of a DGX H100 as NVIDIA's DRA driver publishes it.
DraDevice H100() {
  DraDevice device;
  device.name = "gpu-3";
  device.attributes = {
      {"gpu.nvidia.com/type", Text("gpu")},
      {"gpu.nvidia.com/productName", Text("NVIDIA H100 80GB HBM3")},
      {"gpu.nvidia.com/index", Int(3)},
      {"gpu.nvidia.com/driverVersion", Version("550.54.15")},
      {"gpu.nvidia.com/mig", {DraAttribute::Kind::kBool, "", 0, false}},
      {"resource.kubernetes.io/pcieRoot", Text("pci0000:15")},
  };
  device.capacity = {
      {"gpu.nvidia.com/memory", 80LL * 1024 * 1024 * 1024 * 1000}};
  return device;
}

SelectorOutcome Eval(std::string_view expression, const DraDevice& device,
                     std::string_view driver = kDriver) {
  absl::StatusOr<DeviceSelector> selector = DeviceSelector::Parse(expression);
  EXPECT_TRUE(selector.ok()) << expression << ": " << selector.status();
  if (!selector.ok()) return {SelectorResult::kError, "parse"};
  return selector->Evaluate({driver, &device});
}

bool Matches(std::string_view expression) {
  SelectorOutcome outcome = Eval(expression, H100());
  EXPECT_NE(outcome.result, SelectorResult::kError)
      << expression << ": " << outcome.error;
  return outcome.matches();
}

TEST(DraSelectorTest, DriverAndStringAttributes) {
  EXPECT_TRUE(Matches("device.driver == 'gpu.nvidia.com'"));
  EXPECT_FALSE(Matches("device.driver == \"mig.nvidia.com\""));
  EXPECT_TRUE(
      Matches("device.attributes['gpu.nvidia.com'].productName == "
              "'NVIDIA H100 80GB HBM3'"));
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com']['type'] != 'mig'"));
  EXPECT_TRUE(Matches(
      "device.attributes['resource.kubernetes.io'].pcieRoot == 'pci0000:15'"));
}

TEST(DraSelectorTest, IntBoolAndVersionAttributes) {
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com'].index == 3"));
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com'].index >= 2"));
  EXPECT_FALSE(Matches("device.attributes['gpu.nvidia.com'].index < 3"));
  EXPECT_TRUE(Matches("!device.attributes['gpu.nvidia.com'].mig"));
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com'].mig == false"));
  EXPECT_TRUE(
      Matches("device.attributes['gpu.nvidia.com'].driverVersion == "
              "semver('550.54.15+build.7')"));
  // CEL calls values of different types unequal (a semver on the left is
  // the exception: ASemverEqualsOnlyASemver).
  EXPECT_FALSE(Matches("device.attributes['gpu.nvidia.com'].index == '3'"));
  EXPECT_FALSE(Matches(
      "'550.54.15' == device.attributes['gpu.nvidia.com'].driverVersion"));
}

TEST(DraSelectorTest, CapacityComparesAsQuantities) {
  EXPECT_TRUE(Matches(
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) "
      ">= 0"));
  EXPECT_TRUE(Matches(
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) "
      "== 0"));
  EXPECT_FALSE(Matches(
      "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('81Gi')) "
      ">= 0"));
}

TEST(DraSelectorTest, JunctionsAndParentheses) {
  EXPECT_TRUE(
      Matches("device.driver == 'gpu.nvidia.com' && "
              "(device.attributes['gpu.nvidia.com'].index == 1 || "
              "device.attributes['gpu.nvidia.com'].index == 3)"));
  EXPECT_FALSE(
      Matches("device.driver == 'gpu.nvidia.com' && "
              "device.attributes['gpu.nvidia.com'].type == 'mig'"));
  EXPECT_TRUE(Matches("true"));
  EXPECT_FALSE(Matches("!(true && true)"));
}

// A missing attribute, in a domain the device has or not, is CEL's "no
// such key" runtime error, which makes kube-scheduler fail the allocation;
// the side that decides a && or || absorbs it, as in CEL.
TEST(DraSelectorTest, MissingKeysAreErrorsUnlessTheOtherSideDecides) {
  SelectorOutcome missing =
      Eval("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", H100());
  EXPECT_EQ(missing.result, SelectorResult::kError);
  EXPECT_THAT(missing.error, HasSubstr("no such key: profile"));
  SelectorOutcome domain =
      Eval("device.attributes['mig.nvidia.com'].profile == 'x'", H100());
  EXPECT_EQ(domain.result, SelectorResult::kError);
  EXPECT_THAT(domain.error, HasSubstr("no such key: profile"));
  EXPECT_FALSE(
      Matches("'profile' in device.attributes['gpu.nvidia.com'] && "
              "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"));
  EXPECT_FALSE(
      Matches("device.attributes['gpu.nvidia.com'].profile == '1g.10gb' && "
              "device.driver == 'other'"));
  EXPECT_TRUE(Matches(
      "device.attributes['gpu.nvidia.com'].profile == '1g.10gb' || true"));
  EXPECT_EQ(Eval("device.capacity['gpu.nvidia.com'].cores.compareTo("
                 "quantity('1')) > 0",
                 H100())
                .result,
            SelectorResult::kError);
}

TEST(DraSelectorTest, UnqualifiedNamesAreInTheDriversDomain) {
  // The codec stores "index" published by gpu.nvidia.com as
  // "gpu.nvidia.com/index"; a selector naming another domain misses it.
  EXPECT_EQ(Eval("device.attributes['other.com'].index == 3", H100()).result,
            SelectorResult::kError);
}

// Issue K §2, seen live: kube-scheduler's environment reads a domain the
// device lacks as an empty map, so 'x' in it is false, not "no such key".
TEST(DraSelectorTest, ADomainTheDeviceLacksIsAnEmptyMap) {
  EXPECT_FALSE(Matches("'x' in device.attributes['unknown.domain']"));
  EXPECT_TRUE(
      Matches("device.driver == 'gpu.nvidia.com' && "
              "!('mode' in device.attributes['other.example.com'])"));
  EXPECT_FALSE(Matches("has(device.attributes['other.example.com'].mode)"));
  EXPECT_FALSE(Matches("'memory' in device.capacity['other.example.com']"));
}

TEST(DraSelectorTest, InAndHasLookInAttributesOrCapacity) {
  EXPECT_TRUE(Matches("'index' in device.attributes['gpu.nvidia.com']"));
  EXPECT_TRUE(Matches("has(device.attributes['gpu.nvidia.com'].index)"));
  EXPECT_TRUE(Matches("'memory' in device.capacity['gpu.nvidia.com']"));
  EXPECT_TRUE(Matches("has(device.capacity['gpu.nvidia.com'].memory)"));
  EXPECT_FALSE(Matches("'memory' in device.attributes['gpu.nvidia.com']"));
}

TEST(DraSelectorTest, StringsOrderByByteAndBoolsFalseFirst) {
  EXPECT_TRUE(
      Matches("device.attributes['gpu.nvidia.com'].productName < 'NVIDIA I'"));
  EXPECT_FALSE(
      Matches("device.attributes['gpu.nvidia.com'].productName >= 'NVIDIA I'"));
  EXPECT_TRUE(Matches("device.driver > 'gpu'"));
  EXPECT_FALSE(Matches("'\xC3\xBC' < 'z'"));  // u-umlaut: 0xC3 0xBC > 'z'
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com'].mig < true"));
  EXPECT_FALSE(Matches("true <= false"));
}

TEST(DraSelectorTest, OrderingValuesOfDifferentTypesIsAnError) {
  for (const char* expression :
       {"device.attributes['gpu.nvidia.com'].index < 'a'",
        "device.attributes['gpu.nvidia.com'].mig >= 0",
        "device.attributes['gpu.nvidia.com'].driverVersion > "
        "device.attributes['gpu.nvidia.com'].driverVersion"}) {
    SelectorOutcome outcome = Eval(expression, H100());
    EXPECT_EQ(outcome.result, SelectorResult::kError) << expression;
    EXPECT_THAT(outcome.error, HasSubstr("no such overload")) << expression;
  }
}

// cel-go's semver has == only with a semver: on the left of anything else
// it is an error, on the right it is unequal, and != is "== is not true".
TEST(DraSelectorTest, ASemverEqualsOnlyASemver) {
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].driverVersion == "
                 "'550.54.15'",
                 H100())
                .result,
            SelectorResult::kError);
  EXPECT_FALSE(Matches(
      "'550.54.15' == device.attributes['gpu.nvidia.com'].driverVersion"));
  EXPECT_TRUE(Matches(
      "device.attributes['gpu.nvidia.com'].driverVersion != '550.54.15'"));
  EXPECT_FALSE(
      Matches("device.attributes['gpu.nvidia.com'].index == semver('3.0.0')"));
}

TEST(DraSelectorTest, SemverTextCelRejectsIsARuntimeError) {
  SelectorOutcome partial = Eval(
      "device.attributes['gpu.nvidia.com'].driverVersion == "
      "semver('550.54')",
      H100());
  EXPECT_EQ(partial.result, SelectorResult::kError);
  EXPECT_THAT(partial.error, HasSubstr("No Major.Minor.Patch"));
  EXPECT_TRUE(
      Matches("semver('v550.54.15') == "
              "device.attributes['gpu.nvidia.com'].driverVersion || true"));
}

TEST(DraSelectorTest, SemverMethodsCompareByPrecedence) {
  // 15 > 9 as numbers, though '1' < '9' as text.
  EXPECT_TRUE(
      Matches("device.attributes['gpu.nvidia.com'].driverVersion."
              "isGreaterThan(semver('550.54.9'))"));
  EXPECT_TRUE(
      Matches("device.attributes['gpu.nvidia.com'].driverVersion."
              "isGreaterThan(semver('550.54.15-rc.1'))"));
  EXPECT_TRUE(
      Matches("device.attributes['gpu.nvidia.com'].driverVersion."
              "compareTo(semver('550.54.15+build.2')) == 0"));
  EXPECT_TRUE(
      Matches("semver('550.0.0').isLessThan("
              "device.attributes['gpu.nvidia.com'].driverVersion)"));
  EXPECT_EQ(Eval("device.attributes['gpu.nvidia.com'].index.isLessThan("
                 "semver('1.0.0'))",
                 H100())
                .result,
            SelectorResult::kError);
}

// A literal finer than a milli-unit is rounded up when parsed; the
// comparison still knows it lies below that.
TEST(DraSelectorTest, QuantitiesFinerThanAMilliUnitCompareExactly) {
  DraDevice device = H100();
  device.capacity["gpu.nvidia.com/share"] = 2;  // 2m
  // 2m > 1.5m, though 1500u rounds up to 2m.
  EXPECT_TRUE(Eval("device.capacity['gpu.nvidia.com'].share.compareTo("
                   "quantity('1500u')) == 1",
                   device)
                  .matches());
  EXPECT_TRUE(Eval("device.capacity['gpu.nvidia.com'].share.isLessThan("
                   "quantity('2000001n'))",
                   device)
                  .matches());
  EXPECT_TRUE(Eval("quantity('1999999n').isLessThan("
                   "device.capacity['gpu.nvidia.com'].share)",
                   device)
                  .matches());
}

TEST(DraSelectorTest, NonBoolsInJunctionsAreErrorsTheOtherSideAbsorbs) {
  EXPECT_EQ(
      Eval("device.attributes['gpu.nvidia.com'].index && true", H100()).result,
      SelectorResult::kError);
  EXPECT_FALSE(Matches("false && device.attributes['gpu.nvidia.com'].index"));
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com'].index || true"));
  EXPECT_EQ(Eval("!device.attributes['gpu.nvidia.com'].type", H100()).result,
            SelectorResult::kError);
}

TEST(DraSelectorTest, NotAppliesToItsOperandBeforeAnyComparison) {
  // (!mig) < false is true < false; !(mig < false) would match.
  EXPECT_FALSE(Matches("!device.attributes['gpu.nvidia.com'].mig < false"));
  // cel-go's parser drops '!' in pairs: !!x is x.
  EXPECT_TRUE(Matches("!!device.attributes['gpu.nvidia.com'].type == 'gpu'"));
  EXPECT_TRUE(Matches("!!!device.attributes['gpu.nvidia.com'].mig"));
}

TEST(DraSelectorTest, RelationsChainLeftToRight) {
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com'].index < 4 == true"));
  EXPECT_TRUE(
      Matches("'profile' in device.attributes['gpu.nvidia.com'] == false"));
}

TEST(DraSelectorTest, IntegerLiteralsReachInt64sLimits) {
  EXPECT_FALSE(Matches(
      "device.attributes['gpu.nvidia.com'].index == -9223372036854775808"));
  EXPECT_TRUE(Matches(
      "device.attributes['gpu.nvidia.com'].index <= 9223372036854775807"));
  EXPECT_TRUE(Matches("device.attributes['gpu.nvidia.com'].index == 003"));
}

void ExpectOutsideAt(std::string_view expression, std::string_view at) {
  absl::StatusOr<DeviceSelector> selector = DeviceSelector::Parse(expression);
  ASSERT_FALSE(selector.ok()) << expression;
  EXPECT_EQ(selector.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(selector.status().message(),
              HasSubstr("outside the supported CEL subset"));
  EXPECT_THAT(std::string(selector.status().message()), HasSubstr(at))
      << expression;
}

TEST(DraSelectorTest, NamesWhereItLeavesTheSubset) {
  ExpectOutsideAt(
      "device.attributes['gpu.nvidia.com'].productName."
      "startsWith('NVIDIA')",
      "at byte 47: expected &&, || or the end, got '.'");
  ExpectOutsideAt("cel.bind(d, device.attributes['x'], d.a == 1)",
                  "at byte 10: character ','");
  ExpectOutsideAt("device.attributes['gpu.nvidia.com'].index + 1 == 4",
                  "character '+'");
  ExpectOutsideAt("device.driver",
                  "not valid CEL: the selector needs a bool, not string");
  ExpectOutsideAt("device.driver == 'a", "unterminated string");
  ExpectOutsideAt("device.capacity['d'].memory >= 1",
                  "a quantity compared other than with compareTo");
  ExpectOutsideAt("device.capacity['d'].memory.compareTo(quantity('lots')) > 0",
                  "at byte 47");
  ExpectOutsideAt("", "at byte 0");
  ExpectOutsideAt("device.attributes[d].x == 1", "expected a quoted domain");
}

TEST(DraSelectorTest, HostileInputStaysBounded) {
  ExpectOutsideAt(std::string(40, '(') + "true" + std::string(40, ')'),
                  "nesting too deep");
  ExpectOutsideAt(std::string(20000, ' '), "longer than 10 KiB");
  ExpectOutsideAt("device.attributes['d'].x == 99999999999999999999",
                  "integer out of range");
}

}  // namespace
}  // namespace gpusched
