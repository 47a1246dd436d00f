// The ConfigMap that keeps the workloads' requeue state across restarts and
// failovers (queueing/requeue_state.h, api/kube/requeue_state_store.h):
// data["requeue.json"] (api/codec/configmap_data_json.h) holds
//
//   {"workloads":[{"workload":"ml/train","count":2,
//                  "requeueAtMs":1795000060000,"queuedFromMs":1795000000000,
//                  "deactivated":false,"reason":"PodsReadyTimeout",
//                  "message":"only 1 of 2 members bound ..."}]}
//
// Errors are InvalidArgument naming the field or byte they reject
// ("requeue.json.workloads[3].count: expected integer, got string"); a
// count or time must be at least 0, a reason one the record can carry.
#ifndef GPUSCHED_API_CODEC_REQUEUE_STATE_JSON_H_
#define GPUSCHED_API_CODEC_REQUEUE_STATE_JSON_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/requeue_state.h"

namespace gpusched {

inline constexpr char kRequeueStateKey[] = "requeue.json";

std::string EncodeRequeueState(const std::vector<RequeueRecord>& records);
absl::StatusOr<std::vector<RequeueRecord>> DecodeRequeueState(
    std::string_view text);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_REQUEUE_STATE_JSON_H_
