#include "queueing/gang_timers.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"

namespace gpusched {
namespace {

std::string Seconds(int64_t ms) { return absl::StrCat(ms / 1000, "s"); }

// The gang's own timeout (its PodGroup's scheduleTimeoutSeconds), else
// the scheduler's.
int64_t TimeoutOf(const SchedulerConfig& config, const Workload& w) {
  return w.schedule_timeout_ms.value_or(config.gang_admission_timeout_ms);
}

}  // namespace

int64_t GangBackoff(const SchedulerConfig& config, int attempts) {
  int64_t delay = config.gang_backoff_base_ms;
  for (int i = 1; i < attempts && delay < config.gang_backoff_max_ms; ++i)
    delay *= 2;
  return std::min(delay, config.gang_backoff_max_ms);
}

std::vector<TimerOutcome> GangTimers::BackOffIncompleteGangs(
    const SchedulerConfig& config, const LiveMap& live, int64_t now) const {
  std::vector<TimerOutcome> fired;
  for (const auto& [key, each] : live) {
    Workload& w = *each;
    if (w.state != Workload::State::kPending || !w.ShortOfPods() ||
        w.backoff_until_ms > now) {
      continue;
    }
    const int64_t timeout = TimeoutOf(config, w);
    if (now - w.pending_since_ms < timeout) continue;
    ++w.failed_attempts;
    w.backoff_until_ms = now + GangBackoff(config, w.failed_attempts);
    w.pending_since_ms = w.backoff_until_ms;
    w.Explain({ReasonCode::kBackingOff,
               absl::StrCat("only ", w.pods.size() + w.succeeded.size(),
                            " of minMember ", w.min_member, " pods after ",
                            Seconds(timeout), "; retry in ",
                            Seconds(w.backoff_until_ms - now))});
    fired.push_back({TimerOutcome::Kind::kBackedOff, &w, w.reason});
  }
  return fired;
}

std::vector<TimerOutcome> GangTimers::UnboundPastTimeout(
    const SchedulerConfig& config, const LiveMap& live, int64_t now) const {
  std::vector<TimerOutcome> fired;
  for (const auto& [key, each] : live) {
    Workload& w = *each;
    if (!w.admitted() || w.PodsReady()) continue;
    const int64_t timeout = TimeoutOf(config, w);
    if (now - w.admitted_at_ms < timeout) continue;
    const std::string what = absl::StrCat(
        "only ", w.ReadyMembers(), " of ", w.placements.size(),
        " members bound", w.readiness_reported ? " and Ready" : "", " within ",
        Seconds(timeout), "; quota and GPUs released, ");
    if (PastRequeuingLimit(config, w)) {
      fired.push_back(
          {TimerOutcome::Kind::kRequeuingLimitExceeded, &w,
           absl::StrCat(what, "deactivated after ", w.requeue_count,
                        " requeues (backoffLimitCount ",
                        *config.gang_backoff_limit_count,
                        "); a new pod of the workload activates it again")});
      continue;
    }
    const int64_t retry = GangBackoff(config, w.requeue_count + 1);
    fired.push_back({TimerOutcome::Kind::kBindTimedOut, &w,
                     absl::StrCat(what, "retry in ", Seconds(retry))});
  }
  return fired;
}

bool PastRequeuingLimit(const SchedulerConfig& config, const Workload& w) {
  return config.gang_backoff_limit_count.has_value() &&
         w.requeue_count + 1 > *config.gang_backoff_limit_count;
}

// Kueue's UpdateRequeueState: the n-th requeue waits base*2^(n-1), capped
// at the maximum; Kueue's jitter (0.0001 of it) is left out, so a
// simulation replays exactly.
void GangTimers::BackOffAfterRollback(const SchedulerConfig& config,
                                      Workload& w, const TimerOutcome& outcome,
                                      int64_t now) const {
  ++w.failed_attempts;
  w.admitted_at_ms = -1;
  if (outcome.kind == TimerOutcome::Kind::kRequeuingLimitExceeded) {
    w.deactivated = true;
    // Held as a backoff without end: nothing admits or wakes it.
    w.backoff_until_ms = std::numeric_limits<int64_t>::max();
    w.Explain({ReasonCode::kRequeuingLimitExceeded, outcome.reason});
    return;
  }
  ++w.requeue_count;
  w.backoff_until_ms = now + GangBackoff(config, w.requeue_count);
  w.pending_since_ms = w.backoff_until_ms;
  w.Explain({ReasonCode::kPodsReadyTimeout, outcome.reason});
}

std::vector<TimerOutcome> GangTimers::TakeBelowMinPastGrace(
    const SchedulerConfig& config, std::map<std::string, Workload>& workloads,
    int64_t now) {
  std::vector<TimerOutcome> fired;
  for (auto it = below_min_since_.begin(); it != below_min_since_.end();) {
    Workload& w = workloads[it->first];
    const int64_t grace = w.is_gang ? config.stale_gang_grace_ms : 0;
    // Members that succeeded did their part (as in PartlyPlacedGang).
    const bool short_of_members =
        w.admitted() && static_cast<int>(w.placements.size() +
                                         w.succeeded.size()) < w.min_member;
    const bool never = grace == SchedulerConfig::kNeverEvictShortGang;
    if (short_of_members && (never || now - it->second < grace)) {
      ++it;
      continue;
    }
    if (short_of_members) {
      fired.push_back(
          {TimerOutcome::Kind::kBelowMinMember, &w,
           absl::StrCat(w.placements.size(), " of minMember ", w.min_member,
                        " pods left for ", Seconds(now - it->second),
                        "; evicting the whole gang")});
    }
    it = below_min_since_.erase(it);
  }
  return fired;
}

void GangTimers::LiftReservation() {
  reserved_for_.clear();
  reserved_nodes_.clear();
  ++reservation_changes_;
}

void GangTimers::NoteAdmitted(const Workload& w) {
  if (reserved_for_ == w.key) LiftReservation();
}

void GangTimers::UpdateReservation(
    const SchedulerConfig& config,
    const std::map<std::string, Workload>& workloads, const LiveMap& live,
    int64_t now, const std::function<bool(const Workload&)>& ready,
    const std::function<std::vector<std::string>(const Workload&)>& nodes_for) {
  if (!reserved_for_.empty()) {
    auto it = workloads.find(reserved_for_);
    if (it == workloads.end() ||
        it->second.state != Workload::State::kPending) {
      LiftReservation();
    }
  }
  if (!reserved_for_.empty()) return;
  const Workload* starving = nullptr;
  for (const auto& [key, each] : live) {
    const Workload& w = *each;
    if (w.state != Workload::State::kPending || w.cluster_queue.empty() ||
        !ready(w)) {
      continue;
    }
    if (now - w.pending_since_ms < config.starvation_timeout_ms) continue;
    if (starving == nullptr || w.pending_since_ms < starving->pending_since_ms)
      starving = &w;
  }
  if (starving == nullptr) return;
  reserved_for_ = starving->key;
  std::vector<std::string> nodes = nodes_for(*starving);
  reserved_nodes_ = std::set<std::string>(nodes.begin(), nodes.end());
  ++reservation_changes_;
}

std::optional<int64_t> GangTimers::NextWakeup(
    const SchedulerConfig& config,
    const std::map<std::string, Workload>& workloads, const LiveMap& live,
    int64_t now) const {
  std::optional<int64_t> next;
  auto consider = [&](int64_t at) {
    if (at > now && (!next || at < *next)) next = at;
  };
  bool queued_pending = false;
  for (const auto& [key, each] : live) {
    const Workload& w = *each;
    if (w.state != Workload::State::kPending || w.deactivated) continue;
    queued_pending |= !w.cluster_queue.empty();
    consider(w.backoff_until_ms);
    if (w.ShortOfPods()) {
      consider(w.pending_since_ms + TimeoutOf(config, w));
    } else if (!w.cluster_queue.empty() && reserved_for_.empty()) {
      consider(w.pending_since_ms + config.starvation_timeout_ms);
    }
  }
  for (const auto& [key, each] : live) {
    const Workload& w = *each;
    if (w.admitted() && !w.PodsReady()) {
      consider(w.admitted_at_ms + TimeoutOf(config, w));
    }
    // A victim leaving its minimum runtime may unblock a pending preemptor.
    if (queued_pending && config.preemption_minimum_runtime_ms > 0 &&
        w.admitted() && !w.cluster_queue.empty()) {
      consider(w.RunStartMs() + config.preemption_minimum_runtime_ms);
    }
  }
  for (const auto& [key, since] : below_min_since_) {
    auto it = workloads.find(key);
    if (it == workloads.end()) {
      consider(since);
    } else if (std::optional<int64_t> ends = GraceEnds(config, it->second)) {
      consider(*ends);
    }
  }
  return next;
}

}  // namespace gpusched
