#include "queueing/gang_placer.h"

#include <algorithm>
#include <span>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "queueing/workload.h"
#include "scheduler/node_fit.h"
#include "scheduler/node_predicates.h"
#include "scheduler/pod_view.h"

namespace gpusched {
namespace {

using NodeList = std::vector<const NodeState*>;

std::string LabelOf(const NodeState& node, const std::string& key) {
  auto it = node.node().meta.labels.find(key);
  return it == node.node().meta.labels.end() ? "" : it->second;
}

// The least milli-GPU the pod can take on this node (replicas on a shared
// node are 1000/replicas each).
int64_t MinimumGpuMilli(const PodView& view, const GpuInventory& gpus) {
  if (view.gpu.milli > 0) return view.gpu.milli;
  const int64_t per_gpu =
      gpus.time_shared() ? gpus.replica_milli() : kMilliPerGpu;
  return int64_t{view.gpu.gpus} * per_gpu;
}

// Members largest GPU demand first, so big pods are not squeezed out by
// small ones placed before them; then by name.
std::vector<Pod> SortedMembers(const GangPlacementRequest& request) {
  std::vector<Pod> members;
  for (const Pod* pod : request.members) {
    Pod copy = *pod;
    for (const Toleration& t : request.tolerations)
      copy.tolerations.push_back(t);
    members.push_back(std::move(copy));
  }
  std::stable_sort(members.begin(), members.end(),
                   [](const Pod& a, const Pod& b) {
                     int64_t da = GpuDemandMilli(a), db = GpuDemandMilli(b);
                     if (da != db) return da > db;
                     return a.Key() < b.Key();
                   });
  return members;
}

// Whether the node lacks the free GPU capacity the pod needs at least: a
// necessary condition for any GPU fit, far cheaper than the full check.
bool QuickFail(const PodView& view, const NodeState& node) {
  return MinimumGpuMilli(view, node.gpus()) > node.gpus().free_milli();
}

class Attempt {
 public:
  // `shapes[i]` is members[i]'s MemberSignature when the request has a
  // memo (worked out once per gang, not once per domain tried).
  Attempt(ClusterModel& model, const GangPlacementRequest& request,
          std::vector<std::string> shapes)
      : model_(model), request_(request), shapes_(std::move(shapes)) {}

  // Places all members on `nodes`; on failure undoes and returns false.
  bool Run(const std::vector<Pod>& members, const NodeList& nodes,
           const std::string& affinity_level) {
    if (RunPart(members, 0, nodes, affinity_level)) return true;
    Undo();
    return false;
  }

  // Places `part`, members[offset...] of the gang, on `nodes`, keeping what
  // is placed already; on failure undoes only what it placed.
  bool RunPart(std::span<const Pod> part, size_t offset, const NodeList& nodes,
               const std::string& affinity_level) {
    const size_t mark = uids_.size();
    for (size_t i = 0; i < part.size(); ++i) {
      const Pod& pod = part[i];
      NodeScoreMemo::Table* memo =
          request_.memo != nullptr ? &request_.memo->Lookup(shapes_[offset + i])
                                   : nullptr;
      const NodeState* best = BestNode(pod, memo, nodes, affinity_level);
      if (best == nullptr || !Commit(pod, *best)) {
        UndoTo(mark);
        return false;
      }
    }
    return true;
  }

  void Undo() {
    UndoTo(0);
    used_domains_.clear();
  }

  std::map<std::string, Placement> Take() { return std::move(placed_); }
  const std::string& last_reason() const { return last_reason_; }

