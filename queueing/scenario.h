#ifndef GPUSCHED_QUEUEING_SCENARIO_H_
#define GPUSCHED_QUEUEING_SCENARIO_H_

// A simulator scenario and its report, as plain values. api/ parses the
// Scenario YAML into these and writes the report JSON from them; the
// simulator (queueing/) only sees these types.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/admission_checks.h"
#include "queueing/policy.h"
#include "queueing/workload_types.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// A pod annotated with a runtime ("20s", "1m30s") finishes that long after
// its workload is admitted in the simulator, as Kueue's performance tests
// run each job for a set time once admitted. Without it a pod runs until a
// `finish` event. Unlike the keys admission reads (Pod::admission, decoded
// by api/codec), this one stays with the simulator that reads it: it is a
// scenario's instruction to the simulator, not part of any pod's admission.
inline constexpr char kSimulatedRuntimeAnnotation[] =
    "simulation.gpusched.io/runtime";
// The pod's simulated runtime in ms; -1 when it has none; an error for a
// value that is not a non-negative duration.
absl::StatusOr<int64_t> SimulatedRuntimeMs(const Pod& pod);
// A pod annotated "true" is never bound in the simulator (its node never
// starts it), so its workload's bind timeout (Kueue's PodsReadyTimeout)
// fires as it would in a cluster.
inline constexpr char kSimulatedNeverBoundAnnotation[] =
    "simulation.gpusched.io/never-bound";
inline bool SimulatedNeverBound(const Pod& pod) {
  auto it = pod.meta.annotations.find(kSimulatedNeverBoundAnnotation);
  return it != pod.meta.annotations.end() && it->second == "true";
}

// An admission check's new state, as its controller would set it (the
// simulator has no ProvisioningRequests): QueueingEngine::SetCheckState.
struct ScenarioCheckState {
  std::string workload;  // ns/name
  std::string check;
  CheckState state = CheckState::kPending;
  std::string message;
};

struct ScenarioEvent {
  int64_t at_ms = 0;
  int index = 0;  // position in the file, for messages and stable order
  std::vector<Pod> create_pods;
  std::vector<PodGroup> create_groups;
  std::vector<std::string> finish;     // "ns/pod" or "ns/group"
  std::vector<std::string> remove;     // `delete:` "ns/pod" or "ns/group"
  std::vector<std::string> node_down;  // node names
  std::vector<std::string> node_up;
  std::vector<ScenarioCheckState> check_states;  // `admissionCheck:`
};

struct Scenario {
  std::vector<Node> nodes;
  Policy policy;
  bool requeue_preempted = true;
  int64_t until_ms = -1;  // -1: until the last event and its consequences
  std::vector<ScenarioEvent> events;  // sorted by (at_ms, index)
};

struct ReportWorkload {
  std::string name;   // ns/name
  std::string queue;  // ClusterQueue; empty outside queues
  int32_t priority = 0;
  std::string state;            // Admitted | Pending | Finished
  int64_t admitted_at_ms = -1;  // -1: never admitted
  int preemptions = 0;
  std::string reason;
  std::map<std::string, std::string> placements;  // ns/pod -> node
};

struct ReportEvent {
  int64_t at_ms = 0;
  std::string type;  // Admitted | Preempted | Finished | TimedOut | Evicted
  std::string workload;
  std::string by;  // preemptor, for Preempted
  std::string reason;
};

struct ReportQueue {
  std::string name;
  std::map<std::string, int64_t> usage;  // "flavor/resource" -> amount
  int pending = 0;
  int admitted = 0;
};

struct ReportSummary {
  int admitted = 0;
  int pending = 0;
  int preemptions = 0;
  double gpu_allocation_ratio = 0;  // allocated / total milli-GPU at the end
  int64_t simulated_ms = 0;
  double wall_seconds = 0;
};

struct SimulationReport {
  std::vector<ReportWorkload> workloads;  // sorted by name
  std::vector<ReportEvent> events;        // in time order
  std::vector<ReportQueue> queues;        // sorted by name
  ReportSummary summary;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_SCENARIO_H_
