// The gang timers as the admission cycle carries them out: GangTimers
// decides who backs off, rolls back or is evicted, and where the
// starvation reservation goes; the cycle releases, re-states and reports.
#include <algorithm>

#include "queueing/admission_run.h"

namespace gpusched {

std::vector<std::string> AdmissionRun::NodesReservedFor(
    const Workload& w) const {
  int64_t demand = 0;
  for (const Pod* pod : w.MembersToAdmit()) {
    demand += EffectiveRequests(*pod).Get(kNvidiaGpu) * kMilliPerGpu;
  }
  std::vector<const NodeState*> nodes = model_->SortedNodes();
  // The nodes that will free up soonest are unknown; take those with the
  // most free GPUs now, so the reservation completes soonest.
  std::stable_sort(nodes.begin(), nodes.end(), [](auto* a, auto* b) {
    return a->gpus().free_milli() > b->gpus().free_milli();
  });
  std::vector<std::string> reserved;
  int64_t total = 0;
  for (const NodeState* node : nodes) {
    if (total >= demand) break;
    if (node->gpus().total_milli() == 0) continue;
    reserved.push_back(node->name());
    total += node->gpus().total_milli();
  }
  return reserved;
}

void AdmissionRun::RunTimers(int64_t now) {
  const SchedulerConfig& config = policy_.config;
  for (const TimerOutcome& fired :
       timers_.BackOffIncompleteGangs(config, live_, now)) {
    Emit(now, EngineEvent::Type::kTimedOut, *fired.workload, "", fired.reason);
  }
  for (const TimerOutcome& fired :
       timers_.UnboundPastTimeout(config, live_, now)) {
    Workload& w = *fired.workload;
    Release(w);
    // Kueue's Eviction timestamp: it queues from now, set before it is
    // indexed as pending again.
    if (fired.kind == TimerOutcome::Kind::kBindTimedOut &&
        config.requeuing_timestamp == RequeuingTimestamp::kEviction) {
      w.created_ms = now;
    }
    SetState(w, Workload::State::kPending);
    timers_.BackOffAfterRollback(config, w, fired, now);
    Emit(now, EngineEvent::Type::kTimedOut, w, "", w.reason);
  }
  for (const TimerOutcome& fired :
       timers_.TakeBelowMinPastGrace(config, workloads_, now)) {
    Evict(*fired.workload, now, EngineEvent::Type::kEvicted, "", fired.reason);
  }
  timers_.UpdateReservation(
      config, workloads_, live_, now,
      [&](const Workload& w) { return Ready(w, now); },
      [&](const Workload& w) { return NodesReservedFor(w); });
}

void AdmissionCycle::AdmissionRefused(const CycleInputs& in,
                                      const std::string& workload,
                                      const std::string& message, int64_t now) {
  AdmissionRun(*this, in).RollBackRefused(workload, message, now);
}

// As a gang not bound in time: released whole, and back after the gang
// backoff, since the cause (a policy denying the write) may stay.
void AdmissionRun::RollBackRefused(const std::string& key,
                                   const std::string& message, int64_t now) {
  auto it = workloads_.find(key);
  if (it == workloads_.end() || !it->second.admitted()) return;
  Workload& w = it->second;
  Release(w);
  SetState(w, Workload::State::kPending);
  timers_.Forget(w.key);
  ++w.failed_attempts;
  w.admitted_at_ms = -1;
  w.backoff_until_ms = now + GangBackoff(policy_.config, w.failed_attempts);
  w.pending_since_ms = w.backoff_until_ms;
  w.Explain({ReasonCode::kAdmissionRefused, message});
  Emit(now, EngineEvent::Type::kEvicted, w, "", w.reason);
}

}  // namespace gpusched
