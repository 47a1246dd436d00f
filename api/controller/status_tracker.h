// Tells, after each admission pass, which workloads changed their reason
// code or phase, as WorkloadStatus decisions: the loop re-explains every
// waiting workload every pass, often in a new sentence ("position 3", then
// "position 2"), but only a new code or phase is news for an Event or a
// PodGroup status. Loop thread only.
#ifndef GPUSCHED_API_CONTROLLER_STATUS_TRACKER_H_
#define GPUSCHED_API_CONTROLLER_STATUS_TRACKER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "queueing/engine.h"
#include "queueing/queue_decision.h"

namespace gpusched {

// Pending positions in their queues (QueueingEngine::PendingPositions).
using PendingPositionMap = std::map<const Workload*, std::pair<size_t, size_t>>;

class StatusTracker {
 public:
  // After a pass: first what the pass's events did to a workload
  // (preempted, evicted), then one status per workload whose (code, phase)
  // differs from the last one told. A workload adopted after a restart is
  // remembered silently: its admission was told by the run before.
  std::vector<QueueDecision> Changes(const QueueingEngine& engine,
                                     const std::vector<EngineEvent>& events,
                                     const PendingPositionMap& positions,
                                     int64_t now);

 private:
  struct Told {
    ReasonCode code = ReasonCode::kNone;
    WorkloadPhase phase = WorkloadPhase::kWaiting;
    uint64_t pass = 0;  // the last pass that saw it
  };
  // The workload's code, phase and sentence now; code kNone when there is
  // nothing to tell yet (pending, never looked at).
  WorkloadStatus Current(
      const QueueingEngine& engine, const Workload& w,
      const PendingPositionMap& positions,
      const std::map<std::string, const EngineEvent*>& admitted_events,
      int64_t now) const;
  // What a pass's events said, by workload key.
  struct PassEvents {
    std::map<std::string, const EngineEvent*> admitted;
    std::set<std::string> adopted;
    std::set<std::string> finished;
  };
  void TellEventOutcomes(const QueueingEngine& engine,
                         const std::vector<EngineEvent>& events,
                         const PendingPositionMap& positions, int64_t now,
                         PassEvents& seen, std::vector<QueueDecision>& out);
  void TellStatusChanges(const QueueingEngine& engine,
                         const PendingPositionMap& positions, int64_t now,
                         const PassEvents& seen,
                         std::vector<QueueDecision>& out);

  // By workload key, updated in place: a pass over many waiting workloads
  // that changed nothing allocates nothing.
  std::map<std::string, Told> told_;
  uint64_t pass_ = 0;
};

// "WaitingForQuota: queue team-a: needs ...": the filter's answer for a
// waiting pod, the same words its Events carry. Unprefixed when `code` is
// kNone.
std::string CodedReason(ReasonCode code, const std::string& sentence);

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_STATUS_TRACKER_H_
