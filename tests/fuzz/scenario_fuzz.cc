// Simulator scenarios in YAML or JSON (scenario_yaml.h): nodes, pods,
// workloads, an inline policy and events. Paths in the scenario resolve
// against a directory that does not exist, so a file reference is an error
// rather than a read of this machine's files.
#include <cstddef>
#include <cstdint>

#include "api/codec/scenario_yaml.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)gpusched::ParseScenarioText(gpusched::fuzz::Text(data, size),
                                    "fuzz.yaml", "/nonexistent-fuzz-dir");
  return 0;
}
