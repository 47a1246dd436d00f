#include "queueing/workload_explanation.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "queueing/engine.h"
#include "scheduler/base/strings.h"
#include "scheduler/node_fit.h"
#include "scheduler/pod_view.h"

namespace gpusched {
namespace {

constexpr std::string_view kCohortPrefix = "cohort:";
constexpr size_t kExamplesPerGroup = 3;

const ClusterQueue* FindClusterQueue(const Policy& policy,
                                     std::string_view name) {
  for (const ClusterQueue& cq : policy.cluster_queues) {
    if (cq.name == name) return &cq;
  }
  return nullptr;
}

WorkloadExplanation::State StateOf(const Workload& w) {
  switch (w.state) {
    case Workload::State::kPending:
      return WorkloadExplanation::State::kPending;
    case Workload::State::kAdmitted:
      return WorkloadExplanation::State::kAdmitted;
    case Workload::State::kFinished:
      break;
  }
  return WorkloadExplanation::State::kFinished;
}

// Positions from 0 in the ClusterQueue and in the workload's LocalQueue.
void AddPositions(const QueueingEngine& engine, const Workload& w,
                  WorkloadExplanation& out) {
  if (w.state != Workload::State::kPending || w.cluster_queue.empty()) return;
  const std::vector<const Workload*> order =
      engine.PendingOrder(w.cluster_queue);
  out.pending_in_cluster_queue = order.size();
  for (size_t i = 0; i < order.size(); ++i) {
    const bool same_local_queue =
        order[i]->namespace_name == w.namespace_name &&
        order[i]->local_queue == w.local_queue;
    if (order[i] == &w) {
      out.position_in_cluster_queue = i;
      out.position_in_local_queue = out.pending_in_local_queue;
    }
    if (same_local_queue) ++out.pending_in_local_queue;
  }
}

// The flavor-resources the workload needs of its ClusterQueue: what it is
// charged once admitted; while pending, every flavor of the queue that
// covers a resource it asks for, in the order admission tries them.
FrAmounts AsksOf(const Workload& w, const ClusterQueue& cq) {
  if (!w.charged.empty()) return w.charged;
  const ResourceList requests = TotalRequests(w.MembersToAdmit());
  FrAmounts asks;
  for (const ResourceGroup& group : cq.resource_groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      for (const ResourceQuota& r : flavor.resources) {
        if (requests.Has(r.name)) {
          asks[{flavor.flavor, r.name}] = requests.Get(r.name);
        }
      }
    }
  }
  return asks;
}

std::vector<QuotaLevel> QuotaLevels(const QuotaTree& quota,
                                    const std::string& cq,
                                    const FrAmounts& asks) {
  std::vector<QuotaLevel> out;
  const FrAmounts borrowed = quota.Borrowed(cq);
  for (const auto& [fr, amount] : asks) {
    for (const std::string& node : quota.PathToRoot(cq)) {
      QuotaLevel level{.node = node,
                       .fr = fr,
                       .nominal = quota.Nominal(node, fr),
                       .used = quota.Usage(node, fr),
                       .asks = amount};
      if (node == cq) {
        level.available = quota.Available(cq, fr);
        level.most_ever = quota.MaxAvailable(cq, fr);
        auto it = borrowed.find(fr);
        level.borrowed = it == borrowed.end() ? 0 : it->second;
        level.borrowing_limit = quota.BorrowingLimit(cq, fr);
      } else {
        level.cohort = true;
        level.node = std::string(absl::StripPrefix(node, Sv(kCohortPrefix)));
      }
      out.push_back(std::move(level));
    }
  }
  return out;
}

// Every node's answer to the workload's first member, grouped by answer.
// One member speaks for the gang: members of one gang are alike as a rule,
// and the groups say where a member could go at all, not how the gang
// would be laid out.
// On a node with DRA devices that refused the member, a member with claims
// also hears how the devices stand against its requests (`demand`).
std::vector<NodeGroup> PlacementGroups(const ClusterModel& model,
                                       const Workload& w,
                                       const DraDemand& demand) {
  const std::vector<const Pod*> members = w.MembersToAdmit();
  if (members.empty() || w.admitted()) return {};
  const PodView member = PodView::Of(*members.front());
  std::map<std::string, NodeGroup> by_verdict;
  for (const NodeState* node : model.SortedNodes()) {
    const FitVerdict verdict = CheckPodOnNode(member, *node);
    const std::string reason = verdict.fits() ? "fits" : verdict.reason();
    const DraNodeDevices* devices = node->node().dra_devices.get();
    std::string dra;
    if (!verdict.fits() && devices != nullptr && !demand.requests.empty()) {
      dra = DraNodeShortage(demand, *devices);
    }
    NodeGroup& group = by_verdict[absl::StrCat(reason, "\n", dra)];
    group.verdict = reason;
    group.dra = std::move(dra);
    ++group.nodes;
    if (group.examples.size() < kExamplesPerGroup) {
      group.examples.push_back(node->name());
    }
  }
  std::vector<NodeGroup> out;
  for (auto& [verdict, group] : by_verdict) out.push_back(std::move(group));
  std::stable_sort(
      out.begin(), out.end(),
      [](const NodeGroup& a, const NodeGroup& b) { return a.nodes > b.nodes; });
  return out;
}

std::string_view WithinName(WithinClusterQueue policy) {
  switch (policy) {
    case WithinClusterQueue::kNever:
      return "Never";
    case WithinClusterQueue::kLowerPriority:
      return "LowerPriority";
    case WithinClusterQueue::kLowerOrNewerEqualPriority:
      return "LowerOrNewerEqualPriority";
  }
  return "Never";
}

std::string_view ReclaimName(ReclaimWithinCohort policy) {
  switch (policy) {
    case ReclaimWithinCohort::kNever:
      return "Never";
    case ReclaimWithinCohort::kLowerPriority:
      return "LowerPriority";
    case ReclaimWithinCohort::kAny:
      return "Any";
  }
  return "Never";
}

// The policy in Kueue's words, then what the last attempt did about it.
std::string PreemptionText(const ClusterQueue& cq, const Workload& w,
                           ReasonCode code, const std::string& message) {
  const PreemptionPolicy& p = cq.preemption;
  std::string text = absl::StrCat(
      "ClusterQueue ", cq.name, " may preempt: withinClusterQueue ",
      Sv(WithinName(p.within_cluster_queue)), ", reclaimWithinCohort ",
      Sv(ReclaimName(p.reclaim_within_cohort)), ", borrowWithinCohort ",
      p.borrow_within_cohort == BorrowWithinCohort::kNever ? "Never"
                                                           : "LowerPriority");
  if (code == ReasonCode::kPreempting) {
    absl::StrAppend(&text, "; preempting now: ", message);
  } else if (w.state == Workload::State::kPending &&
             p.within_cluster_queue == WithinClusterQueue::kNever &&
             p.reclaim_within_cohort == ReclaimWithinCohort::kNever) {
    absl::StrAppend(&text, "; so it waits for running workloads to finish");
  }
  return text;
}

}  // namespace

