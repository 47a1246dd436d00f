// Counts what each admission pass did to the queues, from the engine's
// events: admissions (with how long each waited), evictions and
// preemptions, by ClusterQueue and a reason of a fixed set. The loop
// counts only while it decides, so with two replicas every event is
// counted once, by the replica that caused it; a standby's adoptions of
// what the other one admitted are not admissions.
//
// Written by the loop thread (Count), read at scrape time (Snapshot).
#ifndef GPUSCHED_API_CONTROLLER_QUEUE_EVENT_COUNTER_H_
#define GPUSCHED_API_CONTROLLER_QUEUE_EVENT_COUNTER_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "queueing/engine.h"
#include "queueing/queue_view.h"

namespace gpusched {

// Bucket upper bounds of the admission wait in seconds: 1 s .. 4 h, from a
// workload admitted in its first pass to one that waited out a long job.
inline constexpr std::array<double, 12> kAdmissionWaitBuckets = {
    1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400};

struct WaitHistogram {
  std::array<uint64_t, kAdmissionWaitBuckets.size()> buckets{};  // cumulative
  uint64_t count = 0;
  double sum_seconds = 0;
  void Observe(double seconds);
  friend bool operator==(const WaitHistogram&, const WaitHistogram&) = default;
};

// Labels of evictions and preemptions: a ClusterQueue and a reason.
using QueueReason = std::pair<std::string, std::string>;

struct QueueEventCounts {
  std::map<std::string, uint64_t> admitted;   // by ClusterQueue
  std::map<QueueReason, uint64_t> evicted;    // by evicted workload's CQ
  std::map<QueueReason, uint64_t> preempted;  // by preempting CQ
  std::map<std::string, WaitHistogram> wait;  // by ClusterQueue
  friend bool operator==(const QueueEventCounts&,
                         const QueueEventCounts&) = default;
};

// Eviction reasons (Kueue's words where it has one).
inline constexpr std::string_view kEvictedPreempted = "Preempted";
// Admitted, not bound in time, rolled back (Kueue: PodsReadyTimeout).
inline constexpr std::string_view kEvictedPodsReadyTimeout = "PodsReadyTimeout";
// A gang short of members past its grace, or a placement that vanished.
inline constexpr std::string_view kEvictedOther = "Evicted";

inline constexpr std::string_view kEvictionReasons[] = {
    kEvictedPreempted, kEvictedPodsReadyTimeout, kEvictedOther};

// Kueue's preemption reasons, the planner's prefixes of a victim's
// sentence.
inline constexpr std::string_view kPreemptionReasons[] = {
    "InClusterQueue", "InCohortReclamation", "InCohortFairSharing",
    "InCohortReclaimWhileBorrowing"};

// The preemption reason of a victim's sentence ("InClusterQueue: ..."):
// one of kPreemptionReasons, or "Other" so the label stays bounded.
std::string_view PreemptionReason(std::string_view sentence);

// What one pass's events are read against: the workloads the pass before
// had admitted and the ClusterQueue of each workload it knew (a workload
// the engine forgot in the pass is still named by its queue). Shared by
// the counter and the decision log, so both read an event alike.
class PassEventContext {
 public:
  explicit PassEventContext(const QueueView& before);
  // The workload's ClusterQueue: the engine's word first, since the view
  // before may not know a new workload; empty outside the queues.
  std::string QueueOf(const QueueingEngine& engine,
                      const std::string& key) const;
  // Takes the event in, in the pass's order; true when its workload was
  // admitted just before it (a timed-out workload was evicted only then).
  bool Note(const EngineEvent& e);

 private:
  std::set<std::string> admitted_;               // workload keys
  std::map<std::string, std::string> queue_of_;  // key -> ClusterQueue
};

class QueueEventCounter {
 public:
  // One pass's events, with the engine as the pass left it and the queues
  // as the pass before left them (which workloads were admitted then: a
  // timed-out workload was evicted only if it had been admitted). Loop
  // thread, engine lock held.
  void Count(const QueueingEngine& engine,
             const std::vector<EngineEvent>& events, const QueueView& before);
  // Thread-safe copy of the totals so far.
  QueueEventCounts Snapshot() const;

 private:
  struct Tally;
  void CountOne(const QueueingEngine& engine, const EngineEvent& e,
                Tally& tally);

  mutable std::mutex mu_;
  QueueEventCounts counts_;  // guarded by mu_
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_QUEUE_EVENT_COUNTER_H_
