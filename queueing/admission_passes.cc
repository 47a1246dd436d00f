// The admission pass: which workload admission tries next. BestEffortFIFO
// queues go by equivalence class (PendingClasses): a pass looks at the
// head of each class, and a failed head parks its class until something
// its failure depends on changes; StrictFIFO queues offer their head only;
// with fair sharing a tournament picks, re-run after every admission.
#include <algorithm>
#include <deque>
#include <queue>

#include "absl/strings/str_cat.h"
#include "queueing/admission_run.h"
#include "queueing/fair_sharing.h"

namespace gpusched {
namespace {

constexpr size_t kMaxSignatures = 1 << 16;

// A class in the pass: its next member to try.
struct ClassCursor {
  int signature = 0;
  int borrow_height = 0;
  Workload* next = nullptr;
  // Where its last failure can change: its cohort tree, and, when that
  // failure searched nodes, any capacity freed anywhere.
  std::string tree;
  bool needs_capacity = false;
};

// Pops in Candidates' order: borrowing from the lowest subtree first (no
// borrowing at all before everything), then queue order.
struct CursorAfter {
  bool operator()(const ClassCursor& a, const ClassCursor& b) const {
    if (a.borrow_height != b.borrow_height) {
      return a.borrow_height > b.borrow_height;
    }
    const Workload& x = *a.next;
    const Workload& y = *b.next;
    if (x.priority != y.priority) return x.priority < y.priority;
    if (x.created_ms != y.created_ms) return x.created_ms > y.created_ms;
    return x.key > y.key;
  }
};

using CursorHeap =
    std::priority_queue<ClassCursor, std::vector<ClassCursor>, CursorAfter>;
using ReadyFn = std::function<bool(const Workload&)>;
using PushFn = std::function<void(ClassCursor)>;

// Admission Fair Sharing inside the heap: of a usage-based ClusterQueue's
// classes (one LocalQueue each) only one is on the heap at a time, the one
// whose next workload goes first by its LocalQueue's usage, as Kueue's
// ClusterQueue offers that one as its head; the rest wait in the pool.
// Usage moves with every admission, so the pool is looked at again after
// each attempt. Other ClusterQueues' classes go on the heap directly.
class AfsTurns {
 public:
  AfsTurns(const AdmissionFairSharing& afs, const PendingClasses& classes)
      : afs_(afs), classes_(classes) {}

  void Push(ClassCursor cursor, CursorHeap& heap) {
    const std::string& cq = classes_.queue_of(cursor.signature);
    if (!afs_.Orders(cq)) {
      heap.push(std::move(cursor));
    } else {
      pools_[cq].push_back(std::move(cursor));
    }
  }
  // The heap gave up `cursor`: its ClusterQueue's turn is over.
  void Popped(const ClassCursor& cursor) {
    on_heap_.erase(classes_.queue_of(cursor.signature));
  }
  // Each usage-based ClusterQueue without a class on the heap puts its
  // first there.
  void Refill(CursorHeap& heap) {
    for (auto& [cq, pool] : pools_) {
      if (pool.empty() || on_heap_.contains(cq)) continue;
      auto first =
          std::min_element(pool.begin(), pool.end(),
                           [&](const ClassCursor& a, const ClassCursor& b) {
                             return afs_.Before(a.next, b.next);
                           });
      heap.push(std::move(*first));
      pool.erase(first);
      on_heap_.insert(cq);
    }
  }

