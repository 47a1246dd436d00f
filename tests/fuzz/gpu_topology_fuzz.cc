// The node annotation gpusched.io/gpu-topology in both forms (gpu_topology.h):
// `nvidia-smi topo -m` text and compact JSON; the first non-blank byte picks
// the form. A topology that parses is then used as the allocator uses it.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "api/codec/gpu_topology_annotation.h"
#include "scheduler/gpu_topology.h"
#include "tests/fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<gpusched::GpuTopology> topology =
      gpusched::ParseGpuTopology(gpusched::fuzz::Text(data, size));
  if (!topology.ok()) return 0;
  (void)topology->Summary();
  (void)topology->NvLinkIslands();
  std::vector<int> all;
  for (int i = 0; i < topology->gpu_count() && i < 16; ++i) all.push_back(i);
  (void)topology->SetScore(all);
  return 0;
}
