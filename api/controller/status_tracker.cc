#include "api/controller/status_tracker.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "scheduler/cluster_model.h"

namespace gpusched {
namespace {

// Running once every member that makes the gang is bound where admitted.
WorkloadPhase PhaseOf(const Workload& w) {
  switch (w.state) {
    case Workload::State::kPending:
      return WorkloadPhase::kWaiting;
    case Workload::State::kFinished:
      return WorkloadPhase::kFinished;
    case Workload::State::kAdmitted:
      break;
  }
  const bool all_bound =
      !w.placements.empty() && w.bound.size() >= w.placements.size() &&
      static_cast<int>(w.placements.size() + w.succeeded.size()) >=
          w.min_member;
  return all_bound ? WorkloadPhase::kRunning : WorkloadPhase::kAdmitted;
}

ReasonCode CodeOf(const QueueingEngine& engine, const Workload& w,
                  WorkloadPhase phase) {
  switch (phase) {
    case WorkloadPhase::kWaiting:
      return engine.PendingCode(w);
    case WorkloadPhase::kAdmitted:
    case WorkloadPhase::kRunning:
      return ReasonCode::kAdmitted;
    case WorkloadPhase::kFinished:
      return ReasonCode::kFinished;
  }
  return ReasonCode::kNone;
}

ReasonCode OutcomeOf(EngineEvent::Type type) {
  switch (type) {
    case EngineEvent::Type::kPreempted:
      return ReasonCode::kPreempted;
    case EngineEvent::Type::kEvicted:
      return ReasonCode::kEvicted;
    default:
      return ReasonCode::kNone;
  }
}

std::optional<PodGroupRef> GroupOf(const QueueingEngine& engine,
                                   const Workload& w) {
  if (!w.declared_by_podgroup) return std::nullopt;
  const PodGroup* group = engine.FindPodGroup(w.key);
  if (group == nullptr) return std::nullopt;
  return PodGroupRef{.flavor = group->flavor,
                     .group_namespace = w.namespace_name,
                     .name = group->meta.name,
                     .uid = group->meta.uid};
}

}  // namespace

std::string CodedReason(ReasonCode code, const std::string& sentence) {
  if (code == ReasonCode::kNone) return sentence;
  return absl::StrCat(std::string(ReasonCodeName(code)), ": ", sentence);
}

WorkloadStatus StatusTracker::Current(
    const QueueingEngine& engine, const Workload& w,
    const PendingPositionMap& positions,
    const std::map<std::string, const EngineEvent*>& admitted_events,
    int64_t now) const {
  WorkloadStatus status{.workload = w.key,
                        .phase = PhaseOf(w),
                        .group = GroupOf(engine, w),
                        .min_member = w.min_member,
                        .admitted = static_cast<int32_t>(w.placements.size()),
                        .bound = static_cast<int32_t>(w.bound.size())};
  status.code = CodeOf(engine, w, status.phase);
  for (const auto& [key, pod] : w.pods) {
    status.members.push_back(
        {pod.meta.namespace_name, pod.meta.name, PodUid(pod)});
  }
  if (status.phase == WorkloadPhase::kWaiting) {
    auto position = positions.find(&w);
    status.message = position == positions.end()
                         ? w.reason
                         : engine.PendingReason(w, position->second.first,
                                                position->second.second);
    if (status.code == ReasonCode::kBackingOff) {
      status.message =
          absl::StrCat("retry in ", (w.backoff_until_ms - now + 999) / 1000,
                       "s; ", status.message);
    }
  } else if (status.phase == WorkloadPhase::kFinished) {
    status.message = w.reason;
  } else if (auto e = admitted_events.find(w.key); e != admitted_events.end()) {
    status.message = absl::StrCat("admitted: ", e->second->reason);
  } else {
    status.message =
        absl::StrCat("admitted: ", status.admitted, " of ", w.pods.size(),
                     " pods placed, ", status.bound, " bound");
  }
  return status;
}

std::vector<QueueDecision> StatusTracker::Changes(
    const QueueingEngine& engine, const std::vector<EngineEvent>& events,
    const PendingPositionMap& positions, int64_t now) {
  ++pass_;
  std::vector<QueueDecision> out;
  PassEvents seen;
  TellEventOutcomes(engine, events, positions, now, seen, out);
  TellStatusChanges(engine, positions, now, seen, out);
  // Forgotten: workloads gone, or back to nothing to tell.
  std::erase_if(told_,
                [&](const auto& entry) { return entry.second.pass != pass_; });
  return out;
}

// Each event that did something to a workload (preempted, evicted) as its
// status; `seen` collects what the events said as they go.
void StatusTracker::TellEventOutcomes(const QueueingEngine& engine,
                                      const std::vector<EngineEvent>& events,
                                      const PendingPositionMap& positions,
                                      int64_t now, PassEvents& seen,
                                      std::vector<QueueDecision>& out) {
  for (const EngineEvent& e : events) {
    if (e.type == EngineEvent::Type::kAdmitted) seen.admitted[e.workload] = &e;
    if (e.type == EngineEvent::Type::kAdopted) seen.adopted.insert(e.workload);
    if (e.type == EngineEvent::Type::kFinished) {
      seen.finished.insert(e.workload);
    }
    const ReasonCode outcome = OutcomeOf(e.type);
    auto w = engine.workloads().find(e.workload);
    if (outcome == ReasonCode::kNone || w == engine.workloads().end()) continue;
    WorkloadStatus status =
        Current(engine, w->second, positions, seen.admitted, now);
    status.code = outcome;
    status.message = e.reason;
    status.phase = WorkloadPhase::kWaiting;
    told_[e.workload] = {outcome, WorkloadPhase::kWaiting, pass_};
    out.push_back(std::move(status));
  }
}

// One status per workload whose (code, phase) differs from the last told.
void StatusTracker::TellStatusChanges(const QueueingEngine& engine,
                                      const PendingPositionMap& positions,
                                      int64_t now, const PassEvents& seen,
                                      std::vector<QueueDecision>& out) {
  for (const auto& [key, w] : engine.workloads()) {
    const WorkloadPhase phase = PhaseOf(w);
    const Told told{CodeOf(engine, w, phase), phase, pass_};
    if (told.code == ReasonCode::kNone) continue;  // nothing to tell yet
    // Finished is told once, in the pass it finished; deleted ones not.
    if (phase == WorkloadPhase::kFinished && !seen.finished.contains(key)) {
      continue;
    }
    auto [before, first] = told_.try_emplace(key, told);
    const bool code_changed = first || before->second.code != told.code;
    const bool same = !code_changed && before->second.phase == told.phase;
    before->second = told;
    if (same ||
        (first && seen.adopted.contains(key) && !seen.admitted.contains(key))) {
      continue;
    }
    out.push_back(Current(engine, w, positions, seen.admitted, now));
    std::get<WorkloadStatus>(out.back()).code_changed = code_changed;
  }
}

}  // namespace gpusched
