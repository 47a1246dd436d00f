// The ConfigMap that keeps observed runtimes across restarts (queueing/
// runtime_log.h, api/kube/runtime_history_store.h): data["runtimes.json"]
// (api/codec/configmap_data_json.h) holds
//
//   {"entries":[{"clusterQueue":"team-a","shape":"2x nvidia.com/gpu=8",
//                "runsMs":[3600000,3550000],"lastEndedMs":1795000000000}]}
//
// Errors are InvalidArgument naming the field or byte they reject
// ("runtimes.json.entries[3].runsMs[0]: expected integer, got string"); a
// run must be at least 0.
#ifndef GPUSCHED_API_CODEC_RUNTIME_HISTORY_JSON_H_
#define GPUSCHED_API_CODEC_RUNTIME_HISTORY_JSON_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/runtime_log.h"

namespace gpusched {

inline constexpr char kRuntimeHistoryKey[] = "runtimes.json";

std::string EncodeRuntimeHistory(const std::vector<RuntimeLog::Entry>& entries);
absl::StatusOr<std::vector<RuntimeLog::Entry>> DecodeRuntimeHistory(
    std::string_view text);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_RUNTIME_HISTORY_JSON_H_
