#include "scheduler/extender_service.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/fit_signature.h"
#include "scheduler/node_fit.h"
#include "scheduler/node_memo.h"
#include "scheduler/pod_view.h"
#include "scheduler/verdict_cache.h"

namespace gpusched {

namespace {

// The nodes named (null where unknown), with what `memo.Get` will read of
// each prefetched. Names to nodes first, then memo lookups: both miss the
// CPU cache for most nodes, and two short loops overlap the misses where
// one long loop waits for each in turn. Valid until the next call on this
// thread.
template <typename Memo>
const std::vector<const NodeState*>& FindPrefetched(
    const ClusterModel& model, std::span<const std::string> names,
    const Memo& memo) {
  thread_local std::vector<const NodeState*> found;
  found.clear();
  for (const std::string& name : names) {
    found.push_back(model.FindNode(name));
    if (found.back() != nullptr) memo.Prefetch(*found.back());
  }
  return found;
}

}  // namespace

ExtenderService::ExtenderService(ServiceOptions options)
    : options_(std::move(options)), pending_(options_.pending_pod_capacity) {}

std::vector<std::string> ExtenderService::UpsertNodes(std::vector<Node> nodes) {
  std::vector<std::string> warnings;
  std::unique_lock lock(mu_);
  const uint64_t changes_before = node_changes_;
  const int64_t now = NowMs();
  for (Node& node : nodes) {
    const NodeState* existing = model_.FindNode(node.meta.name);
    if (existing != nullptr &&
        SameDraDevices(existing->node().dra_devices, node.dra_devices)) {
      if (!node.meta.resource_version.empty() &&
          existing->node().meta.resource_version ==
              node.meta.resource_version) {
        continue;
      }
      // Keep the devices already shared: their selector answers are
      // memoised with them (DraNodeDevices::memo), and a node's status
      // heartbeat changes nothing there.
      node.dra_devices = existing->node().dra_devices;
    }
    UpsertNodeLocked(std::move(node), now, warnings);
  }
  // Read under the lock: another writer may be counting already.
  const bool changed = node_changes_ != changes_before;
  lock.unlock();
  if (changed) node_changed_cv_.notify_all();
  return warnings;
}

std::vector<std::string> ExtenderService::SetDraDevices(
    std::string_view name, std::shared_ptr<const DraNodeDevices> devices) {
  std::vector<std::string> warnings;
  std::unique_lock lock(mu_);
  const NodeState* existing = model_.FindNode(name);
  if (existing == nullptr ||
      SameDraDevices(existing->node().dra_devices, devices)) {
    return warnings;
  }
  Node node = existing->node();
  node.dra_devices = std::move(devices);
  UpsertNodeLocked(std::move(node), NowMs(), warnings);
  lock.unlock();
  node_changed_cv_.notify_all();
  return warnings;
}

void ExtenderService::UpsertNodeLocked(Node node, int64_t now,
                                       std::vector<std::string>& warnings) {
  std::string name = node.meta.name;
  node_changed_.insert_or_assign(
      name, NodeChange{.count = ++node_changes_, .ms = now});
  std::string dropped = model_.UpsertNode(std::move(node));
  if (!dropped.empty()) {
    warnings.push_back(
        absl::StrCat("node ", name, ": GPUs vanished under pods ", dropped));
  }
  if (!detached_.empty()) ReattachDetached(name);
  const NodeState* state = model_.FindNode(name);
  if (!state->gpus().topology_error().empty()) {
    warnings.push_back(absl::StrCat("node ", name, ": topology ",
                                    state->gpus().topology_source()));
  }
}

std::vector<std::string> ExtenderService::AddRunningPods(
    const std::vector<Pod>& pods) {
  std::vector<std::string> warnings;
  std::unique_lock lock(mu_);
  for (const Pod& pod : pods) {
    if (pod.node_name.empty() || IsTerminal(pod)) continue;
    std::string warning;
    absl::Status status = model_.AddRunningPod(pod, &warning);
    if (!status.ok()) warnings.emplace_back(status.message());
    if (!warning.empty()) warnings.push_back(std::move(warning));
  }
  return warnings;
}

bool ExtenderService::RemoveNode(std::string_view name) {
  std::unique_lock lock(mu_);
  std::vector<DetachedPod> pods;
  if (!model_.RemoveNode(name, &pods)) return false;
  node_changed_.erase(name);
  if (!pods.empty()) detached_.insert_or_assign(std::string(name), pods);
  return true;
}

std::vector<std::string> ExtenderService::DetachedPodUids() const {
  std::vector<std::string> uids;
  std::shared_lock lock(mu_);
  for (const auto& [node, pods] : detached_) {
    for (const DetachedPod& pod : pods) uids.push_back(pod.allocation.uid);
  }
  std::sort(uids.begin(), uids.end());
  return uids;
}

// A node registered again gets back the pods it had, each once the node
// offers its devices again (a kubelet creates the Node first and reports its
// devices a moment later). One that a pod event placed meanwhile is done.
void ExtenderService::ReattachDetached(std::string_view node) {
  auto it = detached_.find(node);
  if (it == detached_.end()) return;
  std::erase_if(it->second, [&](DetachedPod& pod) {
    absl::Status attached = model_.Attach(node, pod);
    return attached.ok() || absl::IsAlreadyExists(attached);
  });
  if (it->second.empty()) detached_.erase(it);
}

bool ExtenderService::HasNodeVersion(std::string_view name,
                                     std::string_view resource_version) const {
  std::shared_lock lock(mu_);
  const NodeState* node = model_.FindNode(name);
  return node != nullptr && !resource_version.empty() &&
         node->node().meta.resource_version == resource_version;
}

bool ExtenderService::RemovePod(std::string_view uid) {
  std::unique_lock lock(mu_);
  if (model_.RemovePod(uid)) return true;
  for (auto& [node, pods] : detached_) {
    if (std::erase_if(pods, [&](const DetachedPod& pod) {
          return pod.allocation.uid == uid;
        }) > 0) {
      return true;
    }
  }
  return false;
}

int64_t ExtenderService::NowMs() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A pod the queueing core manages: admitted members pass only on their
// assigned node; waiting ones fail every node as unresolvable, with the
// core's reason, so kube-scheduler's own preemption stays out of it.
void ExtenderService::GateFilter(const Pod& pod,
                                 std::span<const std::string> nodes,
                                 FilterVisitor visit) {
  GateVerdict verdict = options_.gate->Check(pod);
  std::shared_lock lock(mu_);
  std::string reason = verdict.waiting_reason;
  if (!verdict.assigned_node.empty()) {
    reason = absl::StrCat("admitted; assigned to node ", verdict.assigned_node);
  }
  for (const std::string& name : nodes) {
    if (!verdict.assigned_node.empty() && name == verdict.assigned_node) {
      visit(FitVerdict::Code::kFits, {});
    } else if (model_.FindNode(name) == nullptr) {
      // Unresolvable like every other node here: the core decides.
      visit(FitVerdict::Code::kInfeasible, kUnknownNodeReason);
    } else {
      visit(FitVerdict::Code::kInfeasible, reason);
    }
  }
}

FilterOutcome ExtenderService::Filter(const Pod& pod,
                                      std::span<const std::string> nodes) {
  FilterOutcome outcome;
  size_t index = 0;
  FilterEach(pod, nodes, [&](FitVerdict::Code code, std::string_view reason) {
    const std::string& name = nodes[index++];
    switch (code) {
      case FitVerdict::Code::kFits:
        outcome.passed.push_back(name);
        break;
      case FitVerdict::Code::kUnavailable:
        outcome.failed.emplace_back(name, reason);
        break;
      case FitVerdict::Code::kInfeasible:
        outcome.unresolvable.emplace_back(name, reason);
        break;
      case FitVerdict::Code::kNotChosen:
        outcome.not_chosen.push_back(name);
        break;
    }
  });
  return outcome;
}

void ExtenderService::FilterEach(const Pod& pod,
                                 std::span<const std::string> nodes,
                                 FilterVisitor visit) {
  pending_.Remember(pod);
  if (options_.gate != nullptr && options_.gate->Manages(pod)) {
    GateFilter(pod, nodes, visit);
    return;
  }
  const PodView view = PodView::Of(pod);
  // The fragmentation scorer scores against the shapes of the pods it is
  // asked about (TaskShapeModel); a filter call is where a pod arrives.
  options_.weights.ObservePod(view);
  // One cache per I/O thread: no lock, and valid across service instances
  // since generations are never reused.
  thread_local VerdictCache cache;
  VerdictCache::Shape shape = cache.Lookup(FitSignature(view));
  GpuVerdictMemo memo;
  std::shared_lock lock(mu_);
  if (FilteredInDoubt(pod, nodes, visit)) return;
  FilterNodes(view, nodes, shape, memo, visit);
}

bool ExtenderService::FilteredInDoubt(const Pod& pod,
                                      std::span<const std::string> nodes,
                                      FilterVisitor visit) {
  if (binds_in_doubt_.empty()) return false;
  const std::string uid = PodUid(pod);
  const PlacedPod* placed =
      binds_in_doubt_.contains(uid) ? model_.FindPodByUid(uid) : nullptr;
  if (placed == nullptr || placed->bound) return false;
  FilterInDoubt(*placed, nodes, visit);
  return true;
}

void ExtenderService::FilterNodes(const PodView& view,
                                  std::span<const std::string> nodes,
                                  VerdictCache::Shape& shape,
                                  GpuVerdictMemo& memo, FilterVisitor visit) {
  const std::vector<const NodeState*>& found =
      FindPrefetched(model_, nodes, shape);
  const std::vector<bool>* chosen = options_.filter_keep_best > 0
                                        ? &ChooseBest(view, found, shape, memo)
                                        : nullptr;
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i] == nullptr) {
      visit(FitVerdict::Code::kUnavailable, kUnknownNodeReason);
      continue;
    }
    const VerdictCache::Verdict verdict = shape.Get(
        *found[i], [&] { return CheckPodOnNode(view, *found[i], memo); });
    if (verdict.code == FitVerdict::Code::kFits && chosen != nullptr &&
        !(*chosen)[i]) {
      visit(FitVerdict::Code::kNotChosen, {});
      continue;
    }
    visit(verdict.code, verdict.reason);
  }
}

