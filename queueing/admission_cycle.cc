// Admission, one transaction per workload: quota for every (flavor,
// resource) up the cohort tree (QuotaFlavors) -> a placement for every
// member (GangPlacementStage, held as a trial) -> commit both or neither.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/admission_run.h"
#include "queueing/scenario.h"

namespace gpusched {
namespace {

// Fills `request` with the flavors `pick` chooses (one per group): their
// node labels, tolerations and topology levels; returns what they charge.
FrAmounts ApplyFlavors(const Policy& policy,
                       const std::vector<std::vector<FlavorOption>>& options,
                       const std::vector<size_t>& pick,
                       GangPlacementRequest& request,
                       std::vector<std::string>& names) {
  FrAmounts charged;
  bool topology_set = false;
  for (size_t g = 0; g < options.size(); ++g) {
    const FlavorOption& option = options[g][pick[g]];
    names.push_back(option.flavor->flavor);
    for (const auto& [fr, amount] : option.demand) charged[fr] += amount;
    if (const ResourceFlavor* f = FindFlavor(policy, option.flavor->flavor)) {
      request.node_labels.insert(f->node_labels.begin(), f->node_labels.end());
      request.tolerations.insert(request.tolerations.end(),
                                 f->tolerations.begin(), f->tolerations.end());
      // The first flavor with a Topology gives the levels (Kueue allows
      // one topology flavor per pod set).
      if (!f->topology_name.empty() && !topology_set) {
        request.levels = TopologyLevelsOf(policy, f);
        topology_set = true;
      }
    }
  }
  return charged;
}

// Members that succeeded still count: the gang waits only for the rest.
std::string WaitingForPods(const Workload& w) {
  std::string text =
      absl::StrCat("waiting for pods: ", w.pods.size() + w.succeeded.size(),
                   " of minMember ", w.min_member, " exist");
  if (!w.succeeded.empty()) {
    absl::StrAppend(&text, " (", w.succeeded.size(), " of them succeeded)");
  }
  return text;
}

}  // namespace

void AdmissionCycle::Schedule(const CycleInputs& in, int64_t now) {
  AdmissionRun(*this, in).Schedule(now);
}

AdmissionRun::AdmissionRun(AdmissionCycle& cycle, const CycleInputs& in)
    : policy_(in.policy),
      quota_(in.quota),
      flavors_(in.flavors),
      model_(&in.model),
      weights_(in.weights),
      options_(in.options),
      timers_(in.timers),
      store_(in.store),
      workloads_(in.store.workloads()),
      live_(in.store.live()),
      admitted_(in.store.admitted()),
      outside_(in.store.outside()),
      events_(in.store.events()),
      classes_(in.store.classes()),
      placement_(cycle.placement_),
      planner_(cycle.planner_),
      held_by_head_(cycle.held_by_head_),
      reserving_(cycle.reserving_),
      afs_(in.afs) {}

GangPlacementRequest AdmissionRun::RequestFor(const Workload& w,
                                              std::vector<const Pod*> members) {
  return GangPlacementRequest{.owner = w.key,
                              .members = std::move(members),
                              .required_level = w.topology_required,
                              .preferred_level = w.topology_preferred,
                              .slice_level = w.topology_slice_level,
                              .slice_size = w.topology_slice_size,
                              .levels = policy_.config.topology_levels,
                              .weights = &weights_,
                              .sorted_nodes = placement_.SortedNodes(*model_),
                              .memo = placement_.ScoreMemo(weights_)};
}

// PlaceGang, unless an equal placement failed against this same state.
GangPlacement AdmissionRun::PlaceOrRecall(
    Workload& w, const GangPlacementRequest& request,
    const std::vector<std::string>& flavors) {
  // Trials search clusters with victims taken off: nothing to remember.
  if (placement_.in_preemption_trial()) {
    return placement_.PlaceOrRecall(*model_, w.key, "", request);
  }
  NoteFreedCapacity();
  const int signature = classes_.SignatureId(w, flavors_);
  std::string key = absl::StrCat(
      classes_.placement_of(signature), "\n", absl::StrJoin(flavors, ","),
      timers_.reserved_for() == w.key ? "\nreserved" : "");
  for (const auto& [label, value] :
       MergedPodSetUpdate(w.checks).node_selector) {
    absl::StrAppend(&key, "\n", label, "=", value);
  }
  return placement_.PlaceOrRecall(*model_, w.key, std::move(key), request);
}

// Tries the ClusterQueue's flavors in order: the first flavor (per resource
// group) whose quota fits and where every member can be placed wins.
// Flavor combinations go in order (first group varies slowest); one group
// is the usual case.
AdmissionRun::FitResult AdmissionRun::Fit(Workload& w,
                                          const std::string* only_flavor) {
  const std::vector<const Pod*> members = w.MembersToAdmit();
  FlavorChoices choices =
      flavors_.Choose(policy_, quota_, w, members, only_flavor);
  FitResult result{std::nullopt, std::move(choices.why), choices.fits};
  if (!choices.fits) return result;
  const std::vector<std::vector<FlavorOption>>& options = choices.groups;
  std::vector<size_t> pick(options.size(), 0);
  for (int tries = 0; tries < 64; ++tries) {
    GangPlacementRequest request = RequestFor(w, members);
    std::vector<std::string> names;
    FrAmounts charged = ApplyFlavors(policy_, options, pick, request, names);
    // A provisioned request's node selector goes on the pods with their
    // admission: they are placed only where it matches.
    const PodSetUpdate update = MergedPodSetUpdate(w.checks);
    request.node_labels.insert(update.node_selector.begin(),
                               update.node_selector.end());
    request.sorted_nodes =
        placement_.NodesWithLabels(*model_, request.node_labels);
    request.sorted_nodes_match_labels = true;
    // Nodes held for a starving workload are not for others, busy or not.
    if (timers_.reserved_for() != w.key) {
      request.excluded_nodes = timers_.reserved_nodes();
    }
    GangPlacement placement = PlaceOrRecall(w, request, names);
    if (placement.placed()) {
      result.trial.emplace(model_, w, std::move(placement.placements),
                           std::move(charged), absl::StrJoin(names, ","));
      return result;
    }
    result.why = {placement.code,
                  absl::StrCat("flavor ", absl::StrJoin(names, ","), ": ",
                               placement.reason)};
    size_t g = options.size();
    while (g > 0 && ++pick[g - 1] == options[g - 1].size()) pick[--g] = 0;
    if (g == 0) break;
  }
  return result;
}

void AdmissionRun::Commit(Workload& w, PlacementTrial trial, int64_t now) {
  PlacementTrial::Committed attempt = std::move(trial).Commit();
  const bool first = !w.admitted();
  quota_.AddUsage(w.cluster_queue, attempt.charged);
  for (const auto& [fr, amount] : attempt.charged) w.charged[fr] += amount;
  for (auto& [pod, placement] : attempt.placements) {
    auto member = w.pods.find(pod);
    if (options_.bind_on_admission &&
        (member == w.pods.end() || !SimulatedNeverBound(member->second))) {
      w.bound.insert(pod);
    }
    w.placements[pod] = std::move(placement);
  }
  SetState(w, Workload::State::kAdmitted);
  w.Explain({});
  timers_.Forget(w.key);
  if (first) {
    // After SetState: the LocalQueue's admitted quota counts it, as
    // Kueue's cache does when the workload turns Admitted.
    SettleAfs(w, attempt.charged, now);
    w.admitted_at_ms = now;
    w.pods_ready_once = false;
    w.failed_attempts = 0;
    timers_.NoteAdmitted(w);
    Emit(now, EngineEvent::Type::kAdmitted, w, "",
         absl::StrCat("flavor ", attempt.flavors, ", ", w.placements.size(),
                      w.placements.size() == 1 ? " pod" : " pods"));
  }
}

bool AdmissionRun::TryPlaceOutsideQueues(Workload& w, int64_t now) {
  if (!w.admitted() && !Ready(w, now)) return false;
  GangPlacementRequest request = RequestFor(w, w.MembersToAdmit());
  // Pods outside queues may not take what a starving workload is promised.
  request.excluded_nodes = timers_.reserved_nodes();
  GangPlacement placement = placement_.Place(*model_, request);
  if (!placement.placed()) {
    w.Explain({placement.code, std::move(placement.reason)});
    return false;
  }
  Commit(w,
         PlacementTrial(model_, w, std::move(placement.placements), {},
                        "none (outside queues)"),
         now);
  return true;
}

// Admitted members not yet bound whose assumed place vanished from the
// model (their node was deleted or replaced under them): the whole workload
// is released and planned again, never left half-placed.
void AdmissionRun::ReplanLostPlacements(int64_t now) {
  std::vector<Workload*> admitted;
  for (auto& [key, w] : admitted_) admitted.push_back(w);
  for (Workload* each : admitted) {
    Workload& w = *each;
    std::string lost;
    for (const auto& [pod, placement] : w.placements) {
      if (w.bound.contains(pod)) continue;
      if (model_->FindPodByUid(PodUid(w.pods[pod])) == nullptr) {
        lost = absl::StrCat(pod, " on ", placement.node);
        break;
      }
    }
    if (lost.empty()) continue;
    Release(w);
    SetState(w, Workload::State::kPending);
    w.admitted_at_ms = -1;
    w.pending_since_ms = now;
    w.Explain(
        {ReasonCode::kInsufficientGpus,
         absl::StrCat("re-planning: the assumed place of ", lost, " is gone")});
    Emit(now, EngineEvent::Type::kEvicted, w, "", w.reason);
  }
}

void AdmissionRun::Schedule(int64_t now) {
  CatchUpAfs(now);
  ReplanLostPlacements(now);
  RunTimers(now);
  // Pods, nodes and reservations changed since last time.
  placement_.ForgetCapacityFacts();
  placement_.set_facts_since({events_.size(), timers_.reservation_changes()});
  for (int round = 0; round < 1000; ++round) {
    PassResult pass = AdmitQueued(now);
    pass += AdmitOutsideQueues(now);
    pass += AdmitExtraMembers(now);
    if (!pass.progressed()) break;
  }
  NoteAfsAdmitted();
  ExplainIncompleteGangs(now);
}

// A gang that timed out short of members backs off before its next try;
// the sentence stays the count it waits for. Then what holds a workload
// whatever its members: its PodGroup API cannot be listed, or (queued) a
// member's claims cannot be charged; each says what and where.
void AdmissionRun::ExplainIncompleteGangs(int64_t now) {
  for (auto& [key, w] : live_) {
    const ReasonCode incomplete = w->backoff_until_ms > now
                                      ? ReasonCode::kBackingOff
                                      : ReasonCode::kGangIncomplete;
    if (w->state == Workload::State::kPending && w->podgroup_missing) {
      w->Explain({incomplete,
                  absl::StrCat("waiting for PodGroup ", w->key,
                               ": its minMember says how many pods make the "
                               "gang")});
    } else if (w->state == Workload::State::kPending && w->ShortOfPods()) {
      w->Explain({incomplete, WaitingForPods(*w)});
    }
  }
  ExplainHolds();
}

void AdmissionRun::ExplainHolds() {
  for (auto& [key, w] : live_) {
    if (w->state != Workload::State::kPending) continue;
    if (!w->topology_invalid.empty()) {
      w->Explain({ReasonCode::kInadmissible, w->topology_invalid});
    } else if (const std::string* failure = store_.GroupApiFailure(*w)) {
      w->Explain({ReasonCode::kPodGroupApiUnavailable,
                  absl::StrCat("its PodGroup API cannot be listed, so its "
                               "minMember is not known: ",
                               *failure)});
    } else if (const Pod* held = w->MemberHeldByClaims();
               held != nullptr && IsQueued(*w)) {
      w->Explain({held->claim_hold.kind == ClaimHold::Kind::kInadmissible
                      ? ReasonCode::kInadmissible
                      : ReasonCode::kWaitingForResourceClaim,
                  held->claim_hold.reason});
    }
  }
}

// Pods outside queues, in arrival order.
PassResult AdmissionRun::AdmitOutsideQueues(int64_t now) {
  std::vector<Workload*> outside;
  for (auto& [key, w] : outside_) {
    if (Ready(*w, now)) outside.push_back(w);
  }
  std::stable_sort(outside.begin(), outside.end(), [](auto* a, auto* b) {
    return a->created_ms != b->created_ms ? a->created_ms < b->created_ms
                                          : a->key < b->key;
  });
  PassResult pass;
  for (Workload* w : outside) {
    if (TryPlaceOutsideQueues(*w, now)) ++pass.admitted;
  }
  return pass;
}

// Running gangs take extra members one by one as capacity allows.
PassResult AdmissionRun::AdmitExtraMembers(int64_t now) {
  std::vector<Workload*> running;
  for (auto& [key, w] : admitted_) {
    if (w->HasUnplacedMembers()) running.push_back(w);
  }
  PassResult pass;
  for (Workload* w : running) {
    if (!w->admitted()) continue;
    if (IsQueued(*w) && w->MemberHeldByClaims() != nullptr) continue;
    if (!IsQueued(*w)) {
      if (TryPlaceOutsideQueues(*w, now)) ++pass.admitted;
    } else if (FitResult fit = Fit(*w); fit.trial) {
      Commit(*w, *std::move(fit.trial), now);
      ++pass.admitted;
    }
  }
  return pass;
}

// Admissions only take capacity, so what failed stands, and the bounds
// hold, until something frees some (an eviction, a finish, a lifted
// reservation).
void AdmissionRun::NoteFreedCapacity() {
  const GangPlacementStage::Since since = placement_.facts_since();
  if (events_.size() == since.events) return;
  if (ChangesSince(since.events, since.reservations).capacity_freed) {
    placement_.ForgetCapacityFacts();
  }
  placement_.set_facts_since({events_.size(), timers_.reservation_changes()});
}

}  // namespace gpusched