 private:
  // The pod's verdict and score on the node: remembered in `memo` while
  // the node is unchanged, else worked out. A node failing the quick check
  // gets the full check, for its reason, only when `explain` asks for one;
  // that answer is not remembered (it is needed once per search at most).
  const NodeScore& ScoreOn(const PodView& view, NodeScoreMemo::Table* memo,
                           const NodeState& node, bool explain) {
    // Cheaper than the memo's lookup, and on a full cluster true of most
    // nodes: a search of thousands of nodes is mostly this check.
    static const NodeScore kQuickFail{.quick_fail = true};
    if (!explain && QuickFail(view, node)) return kQuickFail;
    if (memo != nullptr) {
      const NodeScore& known = memo->Get(
          node, [&] { return Compute(view, node, /*explain=*/false); });
      if (!(explain && known.quick_fail && known.reason.empty())) return known;
    }
    scratch_ = Compute(view, node, explain);
    return scratch_;
  }

  NodeScore Compute(const PodView& view, const NodeState& node,
                    bool explain) const {
    NodeScore out;
    out.quick_fail = QuickFail(view, node);
    if (out.quick_fail && !explain) return out;
    NodeFit fit = FitPodOnNode(view, node);
    out.fits = fit.verdict.fits();
    if (out.fits) {
      out.score =
          request_.weights->Combined(ScoreInput{view, node, fit.assignment});
      out.assignment = std::move(fit.assignment);
    } else {
      out.reason = fit.verdict.reason();
    }
    return out;
  }

  const NodeState* BestNode(const Pod& pod, NodeScoreMemo::Table* memo,
                            const NodeList& nodes,
                            const std::string& affinity_level) {
    const PodView view = PodView::Of(pod);
    const NodeState* best = nullptr;
    int64_t best_score = -1;
    for (const NodeState* node : nodes) {
      const NodeScore& fit =
          ScoreOn(view, memo, *node, /*explain=*/last_reason_.empty());
      // The quick check is necessary for any GPU fit and far cheaper than
      // the full one; the full check still explains the first rejection.
      if (!last_reason_.empty() && fit.quick_fail) continue;
      if (!fit.fits) {
        if (last_reason_.empty() || best == nullptr) {
          last_reason_ =
              absl::StrCat("member ", pod.Key(), " fits none of ", nodes.size(),
                           " nodes (", node->name(), ": ", fit.reason, ")");
        }
        continue;
      }
      int64_t score = fit.score;
      if (!affinity_level.empty() &&
          used_domains_.contains(LabelOf(*node, affinity_level))) {
        score += 1000;  // keep the gang in as few domains as possible
      }
      if (score > best_score) {
        best_score = score;
        best = node;
        best_assignment_ = fit.assignment;
      }
    }
    if (best != nullptr && !affinity_level.empty()) {
      used_domains_.insert(LabelOf(*best, affinity_level));
    }
    return best;
  }

  bool Commit(const Pod& pod, const NodeState& node) {
    Pod bound = pod;
    bound.node_name = node.name();
    if (!model_.Place(bound, node.name(), best_assignment_, /*bound=*/false)
             .ok()) {
      return false;
    }
    placed_[pod.Key()] = Placement{node.name(), best_assignment_};
    uids_.push_back(PodUid(pod));
    keys_.push_back(pod.Key());
    return true;
  }

  // Takes back every placement after the first `mark`.
  void UndoTo(size_t mark) {
    for (size_t i = mark; i < uids_.size(); ++i) {
      model_.RemovePod(uids_[i]);
      placed_.erase(keys_[i]);
    }
    uids_.resize(mark);
    keys_.resize(mark);
  }

