#ifndef GPUSCHED_API_SERVER_TRACE_REPLAY_COMMAND_H_
#define GPUSCHED_API_SERVER_TRACE_REPLAY_COMMAND_H_

#include <string>
#include <vector>

#include "scheduler/replay/replay.h"

namespace gpusched {

// `gpusched trace-replay --nodes NODES.csv --pods PODS.csv [--load 1.3]
//                        [--seed N] [--scorer NAME] [--output REPORT.json]`
//
// Replays a GPU cluster trace (trace_csv.h) the way the FGD paper does
// (replay.h) and writes the report JSON to --output or stdout. Exit codes:
// 0 done, 1 an unreadable or malformed trace (or one without GPU pods) or
// an unwritable report, 2 bad usage (flags, an unknown scorer).
int RunTraceReplay(const std::vector<std::string>& args);

// The report: {"scorer", "seed", "load", "nodes", "gpus", "arrivedPods",
// "placedPods", "failedPods", "arrivedGpuMilli", "allocatedGpuMilli",
// "failedGpuMilli", "multiGpuPods", "multiGpuTopologyScore",
// "checkpoints": [{"arrivedLoad", "gpuAllocationRatio"}], "curve": [same],
// "wallSeconds"}.
std::string EncodeReplayReport(const replay::ReplayReport& report,
                               double wall_seconds);

}  // namespace gpusched

#endif  // GPUSCHED_API_SERVER_TRACE_REPLAY_COMMAND_H_
