// Gang lifecycle timers: partial gangs that time out (backoff), running
// gangs that fall below minMember (evicted whole after a grace period), and
// starving workloads (a node reservation that others may not use).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "queueing/engine_internal.h"

namespace gpusched {
namespace {

int64_t Backoff(const SchedulerConfig& config, int attempts) {
  int64_t delay = config.gang_backoff_base_ms;
  for (int i = 1; i < attempts && delay < config.gang_backoff_max_ms; ++i)
    delay *= 2;
  return std::min(delay, config.gang_backoff_max_ms);
}

std::string Seconds(int64_t ms) { return absl::StrCat(ms / 1000, "s"); }

}  // namespace

std::vector<std::string> QueueingEngine::NodesReservedFor(
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

void QueueingEngine::RunTimers(int64_t now) {
  const SchedulerConfig& config = policy_.config;
  for (auto& [key, live] : live_) {
    Workload& w = *live;
    // A gang whose pods do not all exist in time backs off.
    if (w.state == Workload::State::kPending && w.is_gang &&
        static_cast<int>(w.pods.size()) < w.min_member &&
        w.backoff_until_ms <= now) {
      const int64_t timeout =
          w.schedule_timeout_ms.value_or(config.gang_admission_timeout_ms);
      if (now - w.pending_since_ms >= timeout) {
        ++w.failed_attempts;
        w.backoff_until_ms = now + Backoff(config, w.failed_attempts);
        w.pending_since_ms = w.backoff_until_ms;
        w.Explain({ReasonCode::kBackingOff,
                   absl::StrCat("only ", w.pods.size(), " of minMember ",
                                w.min_member, " pods after ", Seconds(timeout),
                                "; retry in ",
                                Seconds(w.backoff_until_ms - now))});
        Emit(now, EngineEvent::Type::kTimedOut, w, "", w.reason);
      }
    }
  }
  // Admitted workloads whose members are not all bound in time roll back.
  for (auto& [key, live] : live_) {
    Workload& w = *live;
    if (!w.admitted() || w.bound.size() >= w.placements.size()) continue;
    const int64_t timeout =
        w.schedule_timeout_ms.value_or(config.gang_admission_timeout_ms);
    if (now - w.admitted_at_ms < timeout) continue;
    const size_t bound = w.bound.size(), placed = w.placements.size();
    Release(w);
    ++w.failed_attempts;
    SetState(w, Workload::State::kPending);
    w.admitted_at_ms = -1;
    w.backoff_until_ms = now + Backoff(config, w.failed_attempts);
    w.pending_since_ms = w.backoff_until_ms;
    w.Explain({ReasonCode::kAdmissionTimedOut,
               absl::StrCat("only ", bound, " of ", placed,
                            " members bound within ", Seconds(timeout),
                            "; quota and GPUs released, retry in ",
                            Seconds(w.backoff_until_ms - now))});
    Emit(now, EngineEvent::Type::kTimedOut, w, "", w.reason);
  }
  // Running gangs short of minMember are evicted whole after the grace.
  for (auto it = below_min_since_.begin(); it != below_min_since_.end();) {
    Workload& w = workloads_[it->first];
    const int64_t grace = w.is_gang ? config.stale_gang_grace_ms : 0;
    const bool short_of_members =
        w.admitted() && static_cast<int>(w.placements.size()) < w.min_member;
    if (!short_of_members) {
      it = below_min_since_.erase(it);
      continue;
    }
    if (now - it->second < grace) {
      ++it;
      continue;
    }
    const std::string reason = absl::StrCat(
        w.placements.size(), " of minMember ", w.min_member, " pods left for ",
        Seconds(now - it->second), "; evicting the whole gang");
    it = below_min_since_.erase(it);
    Evict(w, now, EngineEvent::Type::kEvicted, "", reason);
  }
  // The longest-starving queued workload gets a node reservation.
  if (!reserved_for_.empty()) {
    auto it = workloads_.find(reserved_for_);
    if (it == workloads_.end() ||
        it->second.state != Workload::State::kPending) {
      reserved_for_.clear();
      reserved_nodes_.clear();
      ++reservation_changes_;
    }
  }
  if (reserved_for_.empty()) {
    const Workload* starving = nullptr;
    for (const auto& [key, live] : live_) {
      const Workload& w = *live;
      if (w.state != Workload::State::kPending || !IsQueued(w) ||
          !Ready(w, now))
        continue;
      if (now - w.pending_since_ms < config.starvation_timeout_ms) continue;
      if (starving == nullptr ||
          w.pending_since_ms < starving->pending_since_ms) {
        starving = &w;
      }
    }
    if (starving != nullptr) {
      reserved_for_ = starving->key;
      std::vector<std::string> nodes = NodesReservedFor(*starving);
      reserved_nodes_ = std::set<std::string>(nodes.begin(), nodes.end());
      ++reservation_changes_;
    }
  }
}

std::optional<int64_t> QueueingEngine::NextWakeup(int64_t now) const {
  std::optional<int64_t> next;
  auto consider = [&](int64_t at) {
    if (at > now && (!next || at < *next)) next = at;
  };
  const SchedulerConfig& config = policy_.config;
  for (const auto& [key, live] : live_) {
    const Workload& w = *live;
    if (w.state != Workload::State::kPending) continue;
    consider(w.backoff_until_ms);
    if (w.is_gang && static_cast<int>(w.pods.size()) < w.min_member) {
      consider(w.pending_since_ms + w.schedule_timeout_ms.value_or(
                                        config.gang_admission_timeout_ms));
    } else if (IsQueued(w) && reserved_for_.empty()) {
      consider(w.pending_since_ms + config.starvation_timeout_ms);
    }
  }
  for (const auto& [key, live] : live_) {
    const Workload& w = *live;
    if (w.admitted() && w.bound.size() < w.placements.size()) {
      consider(w.admitted_at_ms + w.schedule_timeout_ms.value_or(
                                      config.gang_admission_timeout_ms));
    }
  }
  // A victim leaving its minimum runtime may unblock a pending preemptor.
  bool queued_pending = false;
  for (const auto& [key, live] : live_) {
    const Workload& w = *live;
    queued_pending |= w.state == Workload::State::kPending && IsQueued(w);
  }
  if (queued_pending && config.preemption_minimum_runtime_ms > 0) {
    for (const auto& [key, live] : live_) {
      const Workload& w = *live;
      if (w.admitted() && IsQueued(w)) {
        consider(w.admitted_at_ms + config.preemption_minimum_runtime_ms);
      }
    }
  }
  for (const auto& [key, since] : below_min_since_) {
    auto it = workloads_.find(key);
    consider(since + (it != workloads_.end() && it->second.is_gang
                          ? config.stale_gang_grace_ms
                          : 0));
  }
  return next;
}

}  // namespace gpusched
