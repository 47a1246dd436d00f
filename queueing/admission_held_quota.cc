// Capacity a lender cannot be sure to reclaim (Kueue's
// reserveCapacityForUnreclaimablePreempt): the head of a StrictFIFO queue
// that needs preemption but finds no victims keeps, pass after pass, the
// quota it would take, unless its queue may reclaim from anyone
// (reclaimWithinCohort: Any). Other queues cannot borrow it meanwhile, so
// the head is not starved by borrowers it could never evict.
//
// Kueue holds it within one scheduling cycle for any queue; a
// BestEffortFIFO head is set aside after that cycle and the borrower gets
// in at the next, so only StrictFIFO heads hold quota here.
#include <algorithm>

#include "queueing/admission_run.h"

namespace gpusched {

// Kueue's quotaResourcesToReserve for a workload in Preempt mode: up to
// its queue's borrowing limit if it borrows, else up to its nominal quota.
// Preempt mode: short of some quota it could get by preemption (within
// its nominal quota, or by borrowWithinCohort); nothing when some demand
// is beyond that, or when the quota holds it (then placement failed).
FrAmounts AdmissionRun::QuotaToHold(const Workload& w,
                                    const ClusterQueue& cq) const {
  const FrAmounts demand = flavors_.FirstFlavorDemand(w);
  const std::string& name = cq.name;
  const bool borrow_within =
      cq.preemption.borrow_within_cohort != BorrowWithinCohort::kNever;
  bool short_somewhere = false;
  for (const auto& [fr, amount] : demand) {
    if (amount <= quota_.Available(name, fr)) continue;
    if (amount > quota_.MaxAvailable(name, fr) ||
        (amount > quota_.Nominal(name, fr) && !borrow_within)) {
      return {};
    }
    short_somewhere = true;
  }
  if (!short_somewhere) return {};
  const bool borrows = quota_.WouldBorrow(name, demand);
  FrAmounts hold;
  for (const auto& [fr, amount] : demand) {
    const int64_t used = quota_.Usage(name, fr);
    const int64_t nominal = quota_.Nominal(name, fr);
    int64_t held = std::max<int64_t>(0, std::min(amount, nominal - used));
    if (borrows) {
      const std::optional<int64_t> limit = quota_.BorrowingLimit(name, fr);
      held = limit ? std::min(amount, nominal + *limit - used) : amount;
    }
    if (held > 0) hold[fr] = held;
  }
  return hold;
}

// After a StrictFIFO head's attempt: it holds quota while it waits for
// victims it does not have.
void AdmissionRun::NoteHeadOutcome(Workload& head,
                                   const AdmissionOutcome& outcome) {
  const ClusterQueue* cq = flavors_.ClusterQueueNamed(head.cluster_queue);
  if (cq == nullptr) return;
  ReleaseHeldBy(head);
  if (outcome.verdict != AdmissionOutcome::Verdict::kWaiting ||
      cq->preemption.reclaim_within_cohort == ReclaimWithinCohort::kAny ||
      flavors_.RootOf(cq->name) == nullptr) {
    return;
  }
  FrAmounts hold = QuotaToHold(head, *cq);
  if (hold.empty()) return;
  quota_.AddUsage(cq->name, hold);
  held_by_head_[cq->name] = {head.key, std::move(hold)};
}

// Before a pass: what the heads of the last pass hold, if they are still
// pending heads.
void AdmissionRun::HoldHeadQuota() {
  for (auto it = held_by_head_.begin(); it != held_by_head_.end();) {
    auto w = workloads_.find(it->second.head);
    if (w == workloads_.end() || w->second.state != Workload::State::kPending ||
        w->second.cluster_queue != it->first) {
      it = held_by_head_.erase(it);
      continue;
    }
    quota_.AddUsage(it->first, it->second.amounts);
    ++it;
  }
}

void AdmissionRun::ReleaseHeadQuota() {
  for (const auto& [queue, held] : held_by_head_) {
    quota_.RemoveUsage(queue, held.amounts);
  }
}

// The queue's head is tried again: what the queue holds (for this head or
// an earlier one) is given back first.
void AdmissionRun::ReleaseHeldBy(const Workload& head) {
  auto it = held_by_head_.find(head.cluster_queue);
  if (it == held_by_head_.end()) return;
  quota_.RemoveUsage(it->first, it->second.amounts);
  held_by_head_.erase(it);
}

}  // namespace gpusched
