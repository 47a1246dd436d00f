// Kueue's flavorFungibility, the rule that picks one flavor of a resource
// group (pkg/scheduler/flavorassigner/flavorassigner.go, v0.19.2:
// findFlavorForPodSets, shouldTryNextFlavor, isPreferred):
//  1. Flavors are judged in the queue's order. Each gets a mode (it fits,
//     it fits by reclaiming from other queues, by preempting in its own
//     queue, preemption found no candidates, it can never fit) and how far
//     up the cohort tree its quota comes from (0: the queue's own nominal).
//  2. A flavor that fits within nominal quota ends the search. One that
//     fits by borrowing ends it under whenCanBorrow MayStopSearch; one that
//     needs preemption (with candidates) ends it under whenCanPreempt
//     MayStopSearch. Otherwise the search goes on and keeps the best.
//  3. "Best" is `preference`: BorrowingOverPreemption (also when unset)
//     ranks the mode first, then the borrowing height; PreemptionOverBorrowing
//     the height first, then the mode. A flavor without preemption
//     candidates ranks below every viable one (v0.19.2; v0.17.0 let the
//     preference rank it, so under PreemptionOverBorrowing it could win over
//     a flavor that fits by borrowing and admit nothing).
#ifndef GPUSCHED_QUEUEING_FLAVOR_FUNGIBILITY_H_
#define GPUSCHED_QUEUEING_FLAVOR_FUNGIBILITY_H_

#include <cstddef>
#include <optional>

#include "queueing/policy.h"

namespace gpusched {

// Kueue's granular modes, worst first.
enum class FlavorMode { kNoFit, kNoCandidates, kPreempt, kReclaim, kFit };

struct FlavorVerdict {
  FlavorMode mode = FlavorMode::kNoFit;
  // QuotaTree::BorrowHeight of the demand (after the victims are gone for
  // a preemption mode): 0 within the queue's nominal quota.
  int borrow_height = 0;
};

// Whether `a` is better than `b` under the queue's preference.
bool IsPreferred(const FlavorVerdict& a, const FlavorVerdict& b,
                 const FlavorFungibility& fungibility);

// Whether the search goes on past a flavor judged `verdict`.
bool ShouldTryNextFlavor(const FlavorVerdict& verdict,
                         const FlavorFungibility& fungibility);

// The search over one resource group's flavors, fed in the queue's order.
class FlavorSearch {
 public:
  explicit FlavorSearch(const FlavorFungibility& fungibility)
      : fungibility_(fungibility) {}

  // Records the flavor at `index`; true when the search stops at it (it is
  // then the best).
  bool Offer(size_t index, const FlavorVerdict& verdict);
  // The best flavor offered, unless every one was kNoFit.
  std::optional<size_t> best() const { return best_; }
  const FlavorVerdict& best_verdict() const { return best_verdict_; }
  // Whether a flavor still to be judged as needing preemption could beat
  // the best: not when the best fits and the preference ranks modes first.
  bool PreemptionCouldWin() const;

 private:
  const FlavorFungibility& fungibility_;
  std::optional<size_t> best_;
  FlavorVerdict best_verdict_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_FLAVOR_FUNGIBILITY_H_