// Scores only the fitting nodes, and only when there are more of them than
// filter keeps: a pod with few candidates costs what it did.
const std::vector<bool>& ExtenderService::ChooseBest(
    const PodView& view, const std::vector<const NodeState*>& found,
    VerdictCache::Shape& shape, GpuVerdictMemo& memo) const {
  thread_local std::vector<bool> chosen;
  thread_local std::vector<std::pair<int, size_t>> ranked;  // -score, index
  chosen.assign(found.size(), true);
  ranked.clear();
  for (size_t i = 0; i < found.size(); ++i) {
    if (found[i] == nullptr) continue;
    const VerdictCache::Verdict verdict = shape.Get(
        *found[i], [&] { return CheckPodOnNode(view, *found[i], memo); });
    if (verdict.code == FitVerdict::Code::kFits) ranked.push_back({0, i});
  }
  const size_t keep = options_.filter_keep_best;
  if (ranked.size() <= keep) return chosen;
  NodeMemo<int>::Table& known = ScoreMemo(view);
  for (auto& [score, index] : ranked) {
    const NodeState& node = *found[index];
    score = -known.Get(node, [&] { return CombinedScore(view, node); });
  }
  std::partial_sort(ranked.begin(), ranked.begin() + keep, ranked.end());
  for (size_t r = keep; r < ranked.size(); ++r)
    chosen[ranked[r].second] = false;
  return chosen;
}

