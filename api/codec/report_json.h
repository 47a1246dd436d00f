#ifndef GPUSCHED_API_CODEC_REPORT_JSON_H_
#define GPUSCHED_API_CODEC_REPORT_JSON_H_

// The simulator's report as JSON:
//
//   {"workloads": [{"name", "queue", "priority", "state", "admittedAt",
//                   "preemptions", "reason", "placements": {"ns/pod": node}}],
//    "events": [{"at", "type", "workload", "by", "reason"}],
//    "queues": [{"name", "usage": {"flavor/resource": "8"}, "pending",
//                "admitted"}],
//    "summary": {"admitted", "pending", "preemptions", "gpuAllocationRatio",
//                "simulatedSeconds", "wallSeconds"}}
//
// Byte-stable so that expected reports can be checked in and diffed: keys in
// the order above, lists in the report's order, maps sorted by key,
// pretty-printed with a two-space indent and one trailing newline. Every key
// is always present: a string that does not apply is "" (`queue` outside
// queues, `by` for all but Preempted), and `admittedAt` is null for a
// workload never admitted, so that one jq expression reads every row.
// Times ("at", "admittedAt") are Go duration strings (FormatGoDuration),
// usage amounts Kubernetes quantities ("500m", "64Gi"), gpuAllocationRatio
// has four decimals, simulatedSeconds is exact (90, 90.25) and wallSeconds
// has three decimals.

#include <cstdint>
#include <string>
#include <string_view>

#include "queueing/scenario.h"

namespace gpusched {

// `include_wall_seconds` false leaves the key out: the one value that differs
// between runs of the same scenario.
std::string EncodeReport(const SimulationReport& report,
                         bool include_wall_seconds = true);

// Milliseconds as Go's time.Duration.String prints them: "0s", "250ms",
// "5s", "1.5s", "1m30s", "5m0s", "1h0m0s", "2h3m4.005s"; negative with "-".
std::string FormatGoDuration(int64_t ms);

// "" when `expected` == `actual`; otherwise a unified diff of the one hunk
// between their common leading and trailing lines (at most `max_lines`
// lines on each side, three lines of context), headed
// "--- <expected_name>" / "+++ <actual_name>".
std::string DiffText(std::string_view expected, std::string_view actual,
                     std::string_view expected_name,
                     std::string_view actual_name, int max_lines = 40);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_REPORT_JSON_H_
