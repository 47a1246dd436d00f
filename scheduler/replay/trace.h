#ifndef GPUSCHED_SCHEDULER_REPLAY_TRACE_H_
#define GPUSCHED_SCHEDULER_REPLAY_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace gpusched::replay {

inline constexpr int kTraceMilliPerGpu = 1000;

// One node of a GPU cluster trace (Alibaba "openb" node list).
struct TraceNode {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpus = 0;
  std::string model;  // GPU model, e.g. "V100M16"; may be empty
};

// One task of the trace. A task with num_gpu == 1 and gpu_milli < 1000
// takes that share of one GPU; otherwise num_gpu whole GPUs.
struct TracePod {
  std::string name;
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int num_gpu = 0;
  int gpu_milli = 0;
  // GPU models the task may run on; empty: any.
  std::vector<std::string> gpu_spec;

  bool IsShare() const {
    return num_gpu == 1 && gpu_milli > 0 && gpu_milli < kTraceMilliPerGpu;
  }
  // The milli-GPU the task takes once placed.
  int64_t GpuMilliRequest() const {
    return IsShare() ? gpu_milli : int64_t{num_gpu} * kTraceMilliPerGpu;
  }
};

struct Trace {
  std::vector<TraceNode> nodes;
  std::vector<TracePod> pods;
};

}  // namespace gpusched::replay

#endif  // GPUSCHED_SCHEDULER_REPLAY_TRACE_H_
