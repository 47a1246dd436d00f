#include "api/controller/decision_log.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/controller/queue_event_counter.h"

namespace gpusched {
namespace {

// The record an event makes, if it is a decision a person would look for:
// admissions, preemptions and evictions of an admitted workload. Adoptions
// echo the other replica's admissions; a pending gang's back-off timing
// out evicts nothing.
std::optional<RecentDecision> RecordOf(const EngineEvent& e,
                                       const std::string& cq,
                                       bool was_admitted) {
  RecentDecision d{.at_ms = e.at_ms, .cluster_queue = cq};
  switch (e.type) {
    case EngineEvent::Type::kAdmitted:
      d.reason_code = "Admitted";
      d.message = cq.empty() ? e.reason
                             : absl::StrCat("admitted by ClusterQueue ", cq,
                                            ": ", e.reason);
      break;
    case EngineEvent::Type::kPreempted:
      d.kind = RecentDecision::Kind::kPreempted;
      d.reason_code = std::string(PreemptionReason(e.reason));
      d.message = absl::StrCat(e.reason, " (for ", e.by, ")");
      break;
    case EngineEvent::Type::kTimedOut:
      if (!was_admitted) return std::nullopt;
      d.kind = RecentDecision::Kind::kEvicted;
      d.reason_code = std::string(kEvictedPodsReadyTimeout);
      d.message = e.reason;
      break;
    case EngineEvent::Type::kEvicted:
      d.kind = RecentDecision::Kind::kEvicted;
      d.reason_code = std::string(kEvictedOther);
      d.message = e.reason;
      break;
    case EngineEvent::Type::kAdopted:
    case EngineEvent::Type::kFinished:
    case EngineEvent::Type::kQuotaReserved:
      return std::nullopt;
  }
  if (const size_t slash = e.workload.find('/'); slash != std::string::npos) {
    d.namespace_name = e.workload.substr(0, slash);
    d.name = e.workload.substr(slash + 1);
  } else {
    d.name = e.workload;
  }
  return d;
}

}  // namespace

void DecisionLog::Record(const QueueingEngine& engine,
                         const std::vector<EngineEvent>& events,
                         const QueueView& before) {
  PassEventContext context(before);
  bool changed = false;
  for (const EngineEvent& e : events) {
    const std::string cq = context.QueueOf(engine, e.workload);
    const bool was_admitted = context.Note(e);
    std::optional<RecentDecision> d = RecordOf(e, cq, was_admitted);
    if (!d) continue;
    ring_.push_back(*std::move(d));
    if (ring_.size() > capacity_) ring_.pop_front();
    changed = true;
  }
  if (!changed) return;
  auto latest = std::make_shared<RecentDecisions>(ring_.rbegin(), ring_.rend());
  std::lock_guard lock(mu_);
  latest_ = std::move(latest);
}

std::shared_ptr<const RecentDecisions> DecisionLog::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

}  // namespace gpusched
