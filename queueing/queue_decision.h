// The queueing core's one way out: what a pass decided, as values. In a
// cluster api/kube carries them out (patches, evictions, Events); the
// simulator and the tests record them.
#ifndef GPUSCHED_QUEUEING_QUEUE_DECISION_H_
#define GPUSCHED_QUEUEING_QUEUE_DECISION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "queueing/admission_checks.h"
#include "queueing/reason_code.h"
#include "queueing/workload_types.h"

namespace gpusched {

// The pod a decision is about.
struct PodRef {
  std::string pod_namespace;
  std::string pod_name;
  std::string uid;
  friend bool operator==(const PodRef&, const PodRef&) = default;
};

// A member was admitted on `node`. A gated pod gets the node as its
// required affinity and loses the gpusched.io/admission gate; an ungated
// one gets the admission label, annotation and nominatedNodeName. Its
// Admitted Event goes with it, so that a member admitted once is told once
// even when the replica that decides changes (an adopted admission is not
// decided again, so it is not told again).
struct AdmitMember {
  PodRef pod;
  std::string node;
  std::string workload;
  bool gated = false;
  std::string reason;  // the Event's sentence: where and in which queue
  // What the admission checks put on a gated pod with its admission (an
  // ungated pod's node selector can no longer change).
  PodSetUpdate update;
  friend bool operator==(const AdmitMember&, const AdmitMember&) = default;
};

// An admission was taken back (preempted, timed out, gang broken, rolled
// back). A member that is bound, or that lost its gate (it is pinned to the
// node by affinity and cannot be gated again), is evicted so that its
// controller recreates it; an ungated, unbound one only loses the label,
// annotation and nomination. A pod whose gate is still on (its admission
// never landed) is never evicted: taking its admission back writes
// nothing.
struct RevokeMember {
  PodRef pod;
  std::string node;
  std::string workload;
  // Bound, or arrived with gpusched's gate: it may have to be evicted.
  bool evict = false;
  // Bound to its node: evicted whatever its gate says.
  bool bound = false;
  std::string reason;  // the engine's sentence: why it was taken back
  friend bool operator==(const RevokeMember&, const RevokeMember&) = default;
};

// Where a workload stands, as its PodGroup's status shows it.
enum class WorkloadPhase {
  kWaiting,   // pending: not admitted, `code` says why
  kAdmitted,  // quota and nodes assigned, not every member bound yet
  kRunning,   // every admitted member bound
  kFinished,  // every pod succeeded
};

// The PodGroup object a Volcano, coscheduling or native gang was declared
// by.
struct PodGroupRef {
  PodGroup::Flavor flavor = PodGroup::Flavor::kVolcano;
  std::string group_namespace;
  std::string name;
  std::string uid;
  friend bool operator==(const PodGroupRef&, const PodGroupRef&) = default;
};

// A workload's reason code or phase changed (never only the numbers in
// its sentence): written as the PodGroup's status and, when the code
// changed, recorded as an Event on each member and its PodGroup (an
// admission's Event on the members goes with each AdmitMember instead).
// `code` is a wait code while it waits, or what happened (kAdmitted,
// kPreempted, kEvicted, kFinished).
struct WorkloadStatus {
  std::string workload;
  ReasonCode code = ReasonCode::kNone;
  // False when only the phase or the counts moved (admitted, then
  // running): the status is written, no Event is news.
  bool code_changed = true;
  std::string message;  // the sentence, with the numbers
  WorkloadPhase phase = WorkloadPhase::kWaiting;
  std::vector<PodRef> members;  // the pods that exist, by name
  std::optional<PodGroupRef> group;
  int32_t min_member = 1;
  int32_t admitted = 0;  // members with a node
  int32_t bound = 0;     // of those, bound to it
  friend bool operator==(const WorkloadStatus&,
                         const WorkloadStatus&) = default;
};

using QueueDecision = std::variant<AdmitMember, RevokeMember, WorkloadStatus>;

// A revocation's eviction the API server refused (429): a
// PodDisruptionBudget allows no disruption now. The writer hands it back
// to the loop (AdmissionLoop::EvictionBlocked), which keeps the pod where
// it runs and has preemption leave its workload alone for a while, rather
// than retry the eviction.
struct EvictionRefusal {
  PodRef pod;
  std::string node;
  std::string workload;
  std::string message;  // the API server's, naming the budget
  friend bool operator==(const EvictionRefusal&,
                         const EvictionRefusal&) = default;
};

// An admission the API server would not carry out for good: a write that
// lifts the gate (or nominates) was refused (a ValidatingAdmissionPolicy,
// a webhook, 422, a 403 that stays) or the pod is pinned to another node.
// The writer hands it back to the loop (AdmissionLoop::AdmissionRefused),
// which withdraws the admission: the pod never left its gate, so nothing
// is evicted, and the workload waits with the gang backoff.
struct AdmissionRefusal {
  PodRef pod;
  std::string node;
  std::string workload;
  std::string message;  // the API server's
  friend bool operator==(const AdmissionRefusal&,
                         const AdmissionRefusal&) = default;
};

// Receives the decisions of each pass, in order, on the loop thread. Must
// return at once (queue the work): the loop does not wait for the API.
class DecisionSink {
 public:
  virtual ~DecisionSink() = default;
  virtual void Publish(std::vector<QueueDecision> decisions) = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_QUEUE_DECISION_H_
