// The wire formats of the visibility API's resources that the dashboard
// reads beside the queues (api/server/visibility_api.h serves them):
// gpunodes, the GPU map, and decisions, the last admissions, preemptions
// and evictions.
#ifndef GPUSCHED_API_CODEC_DASHBOARD_JSON_H_
#define GPUSCHED_API_CODEC_DASHBOARD_JSON_H_

#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "queueing/queue_view.h"
#include "queueing/recent_decision.h"
#include "scheduler/gpu_map.h"

namespace gpusched {

// The admitted workload a pod holding a GPU belongs to, or nullptr (a pod
// outside the queues, or no policy).
using AdmittedByPod =
    std::function<const AdmittedWorkload*(std::string_view pod_key)>;

// A GPUNodeList: per node (metadata: name and the GFD labels a map is read
// with) its status: ready (no not-ready/unreachable taint), unschedulable,
// product, memoryMiB, replicas, the pods holding its GPUs (namespace,
// name, and for a queued pod its workload, clusterQueue and localQueue:
// what the map is coloured by), and per
// GPU its index, health, usedMilli and holders ({"pod": index into pods,
// "milli"}), per MIG profile its capacity, used and holders ({"pod",
// "instances"}). The model and memory are per node, as GFD labels them.
// Where DRA is involved: per node gpuSource (DevicePlugin or DRA),
// draTainted (devices kept off by a taint, with it) and draProblems (pools
// not counted); per GPU of a DRA node its draDevice name, the claim that
// holds it and its taints; per MIG pool its draDevices. Each is left out
// when empty.
// metadata.resourceVersion is `version` (it changes with the map and the
// queues that colour it).
std::string EncodeGpuNodeList(const GpuMap& map, std::string_view version,
                              const AdmittedByPod& admitted_by_pod);

// A DecisionList, newest first: per decision its workload (metadata name
// and namespace), time (RFC 3339), decision (Admitted, Preempted,
// Evicted), clusterQueue, reasonCode and message.
std::string EncodeDecisionList(
    std::span<const RecentDecision* const> decisions);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_DASHBOARD_JSON_H_
