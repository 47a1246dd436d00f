#ifndef GPUSCHED_SCHEDULER_ADMISSION_GATE_H_
#define GPUSCHED_SCHEDULER_ADMISSION_GATE_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "scheduler/cluster_model.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// What the queueing core says about a pod it manages.
struct GateVerdict {
  // Set when the pod's workload is admitted: the only node it may use.
  std::string assigned_node;
  // Set while it waits: why, for every node's failure message.
  std::string waiting_reason;
};

// What the queueing core says about the pods kube-scheduler proposes to
// evict together on one node (its own preemption, for a pod outside the
// queues).
struct VictimReview {
  struct Kept {
    std::string uid;
    std::string reason;  // why the core keeps it, for logs and events
  };
  // Victims that must stay: members of a workload whose other admitted
  // members are not all proposed here, or whose ClusterQueue would fall
  // below its nominal quota.
  std::vector<Kept> kept;
  // Victims that may go, but only all together (the members of one
  // workload): whoever reprieves one must reprieve them all.
  std::vector<std::vector<std::string>> together;
};

// The queueing core as the extender sees it. Defined here and implemented
// in queueing/, so that the GPU extender does not depend on queues (the
// dependency points queueing -> scheduler) yet filter and bind can defer to
// admission for the pods the core manages.
class AdmissionGate {
 public:
  virtual ~AdmissionGate() = default;

  // Cheap and lock-free: whether the pod is the core's at all (a queue
  // label or a gang key, as Pod::admission says). Other pods are the GPU
  // engine's alone.
  virtual bool Manages(const Pod& pod) const = 0;

  // Thread-safe and never waits for an admission pass: the core's latest
  // decision for the pod. A pod the core has not seen yet is handed to it
  // and answered as waiting.
  virtual GateVerdict Check(const Pod& pod) = 0;

  // Thread-safe and never waits for an admission pass, like Check: of the
  // pods (UIDs) proposed as victims on one node, the ones the core keeps
  // and the ones that may go only together. A pod the core does not hold is
  // not its to keep and appears in neither list.
  virtual VictimReview ReviewVictims(
      std::span<const std::string> victim_uids) const = 0;

  // Called with the model under the exclusive lock when bind confirmed a
  // managed pod on its assigned node.
  virtual void Bound(const Pod& pod, int64_t now_ms) = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_ADMISSION_GATE_H_
