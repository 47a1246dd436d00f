// gpusched's side of the differential CEL test
// (TestCelSelectorsAgreeWithUpstream in tests/e2e/suite): reads the corpus
// (tests/testdata/cel/corpus.json, written by tests/e2e/suite/cmd/celcorpus)
// and prints, for each pair in order, one line "<verdict>\t<detail>":
//
//   true | false   the selector matches the device, or not
//   error          CEL's runtime error (detail: its message)
//   outside        outside gpusched's subset, left to kube-scheduler
//                  (detail: where the parser stopped)
//
// Each device goes through the codec as a one-device ResourceSlice, so
// names are qualified with the driver as in a cluster. Exit 1 with a
// message on stderr if the file cannot be read.
//
// Usage: gpusched_cel_verdicts CORPUS.json

#include <iostream>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "api/codec/dra_json.h"
#include "scheduler/base/strings.h"
#include "scheduler/dra_selector.h"
#include "simdjson.h"

namespace gpusched {
namespace {

using simdjson::dom::element;

struct CorpusDevice {
  std::string driver;
  DraDevice device;
};

// The device as the only one of a node-local ResourceSlice of its driver.
absl::StatusOr<CorpusDevice> DecodeDevice(element device, size_t index) {
  std::string_view driver;
  if (device["driver"].get(driver) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices[", index, "].driver: missing"));
  }
  const std::string slice = absl::StrCat(
      R"({"spec":{"driver":")", Sv(driver),
      R"(","pool":{"name":"corpus","generation":1,"resourceSliceCount":1},)",
      R"("nodeName":"corpus","devices":[)", simdjson::minify(device), "]}}");
  absl::StatusOr<ResourceSlice> decoded = ResourceSliceFromJson(slice);
  if (!decoded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("devices[", index, "]: ", decoded.status().message()));
  }
  return CorpusDevice{std::string(driver), decoded->devices.at(0)};
}

// One verdict line for a selector on a device.
std::string Verdict(std::string_view expression, const CorpusDevice& device) {
  absl::StatusOr<DeviceSelector> selector = DeviceSelector::Parse(expression);
  if (!selector.ok()) {
    return absl::StrCat("outside\t", selector.status().message());
  }
  SelectorOutcome outcome = selector->Evaluate({device.driver, &device.device});
  switch (outcome.result) {
    case SelectorResult::kMatches:
      return "true\t";
    case SelectorResult::kNoMatch:
      return "false\t";
    case SelectorResult::kError:
      break;
  }
  return absl::StrCat("error\t", outcome.error);
}

absl::Status PrintVerdicts(element corpus) {
  std::map<std::string, CorpusDevice, std::less<>> devices;
  simdjson::dom::array device_list;
  if (corpus["devices"].get(device_list) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("devices: missing or not an array");
  }
  size_t index = 0;
  for (element device : device_list) {
    absl::StatusOr<CorpusDevice> decoded = DecodeDevice(device, index);
    if (!decoded.ok()) return decoded.status();
    devices.emplace(decoded->device.name, *std::move(decoded));
    ++index;
  }
  simdjson::dom::array pairs;
  if (corpus["pairs"].get(pairs) != simdjson::SUCCESS) {
    return absl::InvalidArgumentError("pairs: missing or not an array");
  }
  index = 0;
  for (element pair : pairs) {
    std::string_view expression, device_name;
    if (pair["selector"].get(expression) != simdjson::SUCCESS ||
        pair["device"].get(device_name) != simdjson::SUCCESS) {
      return absl::InvalidArgumentError(
          absl::StrCat("pairs[", index, "]: selector or device missing"));
    }
    auto device = devices.find(device_name);
    if (device == devices.end()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pairs[", index, "]: unknown device \"", Sv(device_name), "\""));
    }
    std::string line = Verdict(expression, device->second);
    // A detail stays on its line: the reader splits at newlines.
    for (char& c : line) {
      if (c == '\n' || c == '\r') c = ' ';
    }
    std::cout << line << '\n';
    ++index;
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace gpusched

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gpusched_cel_verdicts CORPUS.json\n";
    return 2;
  }
  simdjson::dom::parser parser;
  simdjson::dom::element corpus;
  if (auto error = parser.load(argv[1]).get(corpus); error) {
    std::cerr << argv[1] << ": " << simdjson::error_message(error) << '\n';
    return 1;
  }
  if (absl::Status status = gpusched::PrintVerdicts(corpus); !status.ok()) {
    std::cerr << argv[1] << ": " << status.message() << '\n';
    return 1;
  }
  return 0;
}
