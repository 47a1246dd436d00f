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
  // CEL never calls values of different types equal.
  EXPECT_FALSE(Matches("device.attributes['gpu.nvidia.com'].index == '3'"));
  EXPECT_FALSE(Matches(
      "device.attributes['gpu.nvidia.com'].driverVersion == '550.54.15'"));
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

// A missing attribute is CEL's "no such key" runtime error, which makes
// kube-scheduler fail the allocation; the side that decides a && or ||
// absorbs it, as in CEL.
TEST(DraSelectorTest, MissingKeysAreErrorsUnlessTheOtherSideDecides) {
  SelectorOutcome missing =
      Eval("device.attributes['gpu.nvidia.com'].profile == '1g.10gb'", H100());
  EXPECT_EQ(missing.result, SelectorResult::kError);
  EXPECT_THAT(missing.error, HasSubstr("no such key: profile"));
  SelectorOutcome domain =
      Eval("device.attributes['mig.nvidia.com'].profile == 'x'", H100());
  EXPECT_THAT(domain.error, HasSubstr("no such key: mig.nvidia.com"));
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

void ExpectOutside(std::string_view expression, std::string_view at) {
  absl::StatusOr<DeviceSelector> selector = DeviceSelector::Parse(expression);
  ASSERT_FALSE(selector.ok()) << expression;
  EXPECT_EQ(selector.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(selector.status().message(),
              HasSubstr("outside the supported CEL subset"));
  EXPECT_THAT(std::string(selector.status().message()), HasSubstr(at))
      << expression;
}

TEST(DraSelectorTest, NamesWhereItLeavesTheSubset) {
  ExpectOutside(
      "device.attributes['gpu.nvidia.com'].productName."
      "startsWith('NVIDIA')",
      "at byte 47: expected &&, || or the end, got '.'");
  ExpectOutside("cel.bind(d, device.attributes['x'], d.a == 1)",
                "at byte 10: character ','");
  ExpectOutside("device.attributes['gpu.nvidia.com'].index + 1 == 4",
                "character '+'");
  ExpectOutside("device.driver", "expected a comparison");
  ExpectOutside("device.driver == 'a", "unterminated string");
  ExpectOutside("device.capacity['d'].memory >= 1", "expected '.'");
  ExpectOutside("device.capacity['d'].memory.compareTo(quantity('lots')) > 0",
                "at byte 47");
  ExpectOutside("", "at byte 0");
  ExpectOutside("device.attributes[d].x == 1", "expected a quoted domain");
}

TEST(DraSelectorTest, HostileInputStaysBounded) {
  ExpectOutside(std::string(40, '(') + "true" + std::string(40, ')'),
                "nesting too deep");
  ExpectOutside(std::string(20000, ' '), "longer than 10 KiB");
  ExpectOutside("device.attributes['d'].x == 99999999999999999999",
                "integer out of range");
}

}  // namespace
}  // namespace gpusched
