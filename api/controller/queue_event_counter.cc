#include "api/controller/queue_event_counter.h"

#include <algorithm>

namespace gpusched {

void WaitHistogram::Observe(double seconds) {
  for (size_t i = 0; i < kAdmissionWaitBuckets.size(); ++i) {
    if (seconds <= kAdmissionWaitBuckets[i]) ++buckets[i];
  }
  ++count;
  sum_seconds += seconds;
}

std::string_view PreemptionReason(std::string_view sentence) {
  const std::string_view prefix = sentence.substr(0, sentence.find(':'));
  for (std::string_view reason : kPreemptionReasons) {
    if (prefix == reason) return reason;
  }
  return "Other";
}

PassEventContext::PassEventContext(const QueueView& before) {
  for (const ClusterQueueView& cq : before.cluster_queues) {
    for (const AdmittedWorkload& w : cq.admitted) {
      admitted_.insert(w.key);
      queue_of_[w.key] = cq.name;
    }
    for (const PendingWorkload& w : cq.pending) queue_of_[w.key] = cq.name;
  }
}

std::string PassEventContext::QueueOf(const QueueingEngine& engine,
                                      const std::string& key) const {
  auto w = engine.workloads().find(key);
  if (w != engine.workloads().end()) return w->second.cluster_queue;
  auto seen = queue_of_.find(key);
  return seen == queue_of_.end() ? std::string() : seen->second;
}

bool PassEventContext::Note(const EngineEvent& e) {
  const bool was_admitted = admitted_.erase(e.workload) > 0;
  if (e.type == EngineEvent::Type::kAdmitted ||
      e.type == EngineEvent::Type::kAdopted) {
    admitted_.insert(e.workload);
  }
  return was_admitted;
}

// What the pass before said, and what this pass's events said so far.
struct QueueEventCounter::Tally {
  PassEventContext context;
  QueueEventCounts counts;  // this pass's
  explicit Tally(const QueueView& before) : context(before) {}
};

void QueueEventCounter::Count(const QueueingEngine& engine,
                              const std::vector<EngineEvent>& events,
                              const QueueView& before) {
  if (events.empty()) return;
  Tally tally(before);
  for (const EngineEvent& e : events) CountOne(engine, e, tally);
  std::lock_guard lock(mu_);
  for (const auto& [cq, n] : tally.counts.admitted) counts_.admitted[cq] += n;
  for (const auto& [key, n] : tally.counts.evicted) counts_.evicted[key] += n;
  for (const auto& [key, n] : tally.counts.preempted) {
    counts_.preempted[key] += n;
  }
  for (const auto& [cq, h] : tally.counts.wait) {
    WaitHistogram& total = counts_.wait[cq];
    for (size_t i = 0; i < h.buckets.size(); ++i) {
      total.buckets[i] += h.buckets[i];
    }
    total.count += h.count;
    total.sum_seconds += h.sum_seconds;
  }
}

namespace {

void ObserveAdmission(const QueueingEngine& engine, const EngineEvent& e,
                      const std::string& cq, QueueEventCounts& counts) {
  ++counts.admitted[cq];
  auto w = engine.workloads().find(e.workload);
  // Evicted again later in the pass, it waits since then: how long it
  // waited for this admission is lost, and it counts as 0.
  const int64_t since =
      w == engine.workloads().end() ? e.at_ms : w->second.pending_since_ms;
  counts.wait[cq].Observe(std::max<int64_t>(e.at_ms - since, 0) / 1000.0);
}

}  // namespace

// Workloads outside the queues (no ClusterQueue) are not counted: every
// series names its queue.
void QueueEventCounter::CountOne(const QueueingEngine& engine,
                                 const EngineEvent& e, Tally& tally) {
  const std::string cq = tally.context.QueueOf(engine, e.workload);
  QueueEventCounts& counts = tally.counts;
  const bool was_admitted = tally.context.Note(e);
  switch (e.type) {
    case EngineEvent::Type::kAdmitted:
      if (!cq.empty()) ObserveAdmission(engine, e, cq, counts);
      return;
    case EngineEvent::Type::kAdopted:
      return;
    case EngineEvent::Type::kPreempted: {
      if (!cq.empty()) ++counts.evicted[{cq, std::string(kEvictedPreempted)}];
      const std::string by = tally.context.QueueOf(engine, e.by);
      if (!by.empty()) {
        ++counts.preempted[{by, std::string(PreemptionReason(e.reason))}];
      }
      return;
    }
    case EngineEvent::Type::kTimedOut:
      // A pending gang's back-off times out too: only a rollback evicts.
      if (was_admitted && !cq.empty()) {
        ++counts.evicted[{cq, std::string(kEvictedPodsReadyTimeout)}];
      }
      return;
    case EngineEvent::Type::kEvicted:
      if (!cq.empty()) ++counts.evicted[{cq, std::string(kEvictedOther)}];
      return;
    case EngineEvent::Type::kFinished:
    case EngineEvent::Type::kQuotaReserved:
      return;
  }
}

QueueEventCounts QueueEventCounter::Snapshot() const {
  std::lock_guard lock(mu_);
  return counts_;
}

}  // namespace gpusched
