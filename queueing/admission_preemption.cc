// Preemption as the admission cycle carries it out: the planner chooses
// victims on trials (PreemptionPlanner), the cycle evicts them (through
// the store) and admits.
#include "absl/strings/str_cat.h"
#include "queueing/admission_run.h"

namespace gpusched {

void AdmissionRun::Evict(Workload& w, int64_t now, EngineEvent::Type type,
                         const std::string& by, const std::string& reason) {
  if (w.admitted()) {
    Release(w);
  } else if (w.check_reservation) {
    GiveBackReservation(w);
  }
  timers_.Forget(w.key);
  const bool preempted = type == EngineEvent::Type::kPreempted;
  if (preempted) ++w.preemptions;
  w.admitted_at_ms = -1;
  if (options_.requeue_preempted || !preempted) {
    SetState(w, Workload::State::kPending);
    w.pending_since_ms = now;
  } else {
    SetState(w, Workload::State::kFinished);
  }
  // Until its next attempt it waits for quota it held a moment ago.
  w.Explain({ReasonCode::kWaitingForQuota, reason});
  Emit(now, type, w, by, reason);
}

bool AdmissionRun::CouldFitWithFreed(const Workload& w,
                                     const std::vector<Workload*>& candidates) {
  // A verdict from free capacity, as a search's would be: capacity freed
  // later must wake the workload's class.
  NoteFreedCapacity();
  return placement_.CouldHold(
      *model_, w.MembersToAdmit(),
      std::vector<const Workload*>(candidates.begin(), candidates.end()));
}

// The plan is made on trials (nothing is remembered from them); its
// victims are evicted, and the workload is admitted if it fits now, else
// it waits for the victims' pods to go.
AdmissionOutcome AdmissionRun::TryPreempt(Workload& w, int64_t now) {
  PreemptionPlan plan = PlanPreemption(w, now);
  if (plan.verdict == PreemptionPlan::Verdict::kBlockedByBudget) {
    // Not a tight loop: the refused victims are left out until their
    // back-off ends (NextWakeup wakes it then).
    w.Explain({ReasonCode::kPreempting, std::move(plan.reason)});
    return {AdmissionOutcome::Verdict::kPreempting, w.code, w.reason, {}};
  }
  if (plan.verdict != PreemptionPlan::Verdict::kEvict) {
    return AdmissionOutcome::Waiting({w.code, w.reason});
  }
  return EvictThenAdmit(w, plan, now);
}

// Placement trials inside the plan are neither counted nor remembered.
PreemptionPlan AdmissionRun::PlanPreemption(Workload& w, int64_t now,
                                            const std::string* only_flavor) {
  const PreemptionPlanner::Trials trials{
      .could_fit =
          [this](const Workload& x, const std::vector<Workload*>& freeing) {
            return CouldFitWithFreed(x, freeing);
          },
      .fits =
          [this, only_flavor](Workload& x) {
            return Fit(x, only_flavor).trial.has_value();
          }};
  GangPlacementStage::PreemptionTrialScope scope(&placement_);
  return PlanPreemptionWith(w, now, trials, only_flavor);
}

// The candidates are the admitted workloads and, while a pass charges
// them, the reservations of admission checks: Kueue preempts any workload
// that holds quota.
PreemptionPlan AdmissionRun::PlanPreemptionWith(
    Workload& w, int64_t now, const PreemptionPlanner::Trials& trials,
    const std::string* only_flavor) {
  const AdmittedByQueue* holding = &store_.admitted_by_queue();
  AdmittedByQueue with_reservations;
  for (const std::string& key : reserving_) {
    Workload& reserved = workloads_.at(key);
    if (reserved.charged.empty()) continue;  // not charged outside a pass
    if (holding != &with_reservations) {
      with_reservations = *holding;
      holding = &with_reservations;
    }
    with_reservations[reserved.cluster_queue][key] = &reserved;
  }
  const PlanInputs inputs{policy_,  quota_,      flavors_, *model_,
                          *holding, only_flavor, &afs_};
  return planner_.Plan(w, now, trials, inputs);
}

AdmissionOutcome AdmissionRun::EvictThenAdmit(Workload& w,
                                              const PreemptionPlan& plan,
                                              int64_t now,
                                              const std::string* only_flavor) {
  AdmissionOutcome decision;
  for (const PreemptionPlan::Victim& victim : plan.victims) {
    Evict(*victim.workload, now, EngineEvent::Type::kPreempted, w.key,
          victim.reason);
    planner_.NoteVictim(victim.workload->key, w.key);
    decision.victims.push_back(victim.workload->key);
  }
  FitResult fit = Fit(w, only_flavor);
  if (fit.trial) {
    // Or, under blockAdmission, it waits with the victims gone.
    const AdmissionOutcome admit = AdmitFit(w, *std::move(fit.trial), now);
    decision.verdict = admit.admitted()
                           ? AdmissionOutcome::Verdict::kAdmitted
                           : AdmissionOutcome::Verdict::kPreempting;
    decision.code = admit.code;
    decision.reason = admit.reason;
    return decision;
  }
  // The victims are on their way out; their capacity comes back when
  // their pods are gone.
  w.Explain({ReasonCode::kPreempting, std::move(fit.why.text)});
  decision.verdict = AdmissionOutcome::Verdict::kPreempting;
  decision.code = w.code;
  decision.reason = w.reason;
  return decision;
}

PreemptionPreview AdmissionCycle::PreviewPreemption(const CycleInputs& in,
                                                    Workload& w, int64_t now) {
  return AdmissionRun(*this, in).PreviewPreemption(w, now);
}

// The plan alone: trials leave the model and the quota as they were, and
// nothing is evicted.
PreemptionPreview AdmissionRun::PreviewPreemption(Workload& w, int64_t now) {
  using Verdict = PreemptionPreview::Verdict;
  // Reservations are candidates as in a pass.
  HoldCheckReservations();
  const PreemptionPlan plan = PlanPreemption(w, now);
  ReleaseCheckReservations();
  PreemptionPreview out{.reason = plan.reason};
  switch (plan.verdict) {
    case PreemptionPlan::Verdict::kNotAllowed:
      out.verdict = Verdict::kNotAllowed;
      break;
    case PreemptionPlan::Verdict::kNoCandidates:
      out.verdict = Verdict::kNoCandidates;
      break;
    case PreemptionPlan::Verdict::kCannotFit:
      out.verdict = Verdict::kCannotFit;
      break;
    case PreemptionPlan::Verdict::kBlockedByBudget:
      out.verdict = Verdict::kBlockedByBudget;
      break;
    case PreemptionPlan::Verdict::kEvict:
      out.verdict =
          plan.victims.empty() ? Verdict::kFitsWithout : Verdict::kWouldEvict;
      break;
  }
  for (const PreemptionPlan::Victim& victim : plan.victims) {
    const Workload& v = *victim.workload;
    out.victims.push_back({.key = v.key,
                           .namespace_name = v.namespace_name,
                           .cluster_queue = v.cluster_queue,
                           .priority = v.priority,
                           .reason = victim.reason});
  }
  return out;
}

void AdmissionCycle::EvictionBlocked(const CycleInputs& in,
                                     const std::string& victim,
                                     const std::string& message, int64_t now) {
  AdmissionRun(*this, in).EvictionBlocked(victim, message, now);
}

void AdmissionRun::EvictionBlocked(const std::string& victim,
                                   const std::string& message, int64_t now) {
  if (!workloads_.contains(victim)) return;
  planner_.NoteRefused(victim, message, now, options_.eviction_refusal_backoff);
  const std::string* by = planner_.PreemptorOf(victim);
  auto it = by == nullptr ? workloads_.end() : workloads_.find(*by);
  if (it == workloads_.end()) return;
  Workload& preemptor = it->second;
  // Admitted on capacity the victim still holds: nothing of it can run
  // there, so it plans again. A member bound already runs: left as it is.
  if (!preemptor.admitted() || !preemptor.bound.empty()) return;
  Release(preemptor);
  SetState(preemptor, Workload::State::kPending);
  preemptor.admitted_at_ms = -1;
  preemptor.pending_since_ms = now;
  preemptor.Explain(
      {ReasonCode::kPreempting, WaitingForBudget(victim, message)});
}

}  // namespace gpusched