// A score reads the node, the pod's fit fields (the devices it would get)
// and the workload shapes the fragmentation scorer learned; the weights are
// the service's own and never change. One memo per I/O thread, as for
// filter verdicts, forgotten when the shapes change (scores for older
// shapes are never asked for again). It holds combined scores (0..100, -1
// where the pod does not fit), which prioritize and filter_keep_best share.
NodeMemo<int>::Table& ExtenderService::ScoreMemo(const PodView& view) const {
  thread_local NodeMemo<int> memo(200000);
  thread_local uint64_t memo_version = 0;
  if (const uint64_t version = options_.weights.workload().version();
      version != memo_version) {
    memo.Clear();
    memo_version = version;
  }
  return memo.Lookup(FitSignature(view));
}

std::vector<HostScore> ExtenderService::Prioritize(
    const Pod& pod, std::span<const std::string> nodes) const {
  const PodView view = PodView::Of(pod);
  std::vector<HostScore> scores;
  scores.reserve(nodes.size());
  NodeMemo<int>::Table& known = ScoreMemo(view);
  std::shared_lock lock(mu_);
  size_t index = 0;
  for (const NodeState* node : FindPrefetched(model_, nodes, known)) {
    int64_t score = 0;
    if (node != nullptr) {
      const int combined =
          known.Get(*node, [&] { return CombinedScore(view, *node); });
      score = combined < 0 ? 0 : (combined + 5) / 10;  // 0..100 -> 0..10
    }
    scores.push_back(HostScore{nodes[index++], score});
  }
  return scores;
}

