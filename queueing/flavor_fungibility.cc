#include "queueing/flavor_fungibility.h"

namespace gpusched {
namespace {

bool PreemptionFirst(const FlavorFungibility& fungibility) {
  return fungibility.preference == FlavorPreference::kPreemptionOverBorrowing;
}

bool Viable(FlavorMode mode) {
  return mode != FlavorMode::kNoFit && mode != FlavorMode::kNoCandidates;
}

}  // namespace

bool IsPreferred(const FlavorVerdict& a, const FlavorVerdict& b,
                 const FlavorFungibility& fungibility) {
  if (a.mode == FlavorMode::kNoFit) return false;
  if (b.mode == FlavorMode::kNoFit) return true;
  const bool a_empty = a.mode == FlavorMode::kNoCandidates;
  const bool b_empty = b.mode == FlavorMode::kNoCandidates;
  if (a_empty != b_empty) return b_empty;
  if (PreemptionFirst(fungibility)) {
    if (a.borrow_height != b.borrow_height) {
      return a.borrow_height < b.borrow_height;
    }
    return a.mode > b.mode;
  }
  if (a.mode != b.mode) return a.mode > b.mode;
  return a.borrow_height < b.borrow_height;
}

bool ShouldTryNextFlavor(const FlavorVerdict& verdict,
                         const FlavorFungibility& fungibility) {
  if (!Viable(verdict.mode)) return true;
  if (verdict.mode != FlavorMode::kFit &&
      fungibility.when_can_preempt == FungibilityPolicy::kTryNextFlavor) {
    return true;
  }
  return verdict.borrow_height > 0 &&
         fungibility.when_can_borrow == FungibilityPolicy::kTryNextFlavor;
}

bool FlavorSearch::Offer(size_t index, const FlavorVerdict& verdict) {
  const bool stop = !ShouldTryNextFlavor(verdict, fungibility_);
  if (stop || IsPreferred(verdict, best_verdict_, fungibility_)) {
    best_ = index;
    best_verdict_ = verdict;
  }
  return stop;
}

bool FlavorSearch::PreemptionCouldWin() const {
  if (best_verdict_.mode != FlavorMode::kFit) return true;
  return PreemptionFirst(fungibility_) && best_verdict_.borrow_height > 0;
}

}  // namespace gpusched