std::string_view PreemptionVerdictName(PreemptionPreview::Verdict verdict) {
  switch (verdict) {
    case PreemptionPreview::Verdict::kNotAllowed:
      return "NotAllowed";
    case PreemptionPreview::Verdict::kNoCandidates:
      return "NoCandidates";
    case PreemptionPreview::Verdict::kCannotFit:
      return "CannotFit";
    case PreemptionPreview::Verdict::kBlockedByBudget:
      return "BlockedByBudget";
    case PreemptionPreview::Verdict::kFitsWithout:
      return "FitsWithoutPreemption";
    case PreemptionPreview::Verdict::kWouldEvict:
      return "WouldEvict";
  }
  return "NotAllowed";
}

absl::StatusOr<WorkloadExplanation> ExplainWorkload(
    const QueueingEngine& engine, const ClusterModel& model,
    std::string_view key, const DraLookup& dra) {
  auto it = engine.workloads().find(std::string(key));
  if (it == engine.workloads().end()) {
    return absl::NotFoundError(
        absl::StrCat("gpusched's queues hold no workload ", Sv(key)));
  }
  const Workload& w = it->second;
  WorkloadExplanation out{.key = w.key,
                          .namespace_name = w.namespace_name,
                          .local_queue = w.local_queue,
                          .cluster_queue = w.cluster_queue,
                          .state = StateOf(w),
                          .code = engine.PendingCode(w),
                          .message = engine.WaitingSentence(w),
                          .members = static_cast<int>(w.pods.size()),
                          .min_member = w.min_member};
  AddPositions(engine, w, out);
  if (const ClusterQueue* cq =
          FindClusterQueue(engine.policy(), w.cluster_queue)) {
    out.cohort = cq->cohort;
    out.quota = QuotaLevels(engine.quota(), cq->name, AsksOf(w, *cq));
    out.preemption = PreemptionText(*cq, w, out.code, out.message);
  }
  DraDemand demand;
  out.dra = ExplainWorkloadDra(
      w, model, dra, engine.policy().config.device_class_mappings, demand);
  out.placement = PlacementGroups(model, w, demand);
  return out;
}

}  // namespace gpusched