int ExtenderService::CombinedScore(const PodView& view,
                                   const NodeState& node) const {
  NodeFit fit = FitPodOnNode(view, node);
  if (!fit.verdict.fits()) return -1;
  return options_.weights.Combined(ScoreInput{view, node, fit.assignment});
}

BindOutcome ExtenderService::PlaceForBind(const Pod& pod,
                                          const BindRequest& request) {
  const NodeState* node = model_.FindNode(request.node);
  if (node == nullptr) {
    return {.error = absl::StrCat("cannot bind ", pod.Key(), " to ",
                                  request.node, ": ", kUnknownNodeReason)};
  }
  NodeFit fit = FitPodOnNode(PodView::Of(pod), *node);
  if (!fit.verdict.fits()) {
    return {.error = absl::StrCat("cannot bind ", pod.Key(), " to ",
                                  request.node, ": ", fit.verdict.reason())};
  }
  Pod bound = pod;
  bound.node_name = request.node;
  if (!fit.assignment.gpu_ids.empty()) {
    bound.meta.annotations[kGpuIdsAnnotation] =
        FormatGpuIds(fit.assignment.gpu_ids);
  }
  // Live mode holds the devices as assumed until the API server binds.
  absl::Status placed = model_.Place(bound, request.node, fit.assignment,
                                     /*bound=*/options_.bind_sink == nullptr);
  if (!placed.ok()) {
    return {.error = absl::StrCat("cannot bind ", pod.Key(), ": ",
                                  placed.message())};
  }
  return {.assignment = std::move(fit.assignment)};
}

bool BindMayHaveLanded(const absl::Status& status) {
  if (status.GetPayload(kRequestNotSentPayload).has_value()) return false;
  switch (status.code()) {
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kUnknown:
      return true;
    default:
      return false;
  }
}

