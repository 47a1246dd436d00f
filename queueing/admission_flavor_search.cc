// Kueue's flavorFungibility (flavor_fungibility.h) as the admission cycle
// carries it out, over the flavors of the workload's fungible resource
// group:
//  1. Each flavor in order is tried as gpusched admits: its quota and a
//     placement of every member on its nodes. One that takes the gang gets
//     kFit (borrowing or not), and the search stops or goes on by
//     whenCanBorrow; a flavor whose nodes cannot take the gang is not
//     chosen for its quota alone (placement-aware, unlike Kueue).
//  2. One that is short of quota or room is judged by planning preemption
//     on it alone: reclaim (victims only in other queues), preempt (some in
//     its own), no candidates, or never (policy, selectors). Under
//     whenCanPreempt TryNextFlavor the plan waits until it can matter: a
//     fitting flavor found later wins under BorrowingOverPreemption.
//  3. The best flavor is admitted, or its plan's victims are evicted; the
//     workload waits when no flavor is viable.
#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "queueing/admission_run.h"

namespace gpusched {
namespace {

// A flavor that can never hold the workload is not worth a plan.
bool PreemptionMayHelp(const WaitReason& why) {
  return why.code != ReasonCode::kExceedsMaxQuota &&
         why.code != ReasonCode::kNoMatchingFlavor;
}

}  // namespace

// The flavors judged so far, with the plan of each judged by preemption.
struct AdmissionRun::FlavorWalk {
  FlavorWalk(const FlavorFungibility& fungibility, size_t flavors)
      : search(fungibility), plans(flavors) {}

  // Why the workload waits if nothing is chosen: as Fit over every flavor
  // said it, the last placement failure, else the first quota refusal.
  void NoteRefusal(const FitResult& fit) {
    if (fit.quota_fits) {
      placement_why = fit.why;
    } else if (quota_why.empty()) {
      quota_why = fit.why;
    }
  }
  WaitReason Why() const {
    return placement_why.empty() ? quota_why : placement_why;
  }