 private:
  const AdmissionFairSharing& afs_;
  const PendingClasses& classes_;
  std::map<std::string, std::vector<ClassCursor>> pools_;
  std::set<std::string> on_heap_;
};

// Parked classes whose failure the changes may have turned (their tree
// moved, or capacity was freed and they searched nodes) go back on the
// heap from their head.
void Unpark(const PendingClasses& classes, const ReadyFn& ready,
            const std::set<std::string>& trees, bool capacity_freed,
            std::vector<ClassCursor>& parked, const PushFn& push) {
  std::vector<ClassCursor> still_parked;
  for (ClassCursor& c : parked) {
    if (!trees.contains(c.tree) && !(capacity_freed && c.needs_capacity)) {
      still_parked.push_back(std::move(c));
    } else if ((c.next = classes.ReadyFrom(c.signature, nullptr, ready)) !=
               nullptr) {
      push(std::move(c));
    }
  }
  parked = std::move(still_parked);
}

// The class goes on from its next member, `next` (the one before was just
// tried): at once after an admission, after a failure only once the state
// changes (Unpark).
void Advance(ClassCursor cursor, Workload* next, bool admitted,
             std::vector<ClassCursor>& parked, const PushFn& push) {
  cursor.next = next;
  if (next == nullptr) return;
  if (admitted) {
    push(std::move(cursor));
  } else {
    parked.push_back(std::move(cursor));
  }
}

}  // namespace

// What the events since `first_event` changed: the cohort trees whose
// quota or admitted set moved, and whether capacity was freed (anything
// but an admission, a workload outside queues, or a reservation lifted).
AdmissionRun::PassChanges AdmissionRun::ChangesSince(
    size_t first_event, uint64_t reserved_before) const {
  PassChanges changes;
  changes.capacity_freed = timers_.reservation_changes() != reserved_before;
  for (size_t i = first_event; i < events_.size(); ++i) {
    const EngineEvent& e = events_[i];
    auto w = workloads_.find(e.workload);
    // A reservation for admission checks only takes quota, as an
    // admission does.
    const bool takes = e.type == EngineEvent::Type::kAdmitted ||
                       e.type == EngineEvent::Type::kQuotaReserved;
    if (!takes || w == workloads_.end() || !IsQueued(w->second)) {
      changes.capacity_freed = true;
    }
    if (w != workloads_.end() && IsQueued(w->second)) {
      changes.trees.insert(flavors_.TreeOf(w->second.cluster_queue));
    }
  }
  return changes;
}

// BestEffortFIFO queues without fair sharing: the heads of the classes in
// Candidates' order. A head that fails parks its class until something
// its failure depends on changes: its cohort tree's quota or admitted
// workloads (the preemption candidates), or, if it searched nodes, free
// capacity anywhere. An admission in another tree only takes capacity, so
// it cannot turn a failure into a fit.
PassResult AdmissionRun::AdmitBestEffortClasses(int64_t now) {
  const ReadyFn ready = [&](const Workload& w) { return Ready(w, now); };
  CursorHeap heap;
  AfsTurns turns(afs_, classes_);
  const PushFn push = [&](ClassCursor c) { turns.Push(std::move(c), heap); };
  for (const ClassHead& head : BestEffortHeadsOf(ready)) {
    push({head.signature, head.borrow_height, head.workload});
  }
  turns.Refill(heap);
  PassResult pass;
  std::vector<ClassCursor> parked;
  // Preemption could in principle bounce between two workloads; every
  // legitimate pass ends well inside this many attempts.
  size_t budget = 4 * workloads_.size() + 1000;
  while (!heap.empty() && budget-- > 0) {
    ClassCursor cursor = heap.top();
    heap.pop();
    turns.Popped(cursor);
    Workload& w = *cursor.next;
    const PendingClasses::OrderKey at{-w.priority, w.created_ms, w.key};
    const HeadAttempt attempt = TryClassHead(w, now);
    if (attempt.admitted) ++pass.admitted;
    if (attempt.changes) {
      // Classes whose failure the events may have changed try again.
      Unpark(classes_, ready, attempt.changes->trees,
             attempt.changes->capacity_freed, parked, push);
    }
    if (!attempt.admitted) {
      cursor.tree = flavors_.TreeOf(w.cluster_queue);
      cursor.needs_capacity = attempt.searched_nodes;
      classes_.RecordFailure(cursor.signature, w, {w.code, w.reason});
    }
    Workload* next = classes_.ReadyFrom(cursor.signature, &at, ready);
    Advance(std::move(cursor), next, attempt.admitted, parked, push);
    turns.Refill(heap);
  }
  return pass;
}

// TryAdmit, and what it changed that a parked class's failure may depend
// on.
AdmissionRun::HeadAttempt AdmissionRun::TryClassHead(Workload& w, int64_t now) {
  classes_.StampAttempt(w);
  const size_t events_before = events_.size();
  const uint64_t reserved_before = timers_.reservation_changes();
  const int64_t searches_before = placement_.searches();
  HeadAttempt attempt;
  attempt.admitted = TryAdmit(w, now).admitted();
  attempt.searched_nodes = placement_.searches() != searches_before;
  if (events_.size() != events_before) {
    attempt.changes = ChangesSince(events_before, reserved_before);
  }
  return attempt;
}

// The ready head of every class of a BestEffortFIFO queue.
std::vector<AdmissionRun::ClassHead> AdmissionRun::BestEffortHeadsOf(
    const std::function<bool(const Workload&)>& ready) {
  std::set<std::string> best_effort;
  for (const ClusterQueue& cq : policy_.cluster_queues) {
    if (cq.queueing_strategy != QueueingStrategy::kStrictFifo) {
      best_effort.insert(cq.name);
    }
  }
  std::vector<ClassHead> heads;
  for (int signature : classes_.Signatures()) {
    const std::string& queue = classes_.queue_of(signature);
    if (!best_effort.contains(queue)) continue;
    if (Workload* head = classes_.ReadyFrom(signature, nullptr, ready)) {
      heads.push_back({signature,
                       flavors_.BorrowHeightOfChoice(
                           quota_, queue, classes_.demand_of(signature)),
                       head});
    }
  }
  return heads;
}

// QueueOrder, with a usage-based ClusterQueue's LocalQueues by usage first.
std::function<bool(const Workload*, const Workload*)> AdmissionRun::AfsOrder()
    const {
  if (!afs_.enabled()) return QueueOrder;
  return [this](const Workload* a, const Workload* b) {
    return afs_.Before(a, b);
  };
}

bool AdmissionRun::Ready(const Workload& w, int64_t now) const {
  if (w.state != Workload::State::kPending || w.pods.empty()) return false;
  if (w.backoff_until_ms > now || w.podgroup_missing) return false;
  if (w.check_reservation) return false;  // AdmitCheckedReady's
  if (!w.topology_invalid.empty()) return false;
  if (store_.GroupApiFailure(w) != nullptr) return false;
  // Quota must charge every claim before a queued workload is admitted.
  if (IsQueued(w) && w.MemberHeldByClaims() != nullptr) return false;
  return !w.ShortOfPods();
}

// Every queue's pending workloads in queue order, in one walk.
std::map<std::string, std::vector<Workload*>> AdmissionRun::PendingByQueue() {
  std::map<std::string, std::vector<Workload*>> by_queue;
  for (auto& [key, w] : live_) {
    // A workload holding quota for its checks is no longer queued in it.
    if (IsQueued(*w) && w->state == Workload::State::kPending &&
        !w->pods.empty() && !w->check_reservation) {
      by_queue[w->cluster_queue].push_back(w);
    }
  }
  for (auto& [cq, pending] : by_queue) {
    std::sort(pending.begin(), pending.end(), AfsOrder());
  }
  return by_queue;
}

// Per ClusterQueue, its ready workloads in queue order; StrictFIFO offers
// its head only, and only when the head is ready.
std::map<std::string, std::vector<Workload*>> AdmissionRun::ReadyByQueue(
    int64_t now) {
  std::map<std::string, std::vector<Workload*>> ready;
  std::map<std::string, std::vector<Workload*>> pending = PendingByQueue();
  for (const ClusterQueue& cq : policy_.cluster_queues) {
    const Workload* head = nullptr;
    for (Workload* w : pending[cq.name]) {
      if (head != nullptr) {
        w->Explain({ReasonCode::kWaitingForQuota,
                    absl::StrCat("StrictFIFO: waiting behind the head of "
                                 "queue ",
                                 cq.name, ", ", head->key)});
        continue;
      }
      if (Ready(*w, now)) ready[cq.name].push_back(w);
      if (cq.queueing_strategy == QueueingStrategy::kStrictFifo) head = w;
    }
  }
  return ready;
}

// Without fair sharing, across queues: workloads that fit without
// borrowing first, then those borrowing from the lowest subtree (Kueue's
// hierarchical cohorts), then priority, then creation.
std::vector<Workload*> AdmissionRun::Candidates(int64_t now) {
  // Borrowing depends only on the queue and the demand: once per signature.
  std::map<int, int> height_by_signature;
  std::vector<std::pair<int, Workload*>> keyed;
  for (auto& [cq, workloads] : ReadyByQueue(now)) {
    for (Workload* w : workloads) {
      const int id = classes_.SignatureId(*w, flavors_);
      auto [it, inserted] = height_by_signature.try_emplace(id, 0);
      if (inserted) {
        it->second =
            flavors_.BorrowHeightOfChoice(quota_, cq, classes_.demand_of(id));
      }
      keyed.emplace_back(it->second, w);
    }
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return a.first < b.first;
    return QueueOrder(a.second, b.second);
  });
  std::vector<Workload*> out;
  out.reserve(keyed.size());
  for (const auto& [height, w] : keyed) out.push_back(w);
  return out;
}