// 1. A pod already placed on the requested node: bound means a repeated
//    bind (success, recorded once); assumed means admission placed it or
//    an earlier bind is in doubt, so the binding is sent (again).
// 2. Placed elsewhere: refused, so no pod ever holds devices twice.
// 3. Otherwise fit it on the node under the exclusive lock, hold the
//    devices, and send the binding (live mode) without the lock.
BindOutcome ExtenderService::Bind(const BindRequest& request) {
  const std::string key =
      absl::StrCat(request.pod_namespace, "/", request.pod_name);
  std::shared_ptr<const Pod> pod = pending_.Find(request.pod_uid);
  std::unique_lock lock(mu_);
  if (const PlacedPod* placed = model_.FindPodByUid(request.pod_uid)) {
    if (placed->node == request.node) {
      const PodAllocation* allocation =
          model_.FindNode(placed->node)->FindPod(placed->pod_key);
      if (placed->bound) {
        return {.assignment = allocation->gpus, .already_bound = true};
      }
      return SendBinding(pod.get(), request, allocation->gpus, lock);
    }
    const bool in_doubt = binds_in_doubt_.contains(request.pod_uid);
    return {.error = absl::StrCat(
                "pod ", key, " (uid ", request.pod_uid, ") is ",
                placed->bound ? "already bound"
                : in_doubt    ? "being bound (an earlier binding may still "
                                "land)"
                              : "assigned",
                " to node ", placed->node, "; refusing to bind it to ",
                request.node)};
  }
  if (pod == nullptr) {
    return {.error = absl::StrCat(
                "pod ", key, " (uid ", request.pod_uid,
                ") is unknown to gpusched: it was never sent to filter")};
  }
  BindOutcome outcome = PlaceForBind(*pod, request);
  if (!outcome.error.empty() || options_.bind_sink == nullptr) {
    if (outcome.error.empty()) pending_.Forget(request.pod_uid);
    return outcome;
  }
  return SendBinding(pod.get(), request, std::move(outcome.assignment), lock);
}

// Live mode: the model holds the devices (an assumed pod) while the API
// server call runs without the lock. The pod watch may report the binding
// before the call returns; either way the pod ends bound exactly once.
BindOutcome ExtenderService::SendBinding(
    const Pod* pod, const BindRequest& request, GpuAssignment assignment,
    std::unique_lock<std::shared_mutex>& lock) {
  Pod named;  // a restarted gpusched may be asked to bind a pod it assumed
  if (pod == nullptr) {
    named.meta = {.name = request.pod_name,
                  .namespace_name = request.pod_namespace,
                  .uid = request.pod_uid};
    pod = &named;
  }
  if (const NodeState* node = model_.FindNode(request.node); node != nullptr) {
    assignment.dra_names = node->gpus().DraNamesOf(assignment.gpu_ids);
  }
  if (options_.bind_sink != nullptr) {
    lock.unlock();
    absl::Status sent =
        options_.bind_sink->Bind(*pod, request.node, assignment);
    lock.lock();
    const PlacedPod* placed = model_.FindPodByUid(request.pod_uid);
    const bool seen_bound =
        placed != nullptr && placed->node == request.node && placed->bound;
    if (!sent.ok() && !seen_bound) return BindingFailed(pod, request, sent);
  }
  binds_in_doubt_.erase(request.pod_uid);
  model_.MarkBound(request.pod_uid);
  if (options_.gate != nullptr && options_.gate->Manages(*pod)) {
    options_.gate->Bound(*pod, NowMs());
  }
  pending_.Forget(request.pod_uid);
  return {.assignment = std::move(assignment)};
}

// A binding that may still land keeps its devices held until the API
// server settles it (ObserveBound, a deletion) or the hold runs out; a
// failed one releases them, except for an admitted member, whose admission
// owns the placement (its bind timeout rolls the workload back).
BindOutcome ExtenderService::BindingFailed(const Pod* pod,
                                           const BindRequest& request,
                                           const absl::Status& sent) {
  std::string error =
      absl::StrCat("binding ", request.pod_namespace, "/", request.pod_name,
                   " to ", request.node, " failed: ", sent.message());
  if (BindMayHaveLanded(sent) &&
      model_.FindPodByUid(request.pod_uid) != nullptr) {
    binds_in_doubt_.insert_or_assign(request.pod_uid,
                                     NowMs() + options_.bind_in_doubt_hold_ms);
    absl::StrAppend(&error,
                    "; it may still land, so its devices stay held until the "
                    "API server shows the outcome (at most ",
                    options_.bind_in_doubt_hold_ms / 1000, " s)");
    return {.error = std::move(error)};
  }
  binds_in_doubt_.erase(request.pod_uid);
  const bool admitted =
      options_.gate != nullptr && options_.gate->Manages(*pod);
  if (!admitted) model_.RemovePod(request.pod_uid);
  return {.error = std::move(error)};
}