  ClusterModel& model_;
  const GangPlacementRequest& request_;
  std::map<std::string, Placement> placed_;
  std::vector<std::string> uids_;
  std::vector<std::string> keys_;  // the pod keys of uids_, in order
  std::set<std::string> used_domains_;
  GpuAssignment best_assignment_;
  std::vector<std::string> shapes_;
  NodeScore scratch_;  // ScoreOn's answer when nothing is remembered
  std::string last_reason_;
};

// Domains of `level` among `nodes`, fullest that can hold `demand` first.
std::vector<NodeList> DomainsOf(const NodeList& nodes, const std::string& level,
                                int64_t demand_milli) {
  std::map<std::string, NodeList> by_value;
  for (const NodeState* node : nodes) {
    std::string value = LabelOf(*node, level);
    if (!value.empty()) by_value[value].push_back(node);
  }
  std::vector<std::pair<int64_t, NodeList>> ranked;
  for (auto& [value, members] : by_value) {
    int64_t free = 0;
    for (const NodeState* n : members) free += n->gpus().free_milli();
    if (free < demand_milli) continue;
    ranked.emplace_back(free, std::move(members));
  }
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<NodeList> domains;
  for (auto& [free, members] : ranked) domains.push_back(std::move(members));
  return domains;
}

// The nodes with the flavor's labels that are not held for another
// workload, in the model's order.
NodeList CandidateNodes(ClusterModel& model,
                        const GangPlacementRequest& request) {
  // The excluded nodes by address: a name lookup per node would cost more
  // than the rest of a search of thousands of nodes.
  absl::flat_hash_set<const NodeState*> excluded;
  for (const std::string& name : request.excluded_nodes) {
    if (const NodeState* node = model.FindNode(name)) excluded.insert(node);
  }
  NodeList candidates;
  std::vector<const NodeState*> sorted;
  if (request.sorted_nodes == nullptr) sorted = model.SortedNodes();
  for (const NodeState* node :
       request.sorted_nodes != nullptr ? *request.sorted_nodes : sorted) {
    if ((request.sorted_nodes_match_labels ||
         HasLabels(node->node().meta.labels, request.node_labels)) &&
        !excluded.contains(node)) {
      candidates.push_back(node);
    }
  }
  return candidates;
}

// One gang's search: its members largest first, the candidate nodes, and
// the milli-GPU they ask for together.
struct GangSearch {
  Attempt& attempt;
  const GangPlacementRequest& request;
  const std::vector<Pod>& members;
  const NodeList& candidates;
  int64_t demand_milli = 0;
};

// Places every member within `nodes`: with slices, each run of slice_size
// members (in placement order) in one domain of the slice level, fullest
// domain that can still hold it first, and nothing placed on failure
// (Kueue places slices greedily too); else all members at once.
bool PlaceWithin(const GangSearch& search, const NodeList& nodes,
                 const std::string& affinity_level) {
  const GangPlacementRequest& request = search.request;
  if (request.slice_size <= 0) {
    return search.attempt.Run(search.members, nodes, affinity_level);
  }
  const std::span<const Pod> members(search.members);
  const size_t size = static_cast<size_t>(request.slice_size);
  for (size_t begin = 0; begin < members.size(); begin += size) {
    const std::span<const Pod> slice = members.subspan(begin, size);
    int64_t demand = 0;
    for (const Pod& pod : slice) demand += GpuDemandMilli(pod);
    bool placed = false;
    for (const NodeList& domain :
         DomainsOf(nodes, request.slice_level, demand)) {
      placed = search.attempt.RunPart(slice, begin, domain, "");
      if (placed) break;
    }
    if (!placed) {
      search.attempt.Undo();
      return false;
    }
  }
  return true;
}

// " in slices of N per <level>", or "" without slices.
std::string SliceWords(const GangPlacementRequest& request) {
  if (request.slice_size <= 0) return "";
  return absl::StrCat(" in slices of ", request.slice_size, " per ",
                      request.slice_level);
}

// Why the request's levels cannot be honoured in this flavor, or "": each
// level it names must be one of the flavor's (Kueue: "does not contain
// the requested level"), the slice level no wider than the gang's, and
// the slices must divide the members.
std::string LevelProblem(const GangPlacementRequest& request, size_t members) {
  const std::vector<std::string>& levels = request.levels;
  auto index = [&](const std::string& key) {
    return std::find(levels.begin(), levels.end(), key) - levels.begin();
  };
  for (const std::string* key :
       {&request.required_level, &request.preferred_level,
        &request.slice_level}) {
    if (key->empty() || index(*key) < std::ssize(levels)) continue;
    return absl::StrCat("the topology levels (", absl::StrJoin(levels, " > "),
                        ") do not contain the requested level ", *key);
  }
  if (request.slice_size <= 0) return "";
  const std::string& gang_level = request.required_level.empty()
                                      ? request.preferred_level
                                      : request.required_level;
  if (!gang_level.empty() && index(request.slice_level) < index(gang_level)) {
    return absl::StrCat("the slice level ", request.slice_level,
                        " is above the gang's level ", gang_level);
  }
  if (members % static_cast<size_t>(request.slice_size) != 0) {
    return absl::StrCat("slices of ", request.slice_size,
                        " do not divide the gang's ", members, " members");
  }
  return "";
}

GangPlacement Placed(Attempt& attempt) {
  return GangPlacement{.outcome = GangPlacement::Outcome::kPlaced,
                       .placements = attempt.Take()};
}

// A required level: every member in one domain of it, or none placed.
GangPlacement PlaceInOneDomain(const GangSearch& search) {
  const GangPlacementRequest& request = search.request;
  Attempt& attempt = search.attempt;
  for (const NodeList& domain : DomainsOf(
           search.candidates, request.required_level, search.demand_milli)) {
    if (PlaceWithin(search, domain, "")) return Placed(attempt);
  }
  return {.reason = absl::StrCat(
              "no ", request.required_level, " domain can hold all ",
              search.members.size(), " members", SliceWords(request),
              attempt.last_reason().empty() ? "" : "; ", attempt.last_reason()),
          .code = ReasonCode::kTopologyUnsatisfiable};
}

// A preferred level: one domain at each level from the narrowest up to
// it, then anywhere, nodes in domains already used first.
GangPlacement PlacePreferringDomains(const GangSearch& search) {
  const GangPlacementRequest& request = search.request;
  Attempt& attempt = search.attempt;
  auto level = std::find(request.levels.begin(), request.levels.end(),
                         request.preferred_level);
  for (auto it = request.levels.end();
       it != level && it != request.levels.begin();) {
    --it;
    for (const NodeList& domain :
         DomainsOf(search.candidates, *it, search.demand_milli)) {
      if (PlaceWithin(search, domain, "")) return Placed(attempt);
    }
    if (it == level) break;
  }
  if (PlaceWithin(search, search.candidates, request.preferred_level)) {
    return Placed(attempt);
  }
  return {.reason = attempt.last_reason(),
          .code = ReasonCode::kInsufficientGpus};
}

}  // namespace

int64_t GpuDemandMilli(const Pod& pod) {
  PodView view = PodView::Of(pod);
  return view.gpu.milli > 0 ? view.gpu.milli
                            : int64_t{view.gpu.gpus} * kMilliPerGpu;
}

GangPlacement PlaceGang(ClusterModel& model,
                        const GangPlacementRequest& request) {
  const NodeList candidates = CandidateNodes(model, request);
  const std::vector<Pod> members = SortedMembers(request);
  int64_t demand = 0;
  for (const Pod& pod : members) demand += GpuDemandMilli(pod);
  std::vector<std::string> shapes;
  if (request.memo != nullptr) {
    for (const Pod& pod : members) shapes.push_back(MemberSignature(pod));
  }
  Attempt attempt(model, request, std::move(shapes));
  const GangSearch search{attempt, request, members, candidates, demand};
  if (std::string problem = LevelProblem(request, members.size());
      !problem.empty()) {
    return {.reason = std::move(problem),
            .code = ReasonCode::kTopologyUnsatisfiable};
  }
  if (!request.required_level.empty()) return PlaceInOneDomain(search);
  if (!request.preferred_level.empty()) return PlacePreferringDomains(search);
  if (PlaceWithin(search, candidates, "")) return Placed(attempt);
  if (candidates.empty()) {
    return {.reason = "no node matches the flavor's node labels",
            .code = ReasonCode::kNoMatchingFlavor};
  }
  return {.reason = absl::StrCat(attempt.last_reason(), SliceWords(request)),
          .code = ReasonCode::kInsufficientGpus};
}

}  // namespace gpusched
