#include "queueing/requeue_state.h"

#include <algorithm>
#include <limits>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/workload_store.h"

namespace gpusched {
namespace {

constexpr int64_t kHeldForEver = std::numeric_limits<int64_t>::max();

// A backoff Kueue keeps as requeueState.requeueAt: after a rollback by
// PodsReadyTimeout, or an admission check's Retry. A gang that did not
// complete (BackingOff) is gpusched's own and starts afresh.
bool RequeueBackoff(const Workload& w) {
  return w.state == Workload::State::kPending && !w.deactivated &&
         w.backoff_until_ms > 0 &&
         (w.code == ReasonCode::kPodsReadyTimeout ||
          w.code == ReasonCode::kAdmissionCheck);
}

void ClearRequeueState(Workload& w) {
  w.requeue_count = 0;
  if (w.deactivated || RequeueBackoff(w)) w.backoff_until_ms = 0;
  w.deactivated = false;
}

// A pending workload takes the whole record: its count, its backoff or
// deactivation with the sentence that said why, and (Eviction timestamp)
// the time it queues from. True when its place in its queue moved.
bool ApplyToPending(Workload& w, const RequeueRecord& r,
                    RequeuingTimestamp timestamp) {
  w.requeue_count = r.count;
  if (r.deactivated) {
    w.deactivated = true;
    w.backoff_until_ms = kHeldForEver;
    w.Explain({r.code, r.message});
  } else {
    if (w.deactivated) w.backoff_until_ms = 0;
    w.deactivated = false;
    if (r.requeue_at_ms > 0) {
      w.backoff_until_ms = r.requeue_at_ms;
      w.pending_since_ms = r.requeue_at_ms;
      w.Explain({r.code, r.message});
    }
  }
  if (timestamp != RequeuingTimestamp::kEviction || r.queued_from_ms <= 0 ||
      r.queued_from_ms == w.created_ms) {
    return false;
  }
  w.created_ms = r.queued_from_ms;
  return true;
}

}  // namespace

std::vector<RequeueRecord> RequeueRecordsOf(
    const std::map<std::string, Workload>& workloads) {
  std::vector<RequeueRecord> records;
  for (const auto& [key, w] : workloads) {
    if (w.state == Workload::State::kFinished) continue;
    const bool backoff = RequeueBackoff(w);
    if (w.requeue_count == 0 && !w.deactivated && !backoff) continue;
    RequeueRecord r{.workload = key,
                    .count = w.requeue_count,
                    .requeue_at_ms = backoff ? w.backoff_until_ms : 0,
                    .queued_from_ms = w.created_ms,
                    .deactivated = w.deactivated};
    if (w.deactivated || backoff) {
      r.code = w.code;
      r.message = w.reason;
    }
    records.push_back(std::move(r));
  }
  return records;
}

void RequeueKeeper::Restore(WorkloadStore& store, const QuotaFlavors& flavors,
                            const std::vector<RequeueRecord>& records,
                            RequeuingTimestamp timestamp, int64_t now) {
  std::map<std::string_view, const RequeueRecord*> by_key;
  for (const RequeueRecord& r : records) by_key[r.workload] = &r;
  kept_.clear();
  for (auto& [key, w] : store.workloads()) {
    if (w.state == Workload::State::kFinished) continue;
    auto it = by_key.find(key);
    if (it == by_key.end()) {
      ClearRequeueState(w);
      continue;
    }
    const RequeueRecord& r = *it->second;
    by_key.erase(it);
    if (w.state != Workload::State::kPending) {
      w.requeue_count = r.count;
    } else if (ApplyToPending(w, r, timestamp)) {
      store.classes().Reindex(w, flavors);
    }
  }
  for (const auto& [key, r] : by_key) {
    if (!r->deactivated) kept_[r->workload] = {*r, now};
  }
}

void RequeueKeeper::KeepForgotten(const std::vector<Workload>& forgotten,
                                  int64_t now) {
  Expire(now);
  for (const Workload& w : forgotten) {
    if (w.deactivated || w.requeue_count == 0) continue;
    RequeueRecord r{.workload = w.key,
                    .count = w.requeue_count,
                    .queued_from_ms = w.created_ms};
    // Its backoff, if still running: deleting its pods does not end it.
    if (w.backoff_until_ms > now) {
      r.requeue_at_ms = w.backoff_until_ms;
      r.code = ReasonCode::kPodsReadyTimeout;
      r.message = absl::StrCat("requeued ", w.requeue_count,
                               " times after PodsReadyTimeout; its pods were "
                               "replaced during the backoff");
    }
    kept_[w.key] = {std::move(r), now};
  }
}

void RequeueKeeper::NotePod(WorkloadStore& store, const QuotaFlavors& flavors,
                            const std::string& pod_key,
                            RequeuingTimestamp timestamp) {
  if (kept_.empty()) return;
  const Workload* of_pod = store.FindWorkloadOfPod(pod_key);
  if (of_pod == nullptr) return;
  auto it = kept_.find(of_pod->key);
  if (it == kept_.end()) return;
  Workload& w = store.workloads().at(it->first);
  if (w.state == Workload::State::kPending && w.requeue_count == 0 &&
      ApplyToPending(w, it->second.record, timestamp)) {
    store.classes().Reindex(w, flavors);
  }
  kept_.erase(it);
}

std::vector<RequeueRecord> RequeueKeeper::Records(
    const std::map<std::string, Workload>& workloads) const {
  std::vector<RequeueRecord> records = RequeueRecordsOf(workloads);
  for (const auto& [key, kept] : kept_) {
    if (!workloads.contains(key)) records.push_back(kept.record);
  }
  std::sort(records.begin(), records.end(),
            [](const RequeueRecord& a, const RequeueRecord& b) {
              return a.workload < b.workload;
            });
  return records;
}

void RequeueKeeper::Expire(int64_t now) {
  std::erase_if(kept_, [&](const auto& entry) {
    return now - entry.second.since_ms >= kKeepMs;
  });
}

ReasonCode RequeueCodeOfName(std::string_view name) {
  for (ReasonCode code :
       {ReasonCode::kPodsReadyTimeout, ReasonCode::kRequeuingLimitExceeded,
        ReasonCode::kAdmissionCheck}) {
    if (ReasonCodeName(code) == name) return code;
  }
  return ReasonCode::kNone;
}

}  // namespace gpusched
