// What the planner keeps between calls: evictions a disruption budget
// refused (with their back-off) and whom each victim was evicted for.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "queueing/preemption_planner.h"

namespace gpusched {

std::string WaitingForBudget(const std::string& victim,
                             const std::string& message) {
  return absl::StrCat("waiting to preempt ", victim,
                      ": its eviction was refused: ", message);
}

const std::string* PreemptionPlanner::PreemptorOf(
    const std::string& victim) const {
  auto it = preemptor_of_.find(victim);
  return it == preemptor_of_.end() ? nullptr : &it->second;
}

int64_t PreemptionPlanner::NoteRefused(const std::string& victim,
                                       std::string message, int64_t now,
                                       const RefusalBackoff& backoff) {
  Refusal& refusal = refused_[victim];
  // Members of one gang are refused one by one: one back-off for them all.
  if (refusal.until > now) return refusal.until;
  int64_t delay = backoff.base_ms;
  for (int i = 0; i < refusal.count && delay < backoff.max_ms; ++i) delay *= 2;
  ++refusal.count;
  refusal.until = now + std::min(delay, backoff.max_ms);
  refusal.message = std::move(message);
  return refusal.until;
}

std::optional<int64_t> PreemptionPlanner::NextRefusalExpiry(int64_t now) const {
  std::optional<int64_t> next;
  for (const auto& [victim, refusal] : refused_) {
    if (refusal.until > now && (!next || refusal.until < *next)) {
      next = refusal.until;
    }
  }
  return next;
}

void PreemptionPlanner::Forget(const std::string& key) {
  refused_.erase(key);
  preemptor_of_.erase(key);
}

}  // namespace gpusched
