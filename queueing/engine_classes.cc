// Equivalence classes of pending workloads (Kueue's scheduling equivalence
// hashing, KEP-9694): workloads with equal admission signatures get equal
// verdicts against the same cluster state, so a pass needs to look only at
// the head of each class, and a failed head speaks for its class until
// something is admitted or evicted. This keeps a pass proportional to the
// number of shapes waiting, not to the depth of the queues.
#include <queue>

#include "queueing/engine_internal.h"

namespace gpusched {

void QueueingEngine::ResetSignatures() {
  signature_ids_.clear();
  signature_demand_.clear();
  signature_queue_.clear();
  signature_placement_.clear();
  placement_failures_.clear();
  signature_failure_.clear();
  pending_by_signature_.clear();
  for (auto& [key, w] : workloads_) {
    w.signature_id = -1;
    w.indexed_signature = -1;
  }
}

void QueueingEngine::Reindex(Workload& w) {
  if (w.indexed_signature >= 0) {
    auto cls = pending_by_signature_.find(w.indexed_signature);
    if (cls != pending_by_signature_.end()) {
      cls->second.erase({-w.indexed_priority, w.indexed_created_ms, w.key});
      if (cls->second.empty()) pending_by_signature_.erase(cls);
    }
    w.indexed_signature = -1;
  }
  if (w.state != Workload::State::kPending || !IsQueued(w) || w.pods.empty()) {
    return;
  }
  w.signature_id = -1;  // whatever changed may change the signature
  const int signature = SignatureId(w);
  w.indexed_signature = signature;
  w.indexed_priority = w.priority;
  w.indexed_created_ms = w.created_ms;
  pending_by_signature_[signature][{-w.priority, w.created_ms, w.key}] = &w;
}

// A newer failure of an equal workload speaks for this one.
const WaitReason* QueueingEngine::SharedFailure(const Workload& w) const {
  if (w.state == Workload::State::kPending && w.indexed_signature >= 0) {
    auto failure = signature_failure_.find(w.indexed_signature);
    if (failure != signature_failure_.end() &&
        failure->second.first > w.attempt_stamp) {
      return &failure->second.second;
    }
  }
  return nullptr;
}

std::string QueueingEngine::ReasonOf(const Workload& w) const {
  const WaitReason* shared = SharedFailure(w);
  return shared != nullptr ? shared->text : w.reason;
}

ReasonCode QueueingEngine::PendingCode(const Workload& w) const {
  if (w.state != Workload::State::kPending) return ReasonCode::kNone;
  const WaitReason* shared = SharedFailure(w);
  return shared != nullptr ? shared->code : w.code;
}

namespace {

// A class in the pass: its next member to try.
struct ClassCursor {
  int signature = 0;
  bool borrows = false;
  Workload* next = nullptr;
  // Where its last failure can change: its cohort tree, and, when that
  // failure searched nodes, any capacity freed anywhere.
  std::string tree;
  bool needs_capacity = false;
};

// Pops in Candidates' order: no borrowing first, then queue order.
struct CursorAfter {
  bool operator()(const ClassCursor& a, const ClassCursor& b) const {
    if (a.borrows != b.borrows) return a.borrows;
    const Workload& x = *a.next;
    const Workload& y = *b.next;
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.created_ms != y.created_ms) return x.created_ms > y.created_ms;
    return x.key > y.key;
  }
};

}  // namespace

// What the events since `first_event` changed: the cohort trees whose
// quota or admitted set moved, and whether capacity was freed (anything
// but an admission, a workload outside queues, or a reservation lifted).
QueueingEngine::PassChanges QueueingEngine::ChangesSince(
    size_t first_event, uint64_t reserved_before) const {
  PassChanges changes;
  changes.capacity_freed = reservation_changes_ != reserved_before;
  for (size_t i = first_event; i < events_.size(); ++i) {
    const EngineEvent& e = events_[i];
    auto w = workloads_.find(e.workload);
    if (e.type != EngineEvent::Type::kAdmitted || w == workloads_.end() ||
        !IsQueued(w->second)) {
      changes.capacity_freed = true;
    }
    if (w != workloads_.end() && IsQueued(w->second)) {
      changes.trees.insert(TreeOf(w->second.cluster_queue));
    }
  }
  return changes;
}

