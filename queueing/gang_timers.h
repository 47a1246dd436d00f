// Gang timers, the stage that watches time: partial gangs that time out
// (they back off), admitted workloads not bound in time (rolled back),
// running gangs below minMember (evicted whole after a grace), and the
// starvation reservation (nodes held for the longest-waiting workload).
// It decides; the engine carries the outcomes out.
#ifndef GPUSCHED_QUEUEING_GANG_TIMERS_H_
#define GPUSCHED_QUEUEING_GANG_TIMERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "queueing/policy.h"
#include "queueing/workload.h"

namespace gpusched {

// What a timer that fired asks of the engine.
struct TimerOutcome {
  enum class Kind {
    kBackedOff,     // pending gang short of pods: backoff set, emit TimedOut
    kBindTimedOut,  // admitted, not bound in time: roll back, emit TimedOut
    // As kBindTimedOut, past backoffLimitCount: roll back and deactivate.
    kRequeuingLimitExceeded,
    kBelowMinMember,  // running gang short of minMember: evict whole
  };
  Kind kind = Kind::kBackedOff;
  Workload* workload = nullptr;
  std::string reason;
};

class GangTimers {
 public:
  using LiveMap = std::map<std::string, Workload*>;

  // Every call that reads the scheduler's settings (timeouts, backoff,
  // grace, starvation) is given them: a new policy applies at once, with
  // no pointer into its owner to keep true.
  GangTimers() = default;

  // Pending gangs whose pods did not all come in time: each gets its
  // backoff (failed_attempts, backoff_until_ms, reason) here.
  std::vector<TimerOutcome> BackOffIncompleteGangs(
      const SchedulerConfig& config, const LiveMap& live, int64_t now) const;
  // Admitted workloads with members not bound in time (Kueue's
  // PodsReadyTimeout). The engine rolls each back, then calls
  // BackOffAfterRollback, which deactivates those past backoffLimitCount.
  std::vector<TimerOutcome> UnboundPastTimeout(const SchedulerConfig& config,
                                               const LiveMap& live,
                                               int64_t now) const;
  void BackOffAfterRollback(const SchedulerConfig& config, Workload& w,
                            const TimerOutcome& outcome, int64_t now) const;
  // Running gangs below minMember past the grace; forgets them (and those
  // no longer short).
  std::vector<TimerOutcome> TakeBelowMinPastGrace(
      const SchedulerConfig& config, std::map<std::string, Workload>& workloads,
      int64_t now);

  // A running workload lost members: the grace counts from now, unless it
  // already counts.
  void NoteBelowMin(const std::string& key, int64_t now) {
    below_min_since_.try_emplace(key, now);
  }
  void Forget(const std::string& key) { below_min_since_.erase(key); }
  // Graces count `ms` later (see QueueingEngine::PostponeEvictions).
  void Postpone(int64_t ms) {
    for (auto& [key, since] : below_min_since_) since += ms;
  }
  // When the grace of a workload below minMember ends (it is evicted
  // then), if it is in one.
  std::optional<int64_t> GraceEnds(const SchedulerConfig& config,
                                   const Workload& w) const {
    auto it = below_min_since_.find(w.key);
    if (it == below_min_since_.end()) return std::nullopt;
    if (!w.is_gang) return it->second;
    if (config.stale_gang_grace_ms == SchedulerConfig::kNeverEvictShortGang) {
      return std::nullopt;
    }
    return it->second + config.stale_gang_grace_ms;
  }

  // The starvation reservation: lifted when its workload no longer waits,
  // given to the longest-waiting ready queued workload past the timeout.
  // `nodes_for` picks the nodes for a workload.
  void UpdateReservation(
      const SchedulerConfig& config,
      const std::map<std::string, Workload>& workloads, const LiveMap& live,
      int64_t now, const std::function<bool(const Workload&)>& ready,
      const std::function<std::vector<std::string>(const Workload&)>&
          nodes_for);
  // The workload `w` was admitted: a reservation for it is done.
  void NoteAdmitted(const Workload& w);
  const std::string& reserved_for() const { return reserved_for_; }
  const std::set<std::string>& reserved_nodes() const {
    return reserved_nodes_;
  }
  // Counts every change of the reservation: a lifted one frees capacity.
  uint64_t reservation_changes() const { return reservation_changes_; }

  // The next time a timer is due.
  std::optional<int64_t> NextWakeup(
      const SchedulerConfig& config,
      const std::map<std::string, Workload>& workloads, const LiveMap& live,
      int64_t now) const;

 private:
  void LiftReservation();

  std::map<std::string, int64_t> below_min_since_;
  std::set<std::string> reserved_nodes_;
  uint64_t reservation_changes_ = 0;
  std::string reserved_for_;
};

// The delay before a gang's next try after `attempts` failed ones.
int64_t GangBackoff(const SchedulerConfig& config, int attempts);
// Whether one more PodsReadyTimeout requeue of `w` would pass
// backoffLimitCount (Kueue's triggerDeactivation).
bool PastRequeuingLimit(const SchedulerConfig& config, const Workload& w);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_GANG_TIMERS_H_