// One admission pass over the queued workloads.
PassResult AdmissionRun::AdmitQueued(int64_t now) {
  // A long-running server sees ever new shapes (group names in Volcano
  // annotations): start over between passes rather than grow unbounded.
  if (classes_.signature_count() >= kMaxSignatures) {
    store_.ForgetSignatures();
    placement_.ForgetFailures();
    flavors_.Rebuild(policy_, quota_);
    store_.RebuildIndexes(flavors_);
  }
  HoldCheckReservations();
  PassResult pass = AdmitCheckedReady(now);
  if (policy_.config.fair_sharing) {
    pass += AdmitFairSharing(now);
  } else {
    HoldHeadQuota();
    pass += AdmitBestEffortClasses(now);
    pass += AdmitStrictFifo(now);
    ReleaseHeadQuota();
  }
  ReleaseCheckReservations();
  return pass;
}

// StrictFIFO queues, each offering its head (Candidates' order).
PassResult AdmissionRun::AdmitStrictFifo(int64_t now) {
  const bool any_strict = std::any_of(
      policy_.cluster_queues.begin(), policy_.cluster_queues.end(),
      [](const ClusterQueue& cq) {
        return cq.queueing_strategy == QueueingStrategy::kStrictFifo;
      });
  if (!any_strict) return {};
  PassResult pass;
  for (Workload* w : Candidates(now)) {
    const ClusterQueue* cq = flavors_.ClusterQueueNamed(w->cluster_queue);
    if (cq == nullptr ||
        cq->queueing_strategy != QueueingStrategy::kStrictFifo) {
      continue;
    }
    classes_.StampAttempt(*w);
    ReleaseHeldBy(*w);
    const AdmissionOutcome outcome = TryAdmit(*w, now);
    NoteHeadOutcome(*w, outcome);
    if (outcome.admitted()) ++pass.admitted;
  }
  return pass;
}

// Fair sharing: a tournament re-run after every admission (shares move).
PassResult AdmissionRun::AdmitFairSharing(int64_t now) {
  PassResult pass;
  std::map<std::string, std::deque<Contender>> queues;
  for (auto& [cq, workloads] : ReadyByQueue(now)) {
    for (Workload* w : workloads) {
      queues[cq].push_back(
          Contender{w, classes_.demand_of(classes_.SignatureId(*w, flavors_))});
    }
  }
  FairSharingTournament tournament(quota_, std::move(queues), AfsOrder());
  while (Workload* w = tournament.Next()) {
    classes_.StampAttempt(*w);
    if (!TryAdmit(*w, now).admitted()) continue;
    ++pass.admitted;
    // Its LocalQueue's usage grew by the entry penalty.
    if (afs_.Orders(w->cluster_queue)) tournament.Reorder(w->cluster_queue);
  }
  return pass;
}

}  // namespace gpusched
