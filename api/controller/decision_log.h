// The deciding replica's last admissions, preemptions and evictions, for
// the dashboard and the visibility API's decisions list: a bounded ring
// filled from each pass's engine events (on the loop thread, as the queue
// counters are) and published as an immutable snapshot, so readers take no
// lock of the engine and every reader of one snapshot sees the same list.
#ifndef GPUSCHED_API_CONTROLLER_DECISION_LOG_H_
#define GPUSCHED_API_CONTROLLER_DECISION_LOG_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "queueing/engine.h"
#include "queueing/queue_view.h"
#include "queueing/recent_decision.h"

namespace gpusched {

// Enough for a screen of history; a burst of a thousand admissions keeps
// only its end, which is what a person watching wants.
inline constexpr size_t kRecentDecisionsKept = 100;

class DecisionLog {
 public:
  explicit DecisionLog(size_t capacity = kRecentDecisionsKept)
      : capacity_(capacity) {}

  // One pass's events, with the engine as the pass left it and the queues
  // as the pass before left them (PassEventContext). Loop thread only.
  void Record(const QueueingEngine& engine,
              const std::vector<EngineEvent>& events, const QueueView& before);
  // Newest first; never null. Thread-safe.
  std::shared_ptr<const RecentDecisions> Latest() const;

 private:
  const size_t capacity_;
  std::deque<RecentDecision> ring_;  // loop thread only; oldest first
  mutable std::mutex mu_;
  std::shared_ptr<const RecentDecisions> latest_ =
      std::make_shared<const RecentDecisions>();  // guarded by mu_
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_DECISION_LOG_H_
