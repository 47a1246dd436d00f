// Admission checks as the admission cycle carries them out
// (admission_checks.h says what they are):
//  1. TryAdmit of a workload whose ClusterQueue has checks reserves its
//     quota on the flavors it fits (ReserveForChecks): no placement yet,
//     since capacity a ProvisioningRequest asks for does not exist yet.
//  2. Every admission pass charges the reservations first
//     (HoldCheckReservations), so no other workload takes that quota, and
//     gives them back at its end: at rest the quota tree holds only what
//     admitted workloads use. While charged, a reservation is a preemption
//     candidate like an admitted workload (Kueue's candidates are every
//     workload with quota reserved), and a reservation that does not fit
//     may preempt for quota alone (PreemptForReservation): the capacity it
//     waits for is not there yet, so there is no placement to judge.
//  3. A reservation whose checks are all Ready is placed on its reserved
//     flavors and admitted (AdmitCheckedReady); while its nodes cannot
//     hold it yet, it keeps the reservation and waits.
//  4. A check's new state (ApplyCheckState): Retry gives the quota back
//     (and the placement, if admitted) and requeues after the config's
//     backoff; Retry past backoffLimitCount, or Rejected, deactivates.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/admission_run.h"
#include "queueing/pending_classes.h"

namespace gpusched {
namespace {

// The flavor a reservation takes in one group: the first whose quota
// fits, or under whenCanBorrow TryNextFlavor the first that fits without
// borrowing, if one does (Kueue's flavor assigner on quota alone).
const FlavorOption& ReservedFlavor(const std::vector<FlavorOption>& options,
                                   const ClusterQueue& cq,
                                   const QuotaTree& quota) {
  if (cq.flavor_fungibility.when_can_borrow ==
      FungibilityPolicy::kTryNextFlavor) {
    for (const FlavorOption& option : options) {
      if (quota.BorrowHeight(cq.name, option.demand) == 0) return option;
    }
  }
  return options.front();
}

// Every resource a member to admit requests (containers and init
// containers alike, as Kueue's podUses reads them).
std::vector<std::string> RequestedResources(const Workload& w) {
  const ResourceList total = TotalRequests(w.MembersToAdmit());
  std::vector<std::string> names;
  for (const auto& [name, amount] : total.entries()) {
    if (amount > 0) names.push_back(name);
  }
  return names;
}

std::string WaitingForChecks(const Workload& w) {
  const CheckReservation& r = *w.check_reservation;
  std::vector<std::string> waiting;
  for (const WorkloadCheck& c : w.checks) {
    if (c.state != CheckState::kReady) waiting.push_back(c.name);
  }
  return absl::StrCat(
      "quota reserved in ClusterQueue ", r.cluster_queue, " (flavor ",
      absl::StrJoin(r.flavors, ","),
      "); waiting for admission checks: ", absl::StrJoin(waiting, ", "));
}

// Kueue's resetChecksOnEviction: every check back to Pending; a check in
// Retry counts one more retry, one in any other state starts again.
void ResetChecksOnEviction(std::vector<WorkloadCheck>& checks) {
  for (WorkloadCheck& c : checks) {
    if (c.state == CheckState::kPending) continue;
    c.retry_count = c.state == CheckState::kRetry ? c.retry_count + 1 : 0;
    c.state = CheckState::kPending;
    c.message.clear();
    c.update = {};
  }
}

// The checks `cq` runs now for the reserved flavors (a new policy may have
// added or removed some, as Kueue's reconcileSyncAdmissionChecks follows
// the ClusterQueue): a check kept keeps its state, a new one is Pending.
void SyncChecks(Workload& w, const ClusterQueue& cq) {
  std::vector<WorkloadCheck> synced;
  for (const std::string& name :
       ChecksForFlavors(cq, w.check_reservation->flavors)) {
    auto it = std::find_if(w.checks.begin(), w.checks.end(),
                           [&](const auto& c) { return c.name == name; });
    synced.push_back(it != w.checks.end() ? *it : WorkloadCheck{.name = name});
  }
  w.checks = std::move(synced);
}

// A reservation's quota charged for this pass: counted in the tree and,
// as `charged`, by preemption (trials take it off and put it back).
void HoldReservation(QuotaTree& quota, Workload& w) {
  quota.AddUsage(w.check_reservation->cluster_queue,
                 w.check_reservation->amounts);
  w.charged = w.check_reservation->amounts;
}
void UnholdReservation(QuotaTree& quota, Workload& w) {
  quota.RemoveUsage(w.check_reservation->cluster_queue,
                    w.check_reservation->amounts);
  w.charged.clear();
}

}  // namespace

std::optional<AdmissionOutcome> AdmissionRun::ReserveForChecks(
    Workload& w, const ClusterQueue& cq, int64_t now) {
  if (cq.admission_checks.empty()) return std::nullopt;
  FlavorChoices choices =
      flavors_.Choose(policy_, quota_, w, w.MembersToAdmit());
  if (!choices.fits) {
    w.Explain(std::move(choices.why));
    // Only where a check runs whatever the flavor: otherwise whether one
    // runs, and so how to preempt, depends on the flavor it would get.
    const bool checked_anywhere = std::any_of(
        cq.admission_checks.begin(), cq.admission_checks.end(),
        [](const AdmissionCheckRule& c) { return c.on_flavors.empty(); });
    if (checked_anywhere) {
      if (std::optional<AdmissionOutcome> preempting =
              PreemptForReservation(w, cq, now)) {
        return preempting;
      }
    }
    return AdmissionOutcome::Waiting({w.code, w.reason});
  }
  CheckReservation reservation{.cluster_queue = cq.name, .since_ms = now};
  for (const std::vector<FlavorOption>& options : choices.groups) {
    const FlavorOption& option = ReservedFlavor(options, cq, quota_);
    reservation.flavors.push_back(option.flavor->flavor);
    for (const auto& [fr, amount] : option.demand) {
      reservation.amounts[fr] += amount;
    }
  }
  const std::vector<std::string> names =
      ChecksForFlavors(cq, reservation.flavors);
  if (names.empty()) return std::nullopt;  // no check runs on its flavors
  // Kueue's scheduler waits for PodsReady before it reserves quota, checks
  // or not (v0.19.2 pkg/scheduler/scheduler.go waitForPodsReadyIfNeeded).
  if (std::optional<WaitReason> blocked = BlockedUntilPodsReady()) {
    w.Explain(*blocked);
    return AdmissionOutcome::Waiting(*std::move(blocked));
  }
  PushAfsPenalty(w, reservation.amounts);
  w.checks = StartChecks(w.checks, names);
  const std::vector<std::string> requested = RequestedResources(w);
  for (WorkloadCheck& c : w.checks) {
    if (CheckNeedsRequest(policy_, c.name, requested)) continue;
    c.state = CheckState::kReady;
    c.message = kNoRequestNeeded;
  }
  w.check_reservation = std::move(reservation);
  HoldReservation(quota_, w);  // for the rest of this pass
  reserving_.insert(w.key);
  w.Explain({ReasonCode::kUnsatisfiedChecks, WaitingForChecks(w)});
  Emit(now, EngineEvent::Type::kQuotaReserved, w, "", w.reason);
  return AdmissionOutcome::Admitted();
}

void AdmissionRun::HoldCheckReservations() {
  for (auto it = reserving_.begin(); it != reserving_.end();) {
    auto found = workloads_.find(*it);
    Workload* w = found == workloads_.end() ? nullptr : &found->second;
    const bool holds =
        w != nullptr && w->state == Workload::State::kPending &&
        w->check_reservation &&
        w->check_reservation->cluster_queue == w->cluster_queue &&
        flavors_.ClusterQueueNamed(w->cluster_queue) != nullptr;
    if (!holds) {
      // Its queue changed or vanished (a new policy): it queues again,
      // and a new reservation pushes a new penalty.
      if (w != nullptr) w->check_reservation.reset();
      afs_.DropPenalty(*it);
      it = reserving_.erase(it);
      continue;
    }
    SyncChecks(*w, *flavors_.ClusterQueueNamed(w->cluster_queue));
    HoldReservation(quota_, *w);
    ++it;
  }
}

void AdmissionRun::ReleaseCheckReservations() {
  for (const std::string& key : reserving_) {
    UnholdReservation(quota_, workloads_.at(key));
  }
}

// Kueue's scheduler preempts for a workload whose queue has checks as for
// any other, on quota: victims by the same rules and order, and the quota
// is reserved once they are evicted (their quota comes back at once).
std::optional<AdmissionOutcome> AdmissionRun::PreemptForReservation(
    Workload& w, const ClusterQueue& cq, int64_t now) {
  const PreemptionPlanner::Trials quota_only{
      .could_fit = [](const Workload&,
                      const std::vector<Workload*>&) { return true; },
      .fits =
          [this](Workload& x) {
            return flavors_.Choose(policy_, quota_, x, x.MembersToAdmit()).fits;
          }};
  const PreemptionPlan plan = PlanPreemptionWith(w, now, quota_only);
  if (plan.verdict == PreemptionPlan::Verdict::kBlockedByBudget) {
    w.Explain({ReasonCode::kPreempting, plan.reason});
    return AdmissionOutcome{
        AdmissionOutcome::Verdict::kPreempting, w.code, w.reason, {}};
  }
  if (plan.verdict != PreemptionPlan::Verdict::kEvict || plan.victims.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> victims;
  for (const PreemptionPlan::Victim& victim : plan.victims) {
    Evict(*victim.workload, now, EngineEvent::Type::kPreempted, w.key,
          victim.reason);
    planner_.NoteVictim(victim.workload->key, w.key);
    victims.push_back(victim.workload->key);
  }
  std::optional<AdmissionOutcome> reserved = ReserveForChecks(w, cq, now);
  if (!reserved || !reserved->admitted()) {
    return AdmissionOutcome{AdmissionOutcome::Verdict::kPreempting, w.code,
                            w.reason, std::move(victims)};
  }
  reserved->victims = std::move(victims);
  return reserved;
}

// A reservation preempted: its quota comes back, its checks start again
// at its next reservation (Kueue's resetChecksOnEviction), and its
// requests are deleted with it (the controller no longer sees it).
void AdmissionRun::GiveBackReservation(Workload& w) {
  UnholdReservation(quota_, w);
  ResetChecksOnEviction(w.checks);
  DropCheckedAdmission(w);
  afs_.DropPenalty(w.key);
}

// Reservations whose checks are all Ready, in queue order: each is placed
// on its reserved flavors with its own reservation given back first.
PassResult AdmissionRun::AdmitCheckedReady(int64_t now) {
  std::vector<Workload*> ready;
  for (const std::string& key : reserving_) {
    Workload& w = workloads_.at(key);
    if (AllChecksReady(w.checks) && !w.pods.empty() && !w.ShortOfPods()) {
      ready.push_back(&w);
    }
  }
  std::sort(ready.begin(), ready.end(), QueueOrder);
  PassResult pass;
  for (Workload* w : ready) {
    const CheckReservation r = *w->check_reservation;
    UnholdReservation(quota_, *w);
    FitResult fit = Fit(*w, r.flavors.size() == 1 ? &r.flavors[0] : nullptr);
    if (fit.trial) {
      reserving_.erase(w->key);
      w->check_reservation.reset();
      Commit(*w, *std::move(fit.trial), now);
      ++pass.admitted;
      continue;
    }
    HoldReservation(quota_, *w);
    w->Explain(
        {fit.why.code, absl::StrCat("admission checks Ready, quota reserved; ",
                                    fit.why.text)});
  }
  return pass;
}

// The workload gives back what it holds: its reservation, or, admitted,
// its quota and placement (Kueue evicts it).
void AdmissionRun::DropCheckedAdmission(Workload& w) {
  if (w.admitted()) {
    Release(w);
    timers_.Forget(w.key);
    w.admitted_at_ms = -1;
    SetState(w, Workload::State::kPending);
  }
  w.check_reservation.reset();
  reserving_.erase(w.key);
}

void AdmissionRun::RequeueForRetry(Workload& w, int64_t now) {
  // Kueue's GetMaxRetryTime: the longest backoff of the checks in Retry.
  int64_t backoff = 0;
  for (const WorkloadCheck& c : w.checks) {
    if (c.state != CheckState::kRetry) continue;
    backoff =
        std::max(backoff, CheckRetryBackoffMs(RetryStrategyOf(policy_, c.name),
                                              c.retry_count + 1));
  }
  const std::string what = ChecksInStateMessage(w.checks, CheckState::kRetry);
  ResetChecksOnEviction(w.checks);
  DropCheckedAdmission(w);
  w.backoff_until_ms = now + backoff;
  w.pending_since_ms = w.backoff_until_ms;
  w.Explain({ReasonCode::kAdmissionCheck,
             absl::StrCat("Evicted due to ", what, "; requeued in ",
                          backoff / 1000, "s")});
  Emit(now, EngineEvent::Type::kEvicted, w, "", w.reason);
}

void AdmissionRun::DeactivateRejected(Workload& w, int64_t now) {
  const std::string what =
      ChecksInStateMessage(w.checks, CheckState::kRejected);
  ResetChecksOnEviction(w.checks);
  DropCheckedAdmission(w);
  // Inactive without a reservation: Kueue drops the pending penalty (a
  // Retry keeps it: the workload stays active in its LocalQueue).
  afs_.DropPenalty(w.key);
  w.deactivated = true;
  // Held as a backoff without end: nothing admits or wakes it.
  w.backoff_until_ms = std::numeric_limits<int64_t>::max();
  w.Explain({ReasonCode::kAdmissionCheck,
             absl::StrCat("Deactivated due to ", what,
                          "; a new pod of the workload activates it again")});
  Emit(now, EngineEvent::Type::kEvicted, w, "", w.reason);
}

CheckUpdate AdmissionRun::ApplyCheckState(const std::string& key,
                                          const std::string& check,
                                          CheckState state, std::string message,
                                          int64_t now, PodSetUpdate update) {
  auto found = workloads_.find(key);
  if (found == workloads_.end()) return CheckUpdate::kUnknownWorkload;
  Workload& w = found->second;
  auto c = std::find_if(w.checks.begin(), w.checks.end(),
                        [&](const auto& each) { return each.name == check; });
  // Only a workload that holds quota runs its checks (Kueue's controller
  // acts only on those with a quota reservation).
  if (c == w.checks.end() || (!w.check_reservation && !w.admitted())) {
    return CheckUpdate::kNotRunning;
  }
  if (state == CheckState::kRetry &&
      !RetryAllowed(RetryStrategyOf(policy_, check), c->retry_count)) {
    state = CheckState::kRejected;  // Kueue: attempt > backoffLimitCount
  }
  c->state = state;
  c->message = std::move(message);
  c->update = state == CheckState::kReady ? std::move(update) : PodSetUpdate{};
  if (state == CheckState::kRejected) {
    DeactivateRejected(w, now);
  } else if (state == CheckState::kRetry) {
    RequeueForRetry(w, now);
  } else if (w.check_reservation) {
    w.Explain({ReasonCode::kUnsatisfiedChecks, WaitingForChecks(w)});
  }
  return state == CheckState::kRejected ? CheckUpdate::kRejected
                                        : CheckUpdate::kApplied;
}

CheckUpdate AdmissionCycle::SetCheckState(const CycleInputs& in,
                                          const std::string& workload,
                                          const std::string& check,
                                          CheckState state, std::string message,
                                          int64_t now, PodSetUpdate update) {
  return AdmissionRun(*this, in).ApplyCheckState(
      workload, check, state, std::move(message), now, std::move(update));
}

}  // namespace gpusched
