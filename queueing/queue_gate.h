#ifndef GPUSCHED_QUEUEING_QUEUE_GATE_H_
#define GPUSCHED_QUEUEING_QUEUE_GATE_H_

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "queueing/engine.h"
#include "scheduler/admission_gate.h"

namespace gpusched {

// A label/annotation change admission asks for on a member pod: against a
// live API server, gpusched.io/admitted=true, gpusched.io/assigned-node and
// status.nominatedNodeName (the label change makes kube-scheduler requeue
// the pod at once; the nominated node is evaluated first).
struct AdmissionPatch {
  std::string pod_namespace;
  std::string pod_name;
  std::string node;
};

// The queueing engine behind the extender's AdmissionGate. Every call
// happens under the extender's exclusive model lock, which makes the engine
// the single writer it is designed to be.
class QueueGate : public AdmissionGate {
 public:
  explicit QueueGate(Policy policy) : policy_(std::move(policy)) {}

  bool Manages(const Pod& pod) const override;
  GateVerdict Check(const Pod& pod, ClusterModel& model,
                    int64_t now_ms) override;
  void Bound(const Pod& pod, int64_t now_ms) override;

  // Timers and admission without a filter call (the serve loop's tick).
  void Tick(ClusterModel& model, int64_t now_ms);
  // Hot reload; the old policy stays when the new one is rejected.
  absl::Status UpdatePolicy(Policy policy);
  // Patches for pods admitted since the last call, in order.
  std::vector<AdmissionPatch> TakePatches();
  const QueueingEngine* engine() const { return engine_.get(); }

 private:
  QueueingEngine& EngineFor(ClusterModel& model);
  void CollectPatches();

  Policy policy_;
  std::unique_ptr<QueueingEngine> engine_;
  std::set<std::string> patched_;  // pods already reported as admitted
  std::vector<AdmissionPatch> patches_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_QUEUE_GATE_H_
