#include "scheduler/extender_service.h"

#include <algorithm>
#include <chrono>
#include <mutex>

#include "absl/strings/str_cat.h"
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
  for (Node& node : nodes) {
    const NodeState* existing = model_.FindNode(node.meta.name);
    if (existing != nullptr && !node.meta.resource_version.empty() &&
        existing->node().meta.resource_version == node.meta.resource_version) {
      continue;
    }
    std::string name = node.meta.name;
    std::string dropped = model_.UpsertNode(std::move(node));
    if (!dropped.empty()) {
      warnings.push_back(
          absl::StrCat("node ", name, ": GPUs vanished under pods ", dropped));
    }
    const NodeState* state = model_.FindNode(name);
    if (!state->gpus().topology_error().empty()) {
      warnings.push_back(absl::StrCat("node ", name, ": topology ",
                                      state->gpus().topology_source()));
    }
  }
  return warnings;
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
  return model_.RemoveNode(name);
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
  return model_.RemovePod(uid);
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
  std::unique_lock lock(mu_);
  GateVerdict verdict = options_.gate->Check(pod, model_, NowMs());
  std::string reason = verdict.waiting_reason;
  if (!verdict.assigned_node.empty()) {
    reason = absl::StrCat("admitted; assigned to node ", verdict.assigned_node);
  }
  for (const std::string& name : nodes) {
    if (!verdict.assigned_node.empty() && name == verdict.assigned_node) {
      visit(FitVerdict::Code::kFits, {});
    } else if (model_.FindNode(name) == nullptr) {
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
  for (const NodeState* node : FindPrefetched(model_, nodes, shape)) {
    if (node == nullptr) {
      visit(FitVerdict::Code::kInfeasible, kUnknownNodeReason);
      continue;
    }
    const VerdictCache::Verdict verdict =
        shape.Get(*node, [&] { return CheckPodOnNode(view, *node, memo); });
    visit(verdict.code, verdict.reason);
  }
}

std::vector<HostScore> ExtenderService::Prioritize(
    const Pod& pod, std::span<const std::string> nodes) const {
  const PodView view = PodView::Of(pod);
  std::vector<HostScore> scores;
  scores.reserve(nodes.size());
  // A score reads the node, the pod's fit fields (the devices it would
  // get) and the workload shapes the fragmentation scorer learned; the
  // weights are the service's own and never change. One memo per I/O
  // thread, as for filter verdicts, forgotten when the shapes change
  // (scores for older shapes are never asked for again).
  thread_local NodeMemo<int64_t> memo(200000);
  thread_local uint64_t memo_version = 0;
  if (const uint64_t version = options_.weights.workload().version();
      version != memo_version) {
    memo.Clear();
    memo_version = version;
  }
  NodeMemo<int64_t>::Table& known = memo.Lookup(FitSignature(view));
  std::shared_lock lock(mu_);
  size_t index = 0;
  for (const NodeState* node : FindPrefetched(model_, nodes, known)) {
    int64_t score = 0;
    if (node != nullptr) {
      score = known.Get(*node, [&] { return ScoreOnNode(view, *node); });
    }
    scores.push_back(HostScore{nodes[index++], score});
  }
  return scores;
}

// 0..10, the extender protocol's range; 0 where the pod does not fit.
int64_t ExtenderService::ScoreOnNode(const PodView& view,
                                     const NodeState& node) const {
  NodeFit fit = FitPodOnNode(view, node);
  if (!fit.verdict.fits()) return 0;
  int combined =
      options_.weights.Combined(ScoreInput{view, node, fit.assignment});
  return (combined + 5) / 10;  // 0..100 -> 0..10
}

std::optional<PreemptionCandidate> ExtenderService::CheckCandidate(
    const PodView& view, PreemptionCandidate candidate) const {
  const NodeState* node = model_.FindNode(candidate.node);
  if (node == nullptr || candidate.victim_uids.empty()) return std::nullopt;
  NodeState without_victims = *node;
  std::vector<const PodAllocation*> known;
  for (const std::string& uid : candidate.victim_uids) {
    const PlacedPod* placed = model_.FindPodByUid(uid);
    if (placed == nullptr || placed->node != candidate.node) continue;
    known.push_back(node->FindPod(placed->pod_key));
    without_victims.RemovePod(placed->pod_key);
  }
  if (!FitPodOnNode(view, without_victims).verdict.fits()) return std::nullopt;
  // Reprieve: put known victims back, highest priority first, while the pod
  // still fits, as kube-scheduler does. At least one victim always stays, so
  // the answer is valid for kube-scheduler.
  std::stable_sort(known.begin(), known.end(),
                   [](auto* a, auto* b) { return a->priority > b->priority; });
  std::vector<std::string> reprieved;
  for (const PodAllocation* victim : known) {
    if (candidate.victim_uids.size() - reprieved.size() <= 1) break;
    NodeState trial = without_victims;
    if (!trial.AddPod(*victim).ok()) continue;
    if (!FitPodOnNode(view, trial).verdict.fits()) continue;
    without_victims = std::move(trial);
    reprieved.push_back(victim->uid);
  }
  std::erase_if(candidate.victim_uids, [&](const std::string& uid) {
    return std::find(reprieved.begin(), reprieved.end(), uid) !=
           reprieved.end();
  });
  return candidate;
}

std::vector<PreemptionCandidate> ExtenderService::Preempt(
    const Pod& pod, std::vector<PreemptionCandidate> candidates) const {
  const PodView view = PodView::Of(pod);
  std::sort(candidates.begin(), candidates.end(),
            [](const auto& a, const auto& b) { return a.node < b.node; });
  std::vector<PreemptionCandidate> kept;
  std::shared_lock lock(mu_);
  for (PreemptionCandidate& candidate : candidates) {
    if (auto checked = CheckCandidate(view, std::move(candidate))) {
      kept.push_back(*std::move(checked));
    }
  }
  return kept;
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
  absl::Status placed = model_.Place(bound, request.node, fit.assignment);
  if (!placed.ok()) {
    return {.error = absl::StrCat("cannot bind ", pod.Key(), ": ",
                                  placed.message())};
  }
  return {.assignment = std::move(fit.assignment)};
}

BindOutcome ExtenderService::Bind(const BindRequest& request) {
  const std::string key =
      absl::StrCat(request.pod_namespace, "/", request.pod_name);
  std::shared_ptr<const Pod> pod = pending_.Find(request.pod_uid);
  std::unique_lock lock(mu_);
  if (const PlacedPod* placed = model_.FindPodByUid(request.pod_uid)) {
    if (placed->node == request.node && !placed->bound) {
      return ConfirmAssumed(*placed, pod.get(), request, lock);
    }
    if (placed->node == request.node) {
      const PodAllocation* allocation =
          model_.FindNode(placed->node)->FindPod(placed->pod_key);
      return {.assignment = allocation->gpus, .already_bound = true};
    }
    return {.error = absl::StrCat(
                "pod ", key, " (uid ", request.pod_uid, ") is ",
                placed->bound ? "already bound" : "assigned", " to node ",
                placed->node, "; refusing to bind it to ", request.node)};
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
  // Live mode: the model holds the devices (an "assumed" pod) while the API
  // server call runs without the lock; on failure they are released.
  lock.unlock();
  absl::Status sent =
      options_.bind_sink->Bind(*pod, request.node, outcome.assignment);
  if (sent.ok()) {
    pending_.Forget(request.pod_uid);
    return outcome;
  }
  lock.lock();
  model_.RemovePod(request.pod_uid);
  return {.error = absl::StrCat("binding ", key, " to ", request.node,
                                " failed: ", sent.message())};
}

// A pod admission placed (assumed) on its node: bind confirms it. In live
// mode the API server call runs without the lock; a failure leaves the
// assumption in place, since admission owns it and its timeout rolls back.
BindOutcome ExtenderService::ConfirmAssumed(
    const PlacedPod& placed, const Pod* pod, const BindRequest& request,
    std::unique_lock<std::shared_mutex>& lock) {
  const PodAllocation* allocation =
      model_.FindNode(placed.node)->FindPod(placed.pod_key);
  BindOutcome outcome{.assignment = allocation->gpus};
  if (options_.bind_sink != nullptr && pod != nullptr) {
    lock.unlock();
    absl::Status sent =
        options_.bind_sink->Bind(*pod, request.node, outcome.assignment);
    lock.lock();
    if (!sent.ok()) {
      return {.error = absl::StrCat("binding ", placed.pod_key, " to ",
                                    request.node, " failed: ", sent.message())};
    }
  }
  model_.MarkBound(request.pod_uid);
  if (options_.gate != nullptr && pod != nullptr) {
    options_.gate->Bound(*pod, NowMs());
  }
  pending_.Forget(request.pod_uid);
  return outcome;
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