std::vector<std::string> ExtenderService::ObserveBound(const Pod& pod) {
  const std::string uid = PodUid(pod);
  std::vector<std::string> warnings;
  std::unique_lock lock(mu_);
  binds_in_doubt_.erase(uid);
  const PlacedPod* placed = model_.FindPodByUid(uid);
  if (placed != nullptr && placed->node == pod.node_name) {
    if (!placed->bound && options_.gate != nullptr &&
        options_.gate->Manages(pod)) {
      options_.gate->Bound(pod, NowMs());
    }
    model_.MarkBound(uid);
    return warnings;
  }
  if (placed != nullptr) {
    warnings.push_back(absl::StrCat("pod ", pod.Key(), " was held on node ",
                                    placed->node, " but is bound to node ",
                                    pod.node_name, "; following the cluster"));
    model_.RemovePod(uid);
  }
  std::string warning;
  absl::Status added = model_.AddRunningPod(pod, &warning);
  if (!added.ok()) warnings.emplace_back(added.message());
  if (!warning.empty()) warnings.push_back(std::move(warning));
  return warnings;
}

std::vector<std::string> ExtenderService::ReleaseExpiredBinds() {
  std::vector<std::string> released;
  std::unique_lock lock(mu_);
  if (binds_in_doubt_.empty()) return released;
  const int64_t now = NowMs();
  for (const auto& [uid, until] : binds_in_doubt_) {
    if (until <= now) released.push_back(uid);
  }
  std::sort(released.begin(), released.end());
  for (const std::string& uid : released) {
    binds_in_doubt_.erase(uid);
    const PlacedPod* placed = model_.FindPodByUid(uid);
    std::shared_ptr<const Pod> pod = pending_.Find(uid);
    const bool admitted = options_.gate != nullptr && pod != nullptr &&
                          options_.gate->Manages(*pod);
    if (placed != nullptr && !placed->bound && !admitted) {
      model_.RemovePod(uid);
    }
  }
  return released;
}

size_t ExtenderService::binds_in_doubt() const {
  std::shared_lock lock(mu_);
  return binds_in_doubt_.size();
}

// A pod whose binding to `placed.node` may still land: that node only.
void ExtenderService::FilterInDoubt(const PlacedPod& placed,
                                    std::span<const std::string> nodes,
                                    FilterVisitor visit) {
  const std::string reason =
      absl::StrCat("an earlier binding of this pod to node ", placed.node,
                   " may still land; waiting for the API server");
  for (const std::string& name : nodes) {
    if (name == placed.node) {
      visit(FitVerdict::Code::kFits, {});
    } else if (model_.FindNode(name) == nullptr) {
      visit(FitVerdict::Code::kUnavailable, kUnknownNodeReason);
    } else {
      visit(FitVerdict::Code::kUnavailable, reason);
    }
  }
}

GpuCounts ExtenderService::CountGpus() const {
  GpuCounts counts;
  std::shared_lock lock(mu_);
  counts.nodes = static_cast<int64_t>(model_.node_count());
  for (const NodeState* node : model_.SortedNodes()) {
    for (const GpuDevice& d : node->gpus().devices()) {
      if (!d.healthy) {
        ++counts.unhealthy;
      } else if (d.free_milli == kMilliPerGpu) {
        ++counts.free;
      } else if (d.free_milli == 0) {
        ++counts.used;
      } else {
        ++counts.shared;
      }
    }
    for (const MigPool& pool : node->gpus().mig_pools()) {
      counts.mig_used += pool.used;
      counts.mig_free += pool.capacity - pool.used;
    }
  }
  return counts;
}

}  // namespace gpusched
