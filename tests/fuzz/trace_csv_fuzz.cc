// Rows of GPU cluster trace CSV files (Alibaba cluster-trace-gpu-v2023;
// trace_csv.h). Variants by first byte: n node list, p pod list.
#include <cstddef>
#include <cstdint>

#include "api/codec/trace_csv.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto [variant, text] = gpusched::fuzz::Pick(data, size, "np");
  if (variant == 0) {
    (void)gpusched::ParseTraceNodes(text, "nodes.csv");
  } else {
    (void)gpusched::ParseTracePods(text, "pods.csv");
  }
  return 0;
}
