// The admission loop's adoption: pods that run, or that gpusched admitted
// on a node before it restarted, keep their node (QueueingEngine::Adopt);
// those whose node the model lacks wait as orphans until it has it, and an
// admission is taken back only when its node is gone or cannot hold it.
#include <spdlog/spdlog.h>

#include <set>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "api/codec/pod_admission_state.h"
#include "api/controller/admission_loop.h"
#include "scheduler/node_predicates.h"
#include "scheduler/pod_view.h"

namespace gpusched {
namespace {

// Why an admission from before a restart was not kept.
std::string WhyNotKept(const Adoption& adoption, const std::string& node) {
  if (adoption.outcome != Adoption::Outcome::kNodeUnknown) {
    return adoption.reason;
  }
  return absl::StrCat("node ", node,
                      " is no longer in the cluster (not in gpusched's "
                      "complete node list)");
}

}  // namespace

// Every pod that runs or was admitted is adopted before any pending pod is
// queued: a pending pod met first could otherwise look at quota that
// adopted pods will take (and a restart admit past a queue's quota).
void AdmissionLoop::ApplyList(const Listed& list, int64_t now) {
  const std::vector<Pod>& pods = list.pods;
  // A pod that does not decode is still there: kept as the core holds it.
  std::set<std::string> listed(list.undecodable.begin(),
                               list.undecodable.end());
  std::vector<const Pod*> rest;
  orphans_.clear();  // the list names every bound or admitted pod again
  for (const Pod& pod : pods) {
    listed.insert(pod.Key());
    if (!Manages(pod)) continue;
    if (IsTerminal(pod) || Leaving(pod) || !AdoptIfAdmitted(pod, now)) {
      rest.push_back(&pod);
    }
  }
  for (const Pod* pod : rest) {
    if (IsTerminal(*pod)) continue;
    if (Leaving(*pod)) {
      ApplyLeaving(*pod, now);
    } else {
      AddPending(*pod, now);
    }
  }
  // Last: a succeeded member counts towards a gang its mates made known.
  for (const Pod* pod : rest) {
    if (IsTerminal(*pod)) ApplyTerminal(*pod, now);
  }
  ForgetUnlisted(listed, now);
}

// Pods the core knows that the list does not have were deleted while no
// watch was open.
void AdmissionLoop::ForgetUnlisted(const std::set<std::string>& listed,
                                   int64_t now) {
  std::vector<std::string> gone;
  for (const auto& [key, w] : engine_->workloads()) {
    for (const auto& [pod, unused] : w.pods) {
      if (!listed.contains(pod)) gone.push_back(pod);
    }
    for (const std::string& pod : w.succeeded) {
      if (!listed.contains(pod)) gone.push_back(pod);
    }
  }
  for (const std::string& pod : gone) {
    Forget(pod);
    engine_->Delete(pod, now);
  }
  std::erase_if(stale_revoked_,
                [&](const std::string& key) { return !listed.contains(key); });
}

bool AdmissionLoop::AdoptIfAdmitted(const Pod& pod, int64_t now) {
  if (!pod.node_name.empty()) {
    AdoptBound(pod, now);
    return true;
  }
  // Labels count only on a pod the engine does not know: one it holds
  // pending had its admission taken back (the label's removal not yet
  // written), and where an unbound pod may go is the engine's word. A pod
  // with our gate was never admitted (admission lifts the gate).
  // A standby takes them as the deciding replica's admission.
  const std::string node = pod.admission.admitted_node;
  if (node.empty() && IsAdmittedByKueue(pod)) {
    // Only at first sight: one the engine holds pending had that admission
    // taken back (its bind timed out), and waits like any other.
    const Workload* w = engine_->FindWorkloadOfPod(pod.Key());
    if (w == nullptr) return AdoptKueueAdmitted(pod, now);
    if (w->placements.contains(pod.Key())) return true;
  }
  if (node.empty() || pod.admission.gated_by_us ||
      (deciding_ && engine_->FindWorkloadOfPod(pod.Key()) != nullptr)) {
    return false;
  }
  Adoption adoption = engine_->Adopt(pod, node, /*bound=*/false, now);
  switch (adoption.outcome) {
    case Adoption::Outcome::kAdopted:
      orphans_.erase(pod.Key());
      NoteAdopted(pod, node);
      return true;
    case Adoption::Outcome::kAlreadyPlaced:
      return true;
    case Adoption::Outcome::kNodeUnknown:
      if (!NodeIsGone(node)) {
        // Not yet listed, not gone: it keeps its admission and waits.
        orphans_.insert_or_assign(pod.Key(), Orphan{pod, node, false});
        return true;
      }
      break;
    default:
      break;
  }
  return GiveUpAdmission(pod, node, WhyNotKept(adoption, node), now);
}

// A pod Kueue admitted before the switch that no node has bound yet. Kueue
// lifted its gate and wrote the admission's flavor node labels (and, under
// topology-aware scheduling, its domain) into its nodeSelector, so the
// default scheduler binds it within them: it is adopted as admitted on the
// first node by name that its selectors, affinity and tolerations allow and
// that can hold it, its queue charged for that node's flavor, so that
// nothing is admitted into the quota it holds meanwhile. Bound elsewhere,
// the model follows the cluster (AdoptBound). With no such node now it is
// queued as pending, as an unbound pod gpusched knows nothing of is.
bool AdmissionLoop::AdoptKueueAdmitted(const Pod& pod, int64_t now) {
  const PodView view = PodView::Of(pod);
  for (const NodeState* node : replica_.SortedNodes()) {
    const bool allowed = absl::c_all_of(
        NodePredicates(),
        [&](const NodePredicate& p) { return p.check(view, *node).fits(); });
    if (!allowed) continue;
    Adoption adoption = engine_->Adopt(pod, node->name(), /*bound=*/false, now);
    if (adoption.outcome == Adoption::Outcome::kAdopted) {
      spdlog::info("adopted {}, admitted by Kueue and not bound yet, on {}",
                   pod.Key(), node->name());
      NoteAdopted(pod, node->name());
      return true;
    }
  }
  spdlog::warn(
      "{}: admitted by Kueue, not bound, and no node can hold it now: "
      "queued",
      pod.Key());
  return false;
}

// Its node is gone or cannot hold it now: the admission is taken back. One
// pinned there by affinity can run nowhere else, so it is evicted (its
// controller makes a new pod) and not queued; any other is queued afresh
// once its label is cleared.
bool AdmissionLoop::GiveUpAdmission(const Pod& pod, const std::string& node,
                                    const std::string& why, int64_t now) {
  (void)now;
  orphans_.erase(pod.Key());
  const bool pinned = pod.admission.pinned_node == node;
  RevokeStale(pod, node, pinned, why);
  return pinned;
}

// With await_lists every pass runs on a complete node list, so a node the
// model lacks (the replica, synced at the start of the pass) is not in the
// cluster; without, it may only be unlisted yet.
bool AdmissionLoop::NodeIsGone(const std::string& node) const {
  return options_.await_lists && replica_.FindNode(node) == nullptr &&
         !undecodable_nodes_.contains(node);
}

void AdmissionLoop::AdoptBound(const Pod& pod, int64_t now) {
  const std::string key = pod.Key();
  Adoption adoption = engine_->Adopt(pod, pod.node_name, /*bound=*/true, now);
  switch (adoption.outcome) {
    case Adoption::Outcome::kAdopted:
      orphans_.erase(key);
      NoteAdopted(pod, pod.node_name);
      break;
    case Adoption::Outcome::kAlreadyPlaced:
      break;
    case Adoption::Outcome::kPlacedElsewhere:
      // Bound elsewhere than admitted: the model follows the cluster
      // (ObserveBound); the engine keeps its placement, as it always did.
      engine_->MarkBound(key);
      break;
    case Adoption::Outcome::kNodeUnknown:
    case Adoption::Outcome::kDoesNotFit:
      // Not queued: it runs; it is adopted once its node is in the model.
      orphans_.insert_or_assign(key, Orphan{pod, pod.node_name, true});
      break;
  }
}

// The node list comes on its own watch, so an orphan's node may be in the
// model by the next pass. A bound orphan waits however long it takes (it
// runs; the pod garbage collector ends it if its node is gone); an unbound
// one until its node is gone or cannot hold it.
void AdmissionLoop::SettleOrphans(int64_t now) {
  std::vector<std::pair<Orphan, std::string>> given_up;
  for (auto it = orphans_.begin(); it != orphans_.end();) {
    const Orphan& orphan = it->second;
    Adoption adoption =
        engine_->Adopt(orphan.pod, orphan.node, orphan.bound, now);
    using Outcome = Adoption::Outcome;
    const bool waits =
        adoption.outcome == Outcome::kNodeUnknown
            ? orphan.bound || !NodeIsGone(orphan.node)
            : adoption.outcome == Outcome::kDoesNotFit && orphan.bound;
    if (waits) {
      ++it;
      continue;
    }
    if (adoption.outcome == Outcome::kAdopted) {
      NoteAdopted(orphan.pod, orphan.node);
    } else if (!orphan.bound && adoption.outcome != Outcome::kAlreadyPlaced) {
      given_up.emplace_back(orphan, WhyNotKept(adoption, orphan.node));
    }
    it = orphans_.erase(it);
  }
  for (const auto& [orphan, why] : given_up) {
    if (!GiveUpAdmission(orphan.pod, orphan.node, why, now)) {
      AddPending(orphan.pod, now);
    }
  }
}

void AdmissionLoop::GiveUpOrphansOn(const std::string& node, int64_t now) {
  std::vector<Pod> waiting;
  for (const auto& [key, orphan] : orphans_) {
    if (!orphan.bound && orphan.node == node) waiting.push_back(orphan.pod);
  }
  for (const Pod& pod : waiting) {
    const std::string why =
        absl::StrCat("node ", node, " was deleted from the cluster");
    if (!GiveUpAdmission(pod, node, why, now)) AddPending(pod, now);
  }
}

// A complete node list left out nodes that members were placed on (deleted
// while the node watch was cut off): as a deletion seen on the watch.
void AdmissionLoop::DropVanishedNodes(int64_t now) {
  std::set<std::string> vanished;
  for (const auto& [key, w] : engine_->workloads()) {
    for (const auto& [pod, placement] : w.placements) {
      if (NodeIsGone(placement.node)) vanished.insert(placement.node);
    }
  }
  for (const std::string& node : vanished) engine_->NodeDown(node, now);
}

// Diff compares against members_: an adopted member is an admission
// already carried out, not one to carry out again. One pinned to its node
// by affinity lost our gate when it was admitted; only eviction takes it
// back, as for a gated one.
void AdmissionLoop::NoteAdopted(const Pod& pod, const std::string& node) {
  const std::string key = pod.Key();
  if (pod.admission.pinned_node == node) gated_[key] = true;
  members_[key] = {.node = node,
                   .uid = PodUid(pod),
                   .bound = !pod.node_name.empty(),
                   .gated = gated_.contains(key)};
}

void AdmissionLoop::RevokeStale(const Pod& pod, const std::string& node,
                                bool pinned, const std::string& why) {
  if (!stale_revoked_.insert(pod.Key()).second) return;  // once per pod
  stale_revokes_.push_back(RevokeMember{
      .pod = {pod.meta.namespace_name, pod.meta.name, PodUid(pod)},
      .node = node,
      .workload = WorkloadOf(pod).key,
      .evict = pinned,
      .reason = absl::StrCat("admitted on node ", node,
                             " before gpusched restarted, but ", why)});
}

}  // namespace gpusched
