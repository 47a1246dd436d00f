#include "queueing/preemption_planner.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "queueing/gang_trial.h"

namespace gpusched {
namespace {

const char* ClassicalReason(VictimVariant variant) {
  switch (variant) {
    case VictimVariant::kWithinQueue:
      return "InClusterQueue";
    case VictimVariant::kReclaimWhileBorrowing:
      return "InCohortReclaimWhileBorrowing";
    default:
      return "InCohortReclamation";
  }
}

// The preemptor's quota charged for a while (fair sharing judges shares
// with it), and taken back whenever its fit is tried.
class ChargedPreemptor {
 public:
  ChargedPreemptor(QuotaTree* quota, std::string queue, FrAmounts demand)
      : quota_(quota), queue_(std::move(queue)), demand_(std::move(demand)) {
    quota_->AddUsage(queue_, demand_);
  }
  ~ChargedPreemptor() { quota_->RemoveUsage(queue_, demand_); }
  ChargedPreemptor(const ChargedPreemptor&) = delete;
  ChargedPreemptor& operator=(const ChargedPreemptor&) = delete;
  template <typename Fn>
  bool Uncharged(Fn&& fn) {
    quota_->RemoveUsage(queue_, demand_);
    const bool result = fn();
    quota_->AddUsage(queue_, demand_);
    return result;
  }

 private:
  QuotaTree* quota_;
  std::string queue_;
  FrAmounts demand_;
};

}  // namespace

namespace {

// No member's node selector contradicts the flavor's node labels.
bool SelectorsAllow(const Workload& w, const ResourceFlavor* flavor) {
  if (flavor == nullptr) return true;
  for (const Pod* pod : w.MembersToAdmit()) {
    for (const auto& [key, value] : pod->node_selector) {
      auto it = flavor->node_labels.find(key);
      if (it != flavor->node_labels.end() && it->second != value) return false;
    }
  }
  return true;
}

// `target`'s workloads in order until the strategy allows one, which is
// returned (null when none is); those it refuses wait for the second
// strategy in `retry`.
Workload* FirstAllowed(FairPreemptionStrategy strategy,
                       FairTargetOrdering& ordering, const std::string& target,
                       const FairTargetOrdering::Shares& shares,
                       std::vector<Workload*>& retry) {
  while (ordering.HasWorkload(target)) {
    Workload* v = ordering.Pop(target);
    if (FairStrategyPasses(strategy, shares.preemptor, shares.target,
                           ordering.TargetShareWithout(target, *v))) {
      return v;
    }
    retry.push_back(v);
  }
  return nullptr;
}

bool AsksUse(const std::vector<PreemptionAsk>& asks,
             const std::string& flavor) {
  for (const PreemptionAsk& ask : asks) {
    for (const auto& [fr, amount] : ask.demand) {
      if (fr.flavor == flavor) return true;
    }
  }
  return false;
}

}  // namespace

// One call of Plan or Candidates: the inputs it was lent, the refusals
// the planner keeps, and the steps of the search.
class PreemptionPlanner::Run {
 public:
  Run(const PlanInputs& in, const std::map<std::string, Refusal>& refused)
      : policy_(&in.policy),
        quota_(&in.quota),
        flavors_(&in.flavors),
        model_(&in.model),
        admitted_(&in.admitted),
        only_flavor_(in.only_flavor),
        afs_(in.afs),
        refused_(refused) {}

  PreemptionPlan Plan(Workload& w, int64_t now, const Trials& trials);
  CandidateSet Candidates(const Workload& w, const ClusterQueue& cq,
                          int64_t now);

