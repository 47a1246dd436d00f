// The queueing core's one way out: what a pass decided, as values. In a
// cluster api/kube carries them out (patches, evictions, Events); the
// simulator and the tests record them.
#ifndef GPUSCHED_QUEUEING_QUEUE_DECISION_H_
#define GPUSCHED_QUEUEING_QUEUE_DECISION_H_

#include <string>
#include <variant>
#include <vector>

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
// one gets the admission label, annotation and nominatedNodeName.
struct AdmitMember {
  PodRef pod;
  std::string node;
  std::string workload;
  bool gated = false;
  friend bool operator==(const AdmitMember&, const AdmitMember&) = default;
};

// An admission was taken back (preempted, timed out, gang broken, rolled
// back). A member that is bound, or that lost its gate (it is pinned to the
// node by affinity and cannot be gated again), is evicted so that its
// controller recreates it; an ungated, unbound one only loses the label,
// annotation and nomination.
struct RevokeMember {
  PodRef pod;
  std::string node;
  std::string workload;
  bool evict = false;
  std::string reason;  // the engine's sentence: why it was taken back
  friend bool operator==(const RevokeMember&, const RevokeMember&) = default;
};

using QueueDecision = std::variant<AdmitMember, RevokeMember>;

// Receives the decisions of each pass, in order, on the loop thread. Must
// return at once (queue the work): the loop does not wait for the API.
class DecisionSink {
 public:
  virtual ~DecisionSink() = default;
  virtual void Publish(std::vector<QueueDecision> decisions) = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_QUEUE_DECISION_H_