// BestEffortFIFO queues without fair sharing: the heads of the classes in
// Candidates' order. A head that fails parks its class until something
// its failure depends on changes: its cohort tree's quota or admitted
// workloads (the preemption candidates), or, if it searched nodes, free
// capacity anywhere. An admission in another tree only takes capacity, so
// it cannot turn a failure into a fit. StrictFIFO queues are left to the
// caller.
bool QueueingEngine::AdmitBestEffortClasses(int64_t now) {
  std::map<std::string, const ClusterQueue*> best_effort;
  for (const ClusterQueue& cq : policy_.cluster_queues) {
    if (cq.queueing_strategy != QueueingStrategy::kStrictFifo) {
      best_effort[cq.name] = &cq;
    }
  }
  // The first ready member at or after `from` in its class, or nullptr.
  auto ready_from = [&](int signature, const OrderKey* after) -> Workload* {
    auto cls = pending_by_signature_.find(signature);
    if (cls == pending_by_signature_.end()) return nullptr;
    auto it = after == nullptr ? cls->second.begin()
                               : cls->second.upper_bound(*after);
    for (; it != cls->second.end(); ++it) {
      if (Ready(*it->second, now)) return it->second;
    }
    return nullptr;
  };
  std::priority_queue<ClassCursor, std::vector<ClassCursor>, CursorAfter> heap;
  for (const auto& [signature, members] : pending_by_signature_) {
    if (!best_effort.contains(signature_queue_[signature])) continue;
    if (Workload* head = ready_from(signature, nullptr)) {
      heap.push({signature,
                 quota_.WouldBorrow(signature_queue_[signature],
                                    signature_demand_[signature]),
                 head});
    }
  }
  bool progress = false;
  std::vector<ClassCursor> parked;
  // Preemption could in principle bounce between two workloads; every
  // legitimate pass ends well inside this many attempts.
  size_t budget = 4 * workloads_.size() + 1000;
  while (!heap.empty() && budget-- > 0) {
    ClassCursor cursor = heap.top();
    heap.pop();
    Workload& w = *cursor.next;
    const OrderKey at{-w.priority, w.created_ms, w.key};
    w.attempt_stamp = ++attempt_counter_;
    const size_t events_before = events_.size();
    const uint64_t reserved_before = reservation_changes_;
    const int64_t searches_before = placement_searches_;
    const bool admitted = TryAdmit(w, now);
    progress |= admitted;
    if (events_.size() != events_before) {
      const PassChanges changes = ChangesSince(events_before, reserved_before);
      std::vector<ClassCursor> still_parked;
      for (ClassCursor& c : parked) {
        if (!changes.trees.contains(c.tree) &&
            !(changes.capacity_freed && c.needs_capacity)) {
          still_parked.push_back(std::move(c));
        } else if ((c.next = ready_from(c.signature, nullptr)) != nullptr) {
          heap.push(std::move(c));
        }
      }
      parked = std::move(still_parked);
    }
    if (!admitted) {
      cursor.tree = TreeOf(w.cluster_queue);
      cursor.needs_capacity = placement_searches_ != searches_before;
      signature_failure_[cursor.signature] = {attempt_counter_,
                                              {w.code, w.reason}};
      w.attempt_stamp = attempt_counter_;
      // Try the class again only after the state changes; from the next
      // member on (this one just failed).
      if ((cursor.next = ready_from(cursor.signature, &at)) != nullptr) {
        parked.push_back(cursor);
      }
      continue;
    }
    if ((cursor.next = ready_from(cursor.signature, &at)) != nullptr) {
      heap.push(cursor);
    }
  }
  return progress;
}

}  // namespace gpusched