 private:
  // What a search found: how many candidates, and the victims with the
  // reason of each (nullopt: it does not fit even without them).
  struct Search {
    size_t candidates = 0;
    std::optional<std::vector<PreemptionPlan::Victim>> victims;
  };
  // Victims taken off so far, with why.
  struct Taken {
    VictimTrial trial;
    std::vector<std::string> reasons;
  };
  PreemptionAsk AskFor(const Workload& w, const ClusterQueue& cq, int64_t now,
                       std::string* blocked) const;
  // A flavor preemption may judge the workload on, and what the workload
  // is short of there.
  struct FlavorOption {
    const FlavorQuotas* flavor = nullptr;
    std::vector<FlavorResource> short_of;
  };
  std::vector<FlavorOption> OptionsInGroup(
      const Workload& w, const ClusterQueue& cq, const ResourceGroup& group,
      const std::map<std::string, int64_t>& asked) const;
  void AddFlavors(
      const std::map<std::string, int64_t>& asked,
      const std::vector<std::pair<const ResourceGroup*, FlavorOption>>& picks,
      PreemptionAsk& ask) const;
  // One ask per flavor choice preemption weighs (see AsksFor).
  std::vector<PreemptionAsk> AsksFor(const Workload& w, const ClusterQueue& cq,
                                     int64_t now, std::string* blocked) const;
  Search BestSearch(Workload& w, const std::vector<PreemptionAsk>& asks,
                    const Trials& trials);
  bool PreemptionPossible(const PreemptionAsk& ask) const;
  Search ClassicalSearch(Workload& w, const PreemptionAsk& ask,
                         const Trials& trials);
  Search FairSearch(Workload& w, const PreemptionAsk& ask,
                    const Trials& trials);
  std::vector<Workload*> FairCandidates(const PreemptionAsk& ask) const;
  // Kueue's two strategies in turn (runFirstFsStrategy,
  // runSecondFsStrategy); true once the workload fits.
  bool FirstFairStrategy(const PreemptionAsk& ask,
                         const std::vector<Workload*>& candidates,
                         const std::function<bool()>& fits, Taken& taken,
                         std::vector<Workload*>& retry);
  bool SecondFairStrategy(const PreemptionAsk& ask,
                          const std::vector<Workload*>& retry,
                          const std::function<bool()>& fits, Taken& taken);
  // Whether the workload could fit with every candidate gone.
  bool CouldFitWithAll(Workload& w, const std::vector<Workload*>& all,
                       const Trials& trials);
  // Gives back, last taken but one first, every victim it fits without;
  // the rest are the victims. Leaves the model and quota as they were.
  std::vector<PreemptionPlan::Victim> FillBack(
      const Workload& w, Taken& taken, const std::function<bool()>& fits);