  FlavorSearch search;
  std::vector<std::optional<PreemptionPlan>> plans;  // by flavor index
  std::vector<size_t> deferred;  // short of quota or room, not judged yet
  WaitReason quota_why;
  WaitReason placement_why;
  std::string blocked;  // the first budget a plan waited for
};

AdmissionOutcome AdmissionRun::TryAdmit(Workload& w, int64_t now) {
  const ClusterQueue* cq = flavors_.ClusterQueueNamed(w.cluster_queue);
  if (cq != nullptr) {
    if (std::optional<AdmissionOutcome> reserved =
            ReserveForChecks(w, *cq, now)) {
      return *std::move(reserved);
    }
  }
  const ResourceList total = TotalRequests(w.MembersToAdmit());
  // Other groups take the first flavor that fits, as Fit always did (one
  // multi-flavor group is the usual GPU ClusterQueue).
  const ResourceGroup* group =
      cq == nullptr ? nullptr : FungibleGroup(*cq, [&](const std::string& r) {
        return total.Get(r) > 0;
      });
  if (group != nullptr) return SearchFlavors(w, *cq, *group, now);
  FitResult fit = Fit(w);
  if (fit.trial) return AdmitFit(w, *std::move(fit.trial), now);
  w.Explain(std::move(fit.why));
  return TryPreempt(w, now);
}

AdmissionOutcome AdmissionRun::AdmitFit(Workload& w, PlacementTrial trial,
                                        int64_t now) {
  if (std::optional<WaitReason> blocked = BlockedUntilPodsReady()) {
    w.Explain(*blocked);
    return AdmissionOutcome::Waiting(*std::move(blocked));
  }
  Commit(w, std::move(trial), now);
  return AdmissionOutcome::Admitted();
}

// Kueue blocks only a workload that fits: one that must preempt still
// plans and evicts, and a running gang still takes its extra members.
// A workload holding quota while its admission checks run blocks too: its
// pods are not ready, and Kueue's cache counts every workload with a quota
// reservation (v0.19.2 pkg/cache/scheduler/cache.go
// addOrUpdateWorkloadWithoutLock, clusterqueue.go WorkloadsNotReady).
std::optional<WaitReason> AdmissionRun::BlockedUntilPodsReady() const {
  if (!policy_.config.gang_block_admission) return std::nullopt;
  if (!reserving_.empty()) {
    return WaitReason{
        ReasonCode::kWaitingForPodsReady,
        absl::StrCat("waiting for all admitted workloads to be in PodsReady "
                     "condition (waitForPodsReady.blockAdmission): ",
                     *reserving_.begin(),
                     " holds quota, waiting for its admission checks")};
  }
  for (const auto& [key, admitted] : admitted_) {
    if (!IsQueued(*admitted) || admitted->PodsReady()) continue;
    return WaitReason{
        ReasonCode::kWaitingForPodsReady,
        absl::StrCat("waiting for all admitted workloads to be in PodsReady "
                     "condition (waitForPodsReady.blockAdmission): ",
                     key, " has ", admitted->ReadyMembers(), " of ",
                     admitted->placements.size(), " members bound",
                     admitted->readiness_reported ? " and Ready" : "")};
  }
  return std::nullopt;
}

AdmissionOutcome AdmissionRun::SearchFlavors(Workload& w,
                                             const ClusterQueue& cq,
                                             const ResourceGroup& group,
                                             int64_t now) {
  const FlavorFungibility& fungibility = cq.flavor_fungibility;
  FlavorWalk walk(fungibility, group.flavors.size());
  for (size_t i = 0; i < group.flavors.size(); ++i) {
    FitResult fit = Fit(w, &group.flavors[i].flavor);
    if (fit.trial) {
      const FlavorVerdict verdict{
          FlavorMode::kFit, quota_.BorrowHeight(cq.name, fit.trial->charged())};
      if (!walk.search.Offer(i, verdict)) continue;
      return AdmitFit(w, *std::move(fit.trial), now);
    }
    walk.NoteRefusal(fit);
    if (!PreemptionMayHelp(fit.why)) {
      walk.search.Offer(i, {});
    } else if (fungibility.when_can_preempt ==
               FungibilityPolicy::kTryNextFlavor) {
      walk.deferred.push_back(i);
    } else if (JudgePreemption(w, cq, group, i, now, walk)) {
      break;
    }
  }
  if (walk.search.PreemptionCouldWin()) {
    for (size_t i : walk.deferred) JudgePreemption(w, cq, group, i, now, walk);
  }
  return AdmitChosen(w, group, now, walk);
}

bool AdmissionRun::JudgePreemption(Workload& w, const ClusterQueue& cq,
                                   const ResourceGroup& group, size_t index,
                                   int64_t now, FlavorWalk& walk) {
  const std::string& flavor = group.flavors[index].flavor;
  PreemptionPlan plan = PlanPreemption(w, now, &flavor);
  const FlavorVerdict verdict = PreemptionVerdict(w, cq, flavor, plan);
  if (plan.verdict == PreemptionPlan::Verdict::kBlockedByBudget &&
      walk.blocked.empty()) {
    walk.blocked = plan.reason;
  }
  walk.plans[index] = std::move(plan);
  return walk.search.Offer(index, verdict);
}

// Kueue's preemption oracle: reclaim when every victim is in another
// queue, preempt when one is in its own; the borrowing height is the one
// left once the victims' quota is given back.
FlavorVerdict AdmissionRun::PreemptionVerdict(const Workload& w,
                                              const ClusterQueue& cq,
                                              const std::string& flavor,
                                              const PreemptionPlan& plan) {
  if (plan.verdict == PreemptionPlan::Verdict::kNotAllowed) return {};
  if (plan.verdict != PreemptionPlan::Verdict::kEvict) {
    return {FlavorMode::kNoCandidates, 0};
  }
  bool own = false;
  for (const PreemptionPlan::Victim& v : plan.victims) {
    own |= v.workload->cluster_queue == w.cluster_queue;
    quota_.RemoveUsage(v.workload->cluster_queue, v.workload->charged);
  }
  const int height =
      quota_.BorrowHeight(cq.name, flavors_.DemandWith(w, flavor));
  for (const PreemptionPlan::Victim& v : plan.victims) {
    quota_.AddUsage(v.workload->cluster_queue, v.workload->charged);
  }
  return {own ? FlavorMode::kPreempt : FlavorMode::kReclaim, height};
}

AdmissionOutcome AdmissionRun::AdmitChosen(Workload& w,
                                           const ResourceGroup& group,
                                           int64_t now, FlavorWalk& walk) {
  const std::optional<size_t> best = walk.search.best();
  const FlavorMode mode = walk.search.best_verdict().mode;
  if (best && mode == FlavorMode::kFit) {
    // Tried before on this same state: it places again.
    FitResult fit = Fit(w, &group.flavors[*best].flavor);
    if (fit.trial) return AdmitFit(w, *std::move(fit.trial), now);
  }
  if (best && (mode == FlavorMode::kPreempt || mode == FlavorMode::kReclaim)) {
    return EvictThenAdmit(w, *walk.plans[*best], now,
                          &group.flavors[*best].flavor);
  }
  w.Explain(walk.Why());
  if (walk.blocked.empty()) {
    return AdmissionOutcome::Waiting({w.code, w.reason});
  }
  // Not a tight loop: the refused victims are left out until their
  // back-off ends (NextWakeup wakes it then).
  w.Explain({ReasonCode::kPreempting, std::move(walk.blocked)});
  return {AdmissionOutcome::Verdict::kPreempting, w.code, w.reason, {}};
}

}  // namespace gpusched
