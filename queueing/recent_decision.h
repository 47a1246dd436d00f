// One admission, preemption or eviction the deciding replica made, as the
// dashboard's "recent decisions" and the visibility API's decisions list
// show it. A value of the read model: the admission loop keeps the last
// ones (api/controller/decision_log.h) and publishes them as an immutable
// snapshot beside its QueueView.
#ifndef GPUSCHED_QUEUEING_RECENT_DECISION_H_
#define GPUSCHED_QUEUEING_RECENT_DECISION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpusched {

struct RecentDecision {
  enum class Kind { kAdmitted, kPreempted, kEvicted };
  int64_t at_ms = 0;  // the engine's clock
  Kind kind = Kind::kAdmitted;
  std::string namespace_name;
  std::string name;  // the workload's: a PodGroup's, or a single pod's
  std::string cluster_queue;
  // Admitted; Kueue's preemption reason for Preempted (InClusterQueue, ...);
  // PodsReadyTimeout or Evicted for an eviction.
  std::string reason_code;
  std::string message;
  friend bool operator==(const RecentDecision&,
                         const RecentDecision&) = default;
};

// Newest first.
using RecentDecisions = std::vector<RecentDecision>;

inline std::string_view RecentDecisionKindName(RecentDecision::Kind kind) {
  switch (kind) {
    case RecentDecision::Kind::kAdmitted:
      return "Admitted";
    case RecentDecision::Kind::kPreempted:
      return "Preempted";
    case RecentDecision::Kind::kEvicted:
      return "Evicted";
  }
  return "Admitted";
}

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_RECENT_DECISION_H_