  const Policy* policy_;
  QuotaTree* quota_;
  QuotaFlavors* flavors_;
  ClusterModel* model_;
  const AdmittedByQueue* admitted_;
  const std::string* only_flavor_;
  const AdmissionFairSharing* afs_;
  const std::map<std::string, Refusal>& refused_;
};

// The flavors of one resource group preemption may judge the workload on,
// in order: those the members may run on whose quota is short but within
// reach; failing that, the first they may run on. With what each is short
// of.
std::vector<PreemptionPlanner::Run::FlavorOption>
PreemptionPlanner::Run::OptionsInGroup(
    const Workload& w, const ClusterQueue& cq, const ResourceGroup& group,
    const std::map<std::string, int64_t>& asked) const {
  std::vector<FlavorOption> options;
  std::optional<FlavorOption> first;
  const bool pinned = only_flavor_ != nullptr &&
                      std::any_of(group.flavors.begin(), group.flavors.end(),
                                  [&](const FlavorQuotas& f) {
                                    return f.flavor == *only_flavor_;
                                  });
  for (const FlavorQuotas& flavor : group.flavors) {
    if (pinned && flavor.flavor != *only_flavor_) continue;
    if (!SelectorsAllow(w, FindFlavor(*policy_, flavor.flavor))) continue;
    FlavorOption option{&flavor, {}};
    bool reachable = true;
    for (const std::string& r : group.covered_resources) {
      auto it = asked.find(r);
      if (it == asked.end()) continue;
      FlavorResource fr{flavor.flavor, r};
      if (it->second > quota_->Available(cq.name, fr)) {
        option.short_of.push_back(fr);
      }
      reachable &= it->second <= quota_->MaxAvailable(cq.name, fr);
    }
    if (!first) first = option;
    if (reachable && !option.short_of.empty()) options.push_back(option);
  }
  if (options.empty() && first) options.push_back(*first);
  return options;
}

// Adds one flavor per resource group to `ask`: its demand there and what
// it is short of (what preemption must free); all it asks for when it is
// short of nothing (then the placement needs room).
void PreemptionPlanner::Run::AddFlavors(
    const std::map<std::string, int64_t>& asked,
    const std::vector<std::pair<const ResourceGroup*, FlavorOption>>& picks,
    PreemptionAsk& ask) const {
  std::vector<FlavorResource> all;
  for (const auto& [group, option] : picks) {
    for (const std::string& r : group->covered_resources) {
      auto it = asked.find(r);
      if (it == asked.end()) continue;
      ask.demand[{option.flavor->flavor, r}] = it->second;
      all.push_back({option.flavor->flavor, r});
    }
    ask.short_of.insert(ask.short_of.end(), option.short_of.begin(),
                        option.short_of.end());
  }
  if (ask.short_of.empty()) ask.short_of = std::move(all);
}

// Kueue's flavor assignment weighs preemption on every flavor that could
// take the workload: one ask per option of the first resource group that
// has several, the other groups on their first.
std::vector<PreemptionAsk> PreemptionPlanner::Run::AsksFor(
    const Workload& w, const ClusterQueue& cq, int64_t now,
    std::string* blocked) const {
  std::map<std::string, int64_t> asked;  // resource -> amount
  for (const auto& [fr, amount] : flavors_->FirstFlavorDemand(w)) {
    if (amount > 0) asked[fr.resource] = amount;
  }
  std::vector<std::pair<const ResourceGroup*, std::vector<FlavorOption>>>
      groups;
  for (const ResourceGroup& group : cq.resource_groups) {
    auto options = OptionsInGroup(w, cq, group, asked);
    if (!options.empty()) groups.emplace_back(&group, std::move(options));
  }
  size_t varied = 0;
  while (varied < groups.size() && groups[varied].second.size() < 2) ++varied;
  const size_t count =
      varied < groups.size() ? groups[varied].second.size() : 1;
  std::vector<PreemptionAsk> asks;
  for (size_t i = 0; i < count; ++i) {
    std::vector<std::pair<const ResourceGroup*, FlavorOption>> picks;
    for (size_t g = 0; g < groups.size(); ++g) {
      picks.emplace_back(groups[g].first,
                         groups[g].second[g == varied ? i : 0]);
    }
    asks.push_back(AskFor(w, cq, now, blocked));
    AddFlavors(asked, picks, asks.back());
  }
  return asks;
}

PreemptionAsk PreemptionPlanner::Run::AskFor(const Workload& w,
                                             const ClusterQueue& cq,
                                             int64_t now,
                                             std::string* blocked) const {
  PreemptionAsk ask{.quota = quota_,
                    .cq = &cq,
                    .preemptor = &w,
                    .admitted = admitted_,
                    .afs = afs_};
  const int64_t minimum = policy_->config.preemption_minimum_runtime_ms;
  ask.eligible = [this, &w, now, minimum, blocked](const Workload& v) {
    if (&v == &w || v.cluster_queue.empty() || now - v.RunStartMs() < minimum) {
      return false;
    }
    // A budget refused its eviction: not again before the back-off ends.
    auto it = refused_.find(v.key);
    if (it == refused_.end() || it->second.until <= now) return true;
    if (blocked->empty()) {
      *blocked = WaitingForBudget(v.key, it->second.message);
    }
    return false;
  };
  return ask;
}

CandidateSet PreemptionPlanner::Run::Candidates(const Workload& w,
                                                const ClusterQueue& cq,
                                                int64_t now) {
  CandidateSet set;
  for (const PreemptionAsk& ask : AsksFor(w, cq, now, &set.blocked)) {
    for (const VictimCandidate& c : CollectClassical(ask).ordered) {
      set.workloads.push_back(c.workload);
    }
  }
  return set;
}

// Quota and free capacity only grow as victims leave, so if it does not
// fit without all of them, no subset will: one search for all.
bool PreemptionPlanner::Run::CouldFitWithAll(Workload& w,
                                             const std::vector<Workload*>& all,
                                             const Trials& trials) {
  if (!trials.could_fit(w, all)) return false;
  VictimTrial trial(model_, quota_);
  for (Workload* v : all) trial.TakeOff(*v);
  return trials.fits(w);
}

std::vector<PreemptionPlan::Victim> PreemptionPlanner::Run::FillBack(
    const Workload& w, Taken& taken, const std::function<bool()>& fits) {
  VictimTrial& trial = taken.trial;
  for (size_t i = trial.size() - 1; i-- > 0;) {
    trial.PutBack(i);
    if (fits()) continue;  // not needed
    trial.TakeOffAgain(i);
  }
  std::vector<PreemptionPlan::Victim> victims;
  for (size_t i = 0; i < trial.size(); ++i) {
    if (!trial.is_off(i)) continue;
    victims.push_back({&trial.workload(i),
                       absl::StrCat(taken.reasons[i], ": preempted by ", w.key,
                                    " (priority ", w.priority, ")")});
  }
  // Put the victims back in the order taken, to be evicted properly.
  trial.PutBackAll(/*last_first=*/false);
  return victims;
}

// Kueue's classicalPreemptions: one pass over the candidates per attempt,
// taking off those that still count until the workload fits (borrowing
// only in attempts that allow it).
PreemptionPlanner::Run::Search PreemptionPlanner::Run::ClassicalSearch(
    Workload& w, const PreemptionAsk& ask, const Trials& trials) {
  const ClassicalCandidates found = CollectClassical(ask);
  Search search{.candidates = found.ordered.size()};
  std::vector<Workload*> all;
  for (const VictimCandidate& c : found.ordered) all.push_back(c.workload);
  if (all.empty() || !CouldFitWithAll(w, all, trials)) return search;
  for (const bool borrow : ClassicalAttempts(ask, found)) {
    auto fits = [&] {
      return trials.fits(w) &&
             (borrow || !quota_->WouldBorrow(ask.cq->name, ask.demand));
    };
    Taken taken{VictimTrial(model_, quota_), {}};
    for (const VictimCandidate& c : found.ordered) {
      if (!StillCounts(ask, c, borrow)) continue;
      taken.trial.TakeOff(*c.workload);
      taken.reasons.push_back(ClassicalReason(c.variant));
      if (fits()) {
        search.victims = FillBack(w, taken, fits);
        return search;
      }
    }
  }
  return search;
}

// Kueue's findCandidates: the own queue's by withinClusterQueue, and, by
// reclaimWithinCohort, those of every queue of the tree that borrows what
// the workload is short of.
std::vector<Workload*> PreemptionPlanner::Run::FairCandidates(
    const PreemptionAsk& ask) const {
  std::vector<Workload*> out;
  const PreemptionPolicy& p = ask.cq->preemption;
  auto add_from = [&](const std::string& queue, auto allows) {
    auto it = admitted_->find(queue);
    if (it == admitted_->end()) return;
    for (const auto& [key, v] : it->second) {
      if (ask.eligible(*v) && UsesAny(*v, ask.short_of) && allows(*v)) {
        out.push_back(v);
      }
    }
  };
  add_from(ask.cq->name, [&](const Workload& v) {
    return PolicyAllows(p.within_cluster_queue, *ask.preemptor, v);
  });
  const std::string* root = flavors_->RootOf(ask.cq->name);
  if (root == nullptr ||
      p.reclaim_within_cohort == ReclaimWithinCohort::kNever) {
    return out;
  }
  for (const std::string* queue : flavors_->BorrowingQueuesOf(*quota_, *root)) {
    if (*queue == ask.cq->name || quota_->WithinNominal(*queue, ask.short_of)) {
      continue;
    }
    add_from(*queue, [&](const Workload& v) {
      return PolicyAllows(p.reclaim_within_cohort, *ask.preemptor, v);
    });
  }
  std::stable_sort(out.begin(), out.end(), [&](Workload* a, Workload* b) {
    return CandidateBefore(*a, *b, ask.cq->name, ask.afs);
  });
  return out;
}

bool PreemptionPlanner::Run::FirstFairStrategy(
    const PreemptionAsk& ask, const std::vector<Workload*>& candidates,
    const std::function<bool()>& fits, Taken& taken,
    std::vector<Workload*>& retry) {
  const std::string& own = ask.cq->name;
  const FairPreemptionStrategy strategy =
      policy_->config.preemption_strategies.front();
  FairTargetOrdering ordering(quota_, own, candidates);
  // With the workload the queue still borrows nothing it is short of: it
  // reclaims its nominal quota whatever the shares (Kueue's
  // FairSharingPreemptWithinNominal, on by default).
  const bool within_nominal = quota_->WithinNominal(own, ask.short_of);
  auto take = [&](Workload* v, const char* reason) {
    taken.trial.TakeOff(*v);
    taken.reasons.push_back(reason);
    return fits();
  };
  while (std::optional<std::string> target = ordering.Next()) {
    if (*target == own || within_nominal) {
      Workload* v = ordering.Pop(*target);
      if (take(v, *target == own ? "InClusterQueue" : "InCohortReclamation")) {
        return true;
      }
      continue;
    }
    const FairTargetOrdering::Shares shares = ordering.SharesFor(*target);
    if (std::isinf(shares.preemptor.Weighted()) &&
        !std::isinf(shares.target.Weighted())) {
      for (Workload* v : ordering.PopAll(*target)) retry.push_back(v);
      continue;
    }
    Workload* v = FirstAllowed(strategy, ordering, *target, shares, retry);
    if (v != nullptr && take(v, "InCohortFairSharing")) return true;
  }
  return false;
}

bool PreemptionPlanner::Run::SecondFairStrategy(
    const PreemptionAsk& ask, const std::vector<Workload*>& retry,
    const std::function<bool()>& fits, Taken& taken) {
  FairTargetOrdering ordering(quota_, ask.cq->name, retry);
  while (std::optional<std::string> target = ordering.Next()) {
    const FairTargetOrdering::Shares shares = ordering.SharesFor(*target);
    Workload* v = ordering.Pop(*target);
    if (FairStrategyPasses(FairPreemptionStrategy::kLessThanInitialShare,
                           shares.preemptor, shares.target, shares.target)) {
      taken.trial.TakeOff(*v);
      taken.reasons.push_back("InCohortFairSharing");
      if (fits()) return true;
    }
    ordering.Drop(*target);
  }
  return false;
}

// Kueue's fairPreemptions: shares are judged with the workload's quota
// charged to its queue; its fit without.
PreemptionPlanner::Run::Search PreemptionPlanner::Run::FairSearch(
    Workload& w, const PreemptionAsk& ask, const Trials& trials) {
  const std::vector<Workload*> candidates = FairCandidates(ask);
  Search search{.candidates = candidates.size()};
  if (candidates.empty() || !CouldFitWithAll(w, candidates, trials)) {
    return search;
  }
  Taken taken{VictimTrial(model_, quota_), {}};
  bool fits = false;
  {
    ChargedPreemptor charged(quota_, ask.cq->name, ask.demand);
    const std::function<bool()> fits_uncharged = [&] {
      return charged.Uncharged([&] { return trials.fits(w); });
    };
    std::vector<Workload*> retry;
    fits = FirstFairStrategy(ask, candidates, fits_uncharged, taken, retry) ||
           (policy_->config.preemption_strategies.size() > 1 &&
            SecondFairStrategy(ask, retry, fits_uncharged, taken));
  }
  if (fits) {
    search.victims = FillBack(w, taken, [&] { return trials.fits(w); });
  }
  return search;
}

// Kueue's flavor assigner tries preemption for a quota shortfall only
// where the demand fits the queue's nominal quota or a subtree below the
// root, or where the queue may preempt while borrowing (borrowWithinCohort,
// or reclaimWithinCohort under fair sharing).
bool PreemptionPlanner::Run::PreemptionPossible(
    const PreemptionAsk& ask) const {
  const PreemptionPolicy& p = ask.cq->preemption;
  if (p.borrow_within_cohort != BorrowWithinCohort::kNever ||
      (policy_->config.fair_sharing &&
       p.reclaim_within_cohort != ReclaimWithinCohort::kNever)) {
    return true;
  }
  const std::string& name = ask.cq->name;
  for (const FlavorResource& fr : ask.short_of) {
    auto it = ask.demand.find(fr);
    if (it == ask.demand.end()) continue;
    const int64_t amount = it->second;
    if (amount <= quota_->Available(name, fr) ||
        amount <= quota_->Nominal(name, fr) ||
        quota_->FitsBelowRoot(name, fr, amount)) {
      continue;
    }
    return false;
  }
  return true;
}

// One search per flavor option; reclaiming from other queues only is
// preferred over preempting in the own queue (Kueue's Reclaim mode over
// Preempt), else the first option that works.
PreemptionPlanner::Run::Search PreemptionPlanner::Run::BestSearch(
    Workload& w, const std::vector<PreemptionAsk>& asks, const Trials& trials) {
  Search best;
  size_t candidates = 0;
  for (const PreemptionAsk& ask : asks) {
    if (!PreemptionPossible(ask)) continue;
    Search search = policy_->config.fair_sharing
                        ? FairSearch(w, ask, trials)
                        : ClassicalSearch(w, ask, trials);
    candidates += search.candidates;
    if (!search.victims) continue;
    const bool reclaims_only =
        std::none_of(search.victims->begin(), search.victims->end(),
                     [&](const PreemptionPlan::Victim& v) {
                       return v.workload->cluster_queue == w.cluster_queue;
                     });
    if (!best.victims || reclaims_only) best = std::move(search);
    if (reclaims_only) break;
  }
  best.candidates = candidates;
  return best;
}

PreemptionPlan PreemptionPlanner::Run::Plan(Workload& w, int64_t now,
                                            const Trials& trials) {
  PreemptionPlan plan;
  const ClusterQueue* cq = flavors_->ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) return plan;
  const PreemptionPolicy& p = cq->preemption;
  if (p.within_cluster_queue == WithinClusterQueue::kNever &&
      p.reclaim_within_cohort == ReclaimWithinCohort::kNever) {
    return plan;
  }
  std::string blocked;
  const std::vector<PreemptionAsk> asks = AsksFor(w, *cq, now, &blocked);
  // The pinned flavor is not one the members may run on: nothing to plan.
  if (only_flavor_ != nullptr && !AsksUse(asks, *only_flavor_)) return plan;
  Search search = BestSearch(w, asks, trials);
  // Without the refused ones it found nothing: it waits for the budget.
  auto blocked_or = [&](PreemptionPlan::Verdict verdict) {
    plan.verdict =
        blocked.empty() ? verdict : PreemptionPlan::Verdict::kBlockedByBudget;
    plan.reason = std::move(blocked);
    return plan;
  };
  if (search.candidates == 0) {
    return blocked_or(PreemptionPlan::Verdict::kNoCandidates);
  }
  if (!search.victims) return blocked_or(PreemptionPlan::Verdict::kCannotFit);
  plan.verdict = PreemptionPlan::Verdict::kEvict;
  plan.victims = *std::move(search.victims);
  std::sort(plan.victims.begin(), plan.victims.end(),
            [](const auto& a, const auto& b) {
              return a.workload->key < b.workload->key;
            });
  return plan;
}

PreemptionPlan PreemptionPlanner::Plan(Workload& w, int64_t now,
                                       const Trials& trials,
                                       const PlanInputs& in) const {
  return Run(in, refused_).Plan(w, now, trials);
}

CandidateSet PreemptionPlanner::Candidates(const Workload& w,
                                           const ClusterQueue& cq, int64_t now,
                                           const PlanInputs& in) const {
  return Run(in, refused_).Candidates(w, cq, now);
}

}  // namespace gpusched
