#ifndef GPUSCHED_API_CODEC_TRACE_CSV_H_
#define GPUSCHED_API_CODEC_TRACE_CSV_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/replay/trace.h"

namespace gpusched {

// CSV files of a GPU cluster trace (Alibaba cluster-trace-gpu-v2023,
// "openb"). Header-driven: columns are found by name in the first line, in
// any order; unknown columns are ignored, so trace variants with fewer or
// more columns read alike.
//
// Node list columns: `sn` (or `name`), `cpu_milli`, `memory_mib`, `gpu`
// required; `model` optional.
// Pod list columns: `name`, `cpu_milli`, `memory_mib`, `num_gpu`,
// `gpu_milli` required; `gpu_spec` optional (GPU models separated by `|`;
// empty = any).
//
// Errors are InvalidArgument naming "FILE:LINE" and the column: a missing
// required column, a row with the wrong number of fields, a value that is
// not an integer or is out of range (num_gpu 0..64; gpu_milli 0 when
// num_gpu is 0, 1..1000 when it is 1, 1000 above), a repeated node name.
absl::StatusOr<std::vector<replay::TraceNode>> ParseTraceNodes(
    std::string_view text, std::string_view file);
absl::StatusOr<std::vector<replay::TracePod>> ParseTracePods(
    std::string_view text, std::string_view file);

// Reads and parses both files.
absl::StatusOr<replay::Trace> ReadTrace(const std::string& nodes_path,
                                        const std::string& pods_path);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_TRACE_CSV_H_
