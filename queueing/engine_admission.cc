// Admission: order the candidates, then for each one transaction: quota for
// every (flavor, resource) up the cohort tree -> a placement for every
// member -> commit both or neither.
#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/engine_internal.h"
#include "queueing/fair_sharing.h"
#include "queueing/gang_placer.h"
#include "scheduler/node_predicates.h"

namespace gpusched {

const ClusterQueue* FindClusterQueue(const Policy& policy,
                                     const std::string& name) {
  for (const ClusterQueue& cq : policy.cluster_queues) {
    if (cq.name == name) return &cq;
  }
  return nullptr;
}

const ResourceFlavor* FindFlavor(const Policy& policy,
                                 const std::string& name) {
  for (const ResourceFlavor& f : policy.flavors) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

namespace {

constexpr size_t kMaxSignatures = 1 << 16;

// The order within a ClusterQueue: priority, then creation, then name.
bool QueueOrder(const Workload* a, const Workload* b) {
  if (a->priority != b->priority) return a->priority > b->priority;
  if (a->created_ms != b->created_ms) return a->created_ms < b->created_ms;
  return a->key < b->key;
}

bool Tolerated(const ResourceFlavor& flavor,
               const std::vector<const Pod*>& pods) {
  for (const Taint& taint : flavor.node_taints) {
    for (const Pod* pod : pods) {
      bool ok =
          std::any_of(
              flavor.tolerations.begin(), flavor.tolerations.end(),
              [&](const Toleration& t) { return Tolerates(t, taint); }) ||
          std::any_of(pod->tolerations.begin(), pod->tolerations.end(),
                      [&](const Toleration& t) { return Tolerates(t, taint); });
      if (!ok) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<const Workload*> QueueingEngine::PendingOrder(
    const std::string& cq) const {
  std::vector<const Workload*> pending;
  for (const auto& [key, w] : live_) {
    if (w->cluster_queue == cq && w->state == Workload::State::kPending &&
        !w->pods.empty()) {
      pending.push_back(w);
    }
  }
  std::sort(pending.begin(), pending.end(), QueueOrder);
  return pending;
}

// Every queue's pending workloads in queue order, in one walk.
std::map<std::string, std::vector<Workload*>> QueueingEngine::PendingByQueue() {
  std::map<std::string, std::vector<Workload*>> by_queue;
  for (auto& [key, w] : live_) {
    if (IsQueued(*w) && w->state == Workload::State::kPending &&
        !w->pods.empty()) {
      by_queue[w->cluster_queue].push_back(w);
    }
  }
  for (auto& [cq, pending] : by_queue) {
    std::sort(pending.begin(), pending.end(), QueueOrder);
  }
  return by_queue;
}

bool QueueingEngine::Ready(const Workload& w, int64_t now) const {
  if (w.state != Workload::State::kPending || w.pods.empty()) return false;
  if (w.backoff_until_ms > now || w.podgroup_missing) return false;
  return !w.is_gang || static_cast<int>(w.pods.size()) >= w.min_member;
}

// Per ClusterQueue, its ready workloads in queue order; StrictFIFO offers
// its head only, and only when the head is ready.
std::map<std::string, std::vector<Workload*>> QueueingEngine::ReadyByQueue(
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

// The quota a workload would take on the first flavor of each resource
// group: what borrowing and shares are judged on before a flavor is chosen.
FrAmounts QueueingEngine::FirstFlavorDemand(const Workload& w) const {
  FrAmounts demand;
  const ClusterQueue* cq = ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) return demand;
  ResourceList total = TotalRequests(w.MembersToAdmit());
  for (const ResourceGroup& g : cq->resource_groups) {
    if (g.flavors.empty()) continue;
    for (const std::string& r : g.covered_resources) {
      if (total.Get(r) > 0) demand[{g.flavors[0].flavor, r}] = total.Get(r);
    }
  }
  return demand;
}

int QueueingEngine::SignatureId(Workload& w) {
  if (w.signature_id >= 0) return w.signature_id;
  auto [it, inserted] =
      signature_ids_.try_emplace(AdmissionSignature(w), signature_ids_.size());
  if (inserted) {
    signature_demand_.push_back(FirstFlavorDemand(w));
    signature_queue_.push_back(w.cluster_queue);
    signature_placement_.push_back(PlacementSignature(w));
  }
  w.signature_id = it->second;
  return w.signature_id;
}

// Without fair sharing, across queues: workloads that fit without
// borrowing first, then priority, then creation.
std::vector<Workload*> QueueingEngine::Candidates(int64_t now) {
  // Borrowing depends only on the queue and the demand: once per signature.
  std::map<int, bool> borrows_by_signature;
  std::vector<std::pair<bool, Workload*>> keyed;
  for (auto& [cq, workloads] : ReadyByQueue(now)) {
    for (Workload* w : workloads) {
      const int id = SignatureId(*w);
      auto [it, inserted] = borrows_by_signature.try_emplace(id, false);
      if (inserted) {
        it->second = quota_.WouldBorrow(cq, signature_demand_[id]);
      }
      keyed.emplace_back(it->second, w);
    }
  }
  std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) {
    if (a.first != b.first) return !a.first;
    return QueueOrder(a.second, b.second);
  });
  std::vector<Workload*> out;
  out.reserve(keyed.size());
  for (const auto& [borrows, w] : keyed) out.push_back(w);
  return out;
}

// One admission pass over the queued workloads. With fair sharing the
// order is a tournament re-run after every admission (shares move).
bool QueueingEngine::AdmitQueued(int64_t now) {
  // A long-running server sees ever new shapes (group names in Volcano
  // annotations): start over between passes rather than grow unbounded.
  if (signature_ids_.size() >= kMaxSignatures) {
    ResetSignatures();
    RebuildIndexes();
  }
  if (!policy_.config.fair_sharing) {
    bool progress = AdmitBestEffortClasses(now);
    const bool any_strict = std::any_of(
        policy_.cluster_queues.begin(), policy_.cluster_queues.end(),
        [](const ClusterQueue& cq) {
          return cq.queueing_strategy == QueueingStrategy::kStrictFifo;
        });
    if (!any_strict) return progress;
    for (Workload* w : Candidates(now)) {
      const ClusterQueue* cq = ClusterQueueNamed(w->cluster_queue);
      if (cq == nullptr ||
          cq->queueing_strategy != QueueingStrategy::kStrictFifo) {
        continue;
      }
      w->attempt_stamp = ++attempt_counter_;
      progress |= TryAdmit(*w, now);
    }
    return progress;
  }
  // Fair sharing: a tournament re-run after every admission (shares move).
  bool progress = false;
  std::map<std::string, std::deque<Contender>> queues;
  for (auto& [cq, workloads] : ReadyByQueue(now)) {
    for (Workload* w : workloads) {
      queues[cq].push_back(Contender{w, signature_demand_[SignatureId(*w)]});
    }
  }
  FairSharingTournament tournament(quota_, std::move(queues), QueueOrder);
  while (Workload* w = tournament.Next()) {
    w->attempt_stamp = ++attempt_counter_;
    progress |= TryAdmit(*w, now);
  }
  return progress;
}

const std::vector<const NodeState*>* QueueingEngine::SortedNodes() {
  if (sorted_nodes_generation_ != model_->node_set_generation()) {
    sorted_nodes_ = model_->SortedNodes();
    sorted_nodes_generation_ = model_->node_set_generation();
  }
  return &sorted_nodes_;
}

const std::vector<const NodeState*>* QueueingEngine::NodesWithLabels(
    const StringMap& labels) {
  const std::vector<const NodeState*>& sorted = *SortedNodes();
  if (nodes_with_labels_generation_ != model_->node_set_generation()) {
    nodes_with_labels_.clear();
    nodes_with_labels_generation_ = model_->node_set_generation();
  }
  std::string key;
  for (const auto& [name, value] : labels) {
    absl::StrAppend(&key, name, "=", value, "\n");
  }
  auto [it, inserted] = nodes_with_labels_.try_emplace(std::move(key));
  if (inserted) {
    for (const NodeState* node : sorted) {
      if (HasLabels(node->node().meta.labels, labels)) {
        it->second.push_back(node);
      }
    }
  }
  return &it->second;
}

NodeScoreMemo* QueueingEngine::ScoreMemo() {
  // Scores read the weights' task-shape model; a new model, new scores.
  if (weights_.workload().version() != score_memo_model_version_) {
    score_memo_.Clear();
    score_memo_model_version_ = weights_.workload().version();
  }
  return &score_memo_;
}

// PlaceGang, unless an equal placement failed against this same state.
GangPlacement QueueingEngine::PlaceOrRecall(
    Workload& w, const GangPlacementRequest& request,
    const std::vector<std::string>& flavors) {
  ++placement_searches_;
  if (in_preemption_trial_) return PlaceGang(*model_, request);
  NoteFreedCapacity();
  std::string key = absl::StrCat(signature_placement_[SignatureId(w)], "\n",
                                 absl::StrJoin(flavors, ","),
                                 reserved_for_ == w.key ? "\nreserved" : "");
  if (auto it = placement_failures_.find(key);
      it != placement_failures_.end()) {
    const auto& [owner, why] = it->second;
    // Others of the same shape get the owner's text: it names its members.
    return GangPlacement{
        .placed = false,
        .reason = owner == w.key
                      ? why.text
                      : absl::StrCat("as for ", owner, ": ", why.text),
        .code = why.code};
  }
  GangPlacement placement = PlaceGang(*model_, request);
  if (!placement.placed) {
    placement_failures_.emplace(
        std::move(key),
        std::pair(w.key, WaitReason{placement.code, placement.reason}));
  }
  return placement;
}

// Tries the ClusterQueue's flavors in order: the first flavor (per resource
// group) whose quota fits and where every member can be placed wins.
std::optional<QueueingEngine::Attempt> QueueingEngine::Fit(
    Workload& w, WaitReason* why) {
  const ClusterQueue* cq = ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) {
    *why = {ReasonCode::kNoMatchingFlavor,
            absl::StrCat("ClusterQueue ", w.cluster_queue, " does not exist")};
    return std::nullopt;
  }
  const std::vector<const Pod*> members = w.MembersToAdmit();
  ResourceList total = TotalRequests(members);
  for (const auto& [resource, amount] : total.entries()) {
    if (amount <= 0 || resource == kPods) continue;
    bool covered = false;
    for (const ResourceGroup& g : cq->resource_groups) {
      covered |=
          std::find(g.covered_resources.begin(), g.covered_resources.end(),
                    resource) != g.covered_resources.end();
    }
    if (!covered) {
      *why = {ReasonCode::kNoMatchingFlavor,
              absl::StrCat("queue ", cq->name, ": resource ", resource,
                           " is not covered by its resourceGroups")};
      return std::nullopt;
    }
  }
  // Per group, the flavors whose quota fits, in order.
  std::vector<std::vector<std::pair<const FlavorQuotas*, FrAmounts>>> options;
  for (const ResourceGroup& g : cq->resource_groups) {
    std::vector<std::pair<const FlavorQuotas*, FrAmounts>> fitting;
    bool requested = false;
    for (const FlavorQuotas& f : g.flavors) {
      FrAmounts demand;
      for (const std::string& r : g.covered_resources) {
        if (total.Get(r) > 0) demand[{f.flavor, r}] = total.Get(r);
      }
      requested = !demand.empty();
      const ResourceFlavor* flavor = FindFlavor(policy_, f.flavor);
      if (flavor != nullptr && !Tolerated(*flavor, members)) {
        if (why->empty()) {
          *why = {ReasonCode::kNoMatchingFlavor,
                  absl::StrCat("flavor ", f.flavor,
                               ": the pods do not tolerate its node taints")};
        }
        continue;
      }
      if (QuotaFits(w, *cq, g, f.flavor, demand, why)) {
        fitting.emplace_back(&f, std::move(demand));
      }
    }
    if (!requested) continue;
    if (fitting.empty()) return std::nullopt;
    options.push_back(std::move(fitting));
  }
  // Flavor combinations in order (first group varies slowest); one group
  // is the usual case.
  std::vector<size_t> pick(options.size(), 0);
  for (int tries = 0; tries < 64; ++tries) {
    GangPlacementRequest request{.owner = w.key,
                                 .members = members,
                                 .required_level = w.topology_required,
                                 .preferred_level = w.topology_preferred,
                                 .levels = policy_.config.topology_levels,
                                 .weights = &weights_,
                                 .sorted_nodes = SortedNodes()};
    Attempt attempt;
    std::vector<std::string> names;
    for (size_t g = 0; g < options.size(); ++g) {
      const auto& [flavor_quotas, demand] = options[g][pick[g]];
      names.push_back(flavor_quotas->flavor);
      for (const auto& [fr, amount] : demand) attempt.charged[fr] += amount;
      if (const ResourceFlavor* f =
              FindFlavor(policy_, flavor_quotas->flavor)) {
        request.node_labels.insert(f->node_labels.begin(),
                                   f->node_labels.end());
        request.tolerations.insert(request.tolerations.end(),
                                   f->tolerations.begin(),
                                   f->tolerations.end());
      }
    }
    request.sorted_nodes = NodesWithLabels(request.node_labels);
    request.sorted_nodes_match_labels = true;
    request.memo = ScoreMemo();
    // Nodes held for a starving workload are not for others, busy or not.
    if (reserved_for_ != w.key) request.excluded_nodes = reserved_nodes_;
    GangPlacement placement = PlaceOrRecall(w, request, names);
    if (placement.placed) {
      attempt.placements = std::move(placement.placements);
      attempt.flavors = absl::StrJoin(names, ",");
      return attempt;
    }
    *why = {placement.code, absl::StrCat("flavor ", absl::StrJoin(names, ","),
                                         ": ", placement.reason)};
    size_t g = options.size();
    while (g > 0 && ++pick[g - 1] == options[g - 1].size()) pick[--g] = 0;
    if (g == 0) break;
  }
  return std::nullopt;
}

void QueueingEngine::Commit(Workload& w, Attempt attempt, int64_t now) {
  const bool first = !w.admitted();
  quota_.AddUsage(w.cluster_queue, attempt.charged);
  for (const auto& [fr, amount] : attempt.charged) w.charged[fr] += amount;
  for (auto& [pod, placement] : attempt.placements) {
    if (options_.bind_on_admission) w.bound.insert(pod);
    w.placements[pod] = std::move(placement);
  }
  SetState(w, Workload::State::kAdmitted);
  w.Explain({});
  below_min_since_.erase(w.key);
  if (first) {
    w.admitted_at_ms = now;
    w.failed_attempts = 0;
    if (reserved_for_ == w.key) {
      reserved_for_.clear();
      reserved_nodes_.clear();
      ++reservation_changes_;
    }
    Emit(now, EngineEvent::Type::kAdmitted, w, "",
         absl::StrCat("flavor ", attempt.flavors, ", ", w.placements.size(),
                      w.placements.size() == 1 ? " pod" : " pods"));
  }
}

bool QueueingEngine::TryAdmit(Workload& w, int64_t now) {
  WaitReason why;
  std::optional<Attempt> attempt = Fit(w, &why);
  if (attempt) {
    Commit(w, *std::move(attempt), now);
    return true;
  }
  w.Explain(std::move(why));
  return TryPreempt(w, now);
}

bool QueueingEngine::TryPlaceOutsideQueues(Workload& w, int64_t now) {
  if (!w.admitted() && !Ready(w, now)) return false;
  GangPlacementRequest request{.owner = w.key,
                               .members = w.MembersToAdmit(),
                               .required_level = w.topology_required,
                               .preferred_level = w.topology_preferred,
                               .levels = policy_.config.topology_levels,
                               .weights = &weights_,
                               .sorted_nodes = SortedNodes()};
  // Pods outside queues may not take what a starving workload is promised.
  request.excluded_nodes = reserved_nodes_;
  request.memo = ScoreMemo();
  GangPlacement placement = PlaceGang(*model_, request);
  if (!placement.placed) {
    w.Explain({placement.code, std::move(placement.reason)});
    return false;
  }
  Commit(w,
         Attempt{.placements = std::move(placement.placements),
                 .flavors = "none (outside queues)"},
         now);
  return true;
}

// Admitted members not yet bound whose assumed place vanished from the
// model (their node was deleted or replaced under them): the whole workload
// is released and planned again, never left half-placed.
void QueueingEngine::ReplanLostPlacements(int64_t now) {
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
    w.Explain({ReasonCode::kInsufficientGpus,
               absl::StrCat("re-planning: the assumed place of ", lost,
                            " is gone")});
    Emit(now, EngineEvent::Type::kEvicted, w, "", w.reason);
  }
}

void QueueingEngine::Schedule(int64_t now) {
  ReplanLostPlacements(now);
  RunTimers(now);
  // Pods, nodes and reservations changed since last time.
  placement_failures_.clear();
  capacity_bound_.valid = false;
  placement_failures_events_ = events_.size();
  placement_failures_reserved_ = reservation_changes_;
  for (int pass = 0; pass < 1000; ++pass) {
    bool progress = AdmitQueued(now);
    // Pods outside queues, in arrival order.
    std::vector<Workload*> outside;
    for (auto& [key, w] : outside_) {
      if (Ready(*w, now)) outside.push_back(w);
    }
    std::stable_sort(outside.begin(), outside.end(), [](auto* a, auto* b) {
      return a->created_ms != b->created_ms ? a->created_ms < b->created_ms
                                            : a->key < b->key;
    });
    for (Workload* w : outside) progress |= TryPlaceOutsideQueues(*w, now);
    progress |= AdmitExtraMembers(now);
    if (!progress) break;
  }
  for (auto& [key, w] : live_) {
    // A gang that timed out short of members backs off before its next
    // try; the sentence stays the count it waits for.
    const ReasonCode incomplete = w->backoff_until_ms > now
                                      ? ReasonCode::kBackingOff
                                      : ReasonCode::kGangIncomplete;
    if (w->state == Workload::State::kPending && w->podgroup_missing) {
      w->Explain({incomplete,
                  absl::StrCat("waiting for PodGroup ", w->key,
                               ": its minMember says how many pods make the "
                               "gang")});
    } else if (w->state == Workload::State::kPending && w->is_gang &&
               static_cast<int>(w->pods.size()) < w->min_member) {
      w->Explain({incomplete, absl::StrCat("waiting for pods: ", w->pods.size(),
                                           " of minMember ", w->min_member,
                                           " exist")});
    }
  }
}

// Running gangs take extra members one by one as capacity allows.
bool QueueingEngine::AdmitExtraMembers(int64_t now) {
  std::vector<Workload*> running;
  for (auto& [key, w] : admitted_) {
    if (w->HasUnplacedMembers()) running.push_back(w);
  }
  bool progress = false;
  for (Workload* w : running) {
    if (!w->admitted()) continue;
    WaitReason ignored;
    if (!IsQueued(*w)) {
      progress |= TryPlaceOutsideQueues(*w, now);
    } else if (auto attempt = Fit(*w, &ignored)) {
      Commit(*w, *std::move(attempt), now);
      progress = true;
    }
  }
  return progress;
}

}  // namespace gpusched

namespace gpusched {

std::string QueueingEngine::PendingReason(const Workload& w) const {
  if (w.state != Workload::State::kPending || !IsQueued(w)) return ReasonOf(w);
  std::vector<const Workload*> order = PendingOrder(w.cluster_queue);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i] == &w) return PendingReason(w, i + 1, order.size());
  }
  return ReasonOf(w);
}

std::string QueueingEngine::PendingReason(const Workload& w, size_t position,
                                          size_t total) const {
  const std::string reason = ReasonOf(w);
  return absl::StrCat(reason, reason.empty() ? "" : "; ", "position ", position,
                      " of ", total);
}

std::map<const Workload*, std::pair<size_t, size_t>>
QueueingEngine::PendingPositions() const {
  std::map<const Workload*, std::pair<size_t, size_t>> positions;
  std::map<std::string, std::vector<const Workload*>> by_queue;
  for (const auto& [key, w] : live_) {
    if (IsQueued(*w) && w->state == Workload::State::kPending &&
        !w->pods.empty()) {
      by_queue[w->cluster_queue].push_back(w);
    }
  }
  for (auto& [cq, pending] : by_queue) {
    std::sort(pending.begin(), pending.end(), QueueOrder);
    for (size_t i = 0; i < pending.size(); ++i) {
      positions[pending[i]] = {i + 1, pending.size()};
    }
  }
  return positions;
}

}  // namespace gpusched
