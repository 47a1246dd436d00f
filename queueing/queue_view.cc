#include "queueing/queue_view.h"

#include <algorithm>
#include <iterator>
#include <list>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "queueing/engine.h"
#include "queueing/pending_classes.h"

namespace gpusched {
namespace {

constexpr std::string_view kCohortPrefix = "cohort:";

std::string_view NameAfterSlash(std::string_view key) {
  const size_t slash = key.find('/');
  return slash == std::string_view::npos ? key : key.substr(slash + 1);
}

WorkloadRef::Kind KindOf(const Workload& w) {
  if (w.pods.empty()) return WorkloadRef::Kind::kSinglePod;
  return WorkloadOf(w.pods.begin()->second).kind;
}

// Waiting for room it has asked for, or not looked at yet, is active; any
// other code says admission looked and could not admit it now.
PendingStatus StatusOf(ReasonCode code) {
  return code == ReasonCode::kNone || code == ReasonCode::kPreempting
             ? PendingStatus::kActive
             : PendingStatus::kInadmissible;
}

// The quota lines a policy's resource groups declare, by flavor-resource.
void AddQuotaLines(const std::vector<ResourceGroup>& groups,
                   std::map<FlavorResource, QuotaUsage>& lines) {
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      for (const ResourceQuota& r : flavor.resources) {
        QuotaUsage& line = lines[{flavor.flavor, r.name}];
        line.fr = {flavor.flavor, r.name};
        line.nominal += r.nominal;
        line.borrowing_limit = r.borrowing_limit;
        line.lending_limit = r.lending_limit;
      }
    }
  }
}

std::vector<QuotaUsage> Lines(std::map<FlavorResource, QuotaUsage> lines) {
  std::vector<QuotaUsage> out;
  out.reserve(lines.size());
  for (auto& [fr, line] : lines) {
    line.borrowed = std::max<int64_t>(0, line.used - line.nominal);
    out.push_back(std::move(line));
  }
  return out;
}

PendingWorkload PendingOf(const QueueingEngine& engine, const Workload& w) {
  const ReasonCode code = engine.PendingCode(w);
  return PendingWorkload{.key = w.key,
                         .namespace_name = w.namespace_name,
                         .name = std::string(NameAfterSlash(w.key)),
                         .kind = KindOf(w),
                         .local_queue = w.local_queue,
                         .cluster_queue = w.cluster_queue,
                         .priority = w.priority,
                         .created_ms = w.created_ms,
                         .pending_since_ms = w.pending_since_ms,
                         .status = StatusOf(code),
                         .code = code,
                         .message = engine.WaitingSentence(w),
                         .members = static_cast<int>(w.pods.size()),
                         .min_member = w.min_member,
                         .requests = TotalRequests(w.MembersToAdmit()),
                         .reserved = w.check_reservation
                                         ? w.check_reservation->amounts
                                         : FrAmounts{}};
}

AdmittedWorkload AdmittedOf(const Workload& w) {
  std::vector<std::string> members;
  members.reserve(w.placements.size());
  for (const auto& [pod, placement] : w.placements) members.push_back(pod);
  return AdmittedWorkload{.key = w.key,
                          .namespace_name = w.namespace_name,
                          .name = std::string(NameAfterSlash(w.key)),
                          .kind = KindOf(w),
                          .local_queue = w.local_queue,
                          .cluster_queue = w.cluster_queue,
                          .priority = w.priority,
                          .admitted_at_ms = w.RunStartMs(),
                          .placed = static_cast<int>(w.placements.size()),
                          .bound = static_cast<int>(w.bound.size()),
                          .charged = w.charged,
                          .members = std::move(members)};
}

// Pending in admission order, with positions in the ClusterQueue and in
// each LocalQueue, counted from 0.
std::vector<PendingWorkload> PendingInOrder(const QueueingEngine& engine,
                                            const std::string& cq) {
  std::vector<PendingWorkload> out;
  std::map<std::string, size_t> in_local_queue;
  for (const Workload* w : engine.PendingOrder(cq)) {
    PendingWorkload pending = PendingOf(engine, *w);
    pending.position_in_cluster_queue = out.size();
    pending.position_in_local_queue =
        in_local_queue[w->namespace_name + "/" + w->local_queue]++;
    out.push_back(std::move(pending));
  }
  return out;
}

ClusterQueueView ClusterQueueOf(const QueueingEngine& engine,
                                const ClusterQueue& cq) {
  ClusterQueueView view{.name = cq.name, .cohort = cq.cohort};
  std::map<FlavorResource, QuotaUsage> lines;
  AddQuotaLines(cq.resource_groups, lines);
  for (auto& [fr, line] : lines) line.used = engine.quota().Usage(cq.name, fr);
  for (const auto& [fr, used] : engine.quota().UsageOf(cq.name)) {
    if (!lines.contains(fr)) lines[fr] = {.fr = fr, .used = used};
  }
  view.quota = Lines(std::move(lines));
  view.pending = PendingInOrder(engine, cq.name);
  if (engine.policy().config.fair_sharing) {
    view.weighted_share = engine.quota().WeightedShare(cq.name);
  }
  return view;
}

// A cohort's lines: its own quota, and its children's nominal and usage
// added up. `children` are the views directly below it.
std::vector<QuotaUsage> CohortLines(
    const std::vector<ResourceGroup>& own,
    const std::vector<const std::vector<QuotaUsage>*>& children) {
  std::map<FlavorResource, QuotaUsage> lines;
  AddQuotaLines(own, lines);
  for (const std::vector<QuotaUsage>* child : children) {
    for (const QuotaUsage& line : *child) {
      QuotaUsage& sum = lines[line.fr];
      sum.fr = line.fr;
      sum.nominal += line.nominal;
      sum.used += line.used;
    }
  }
  std::vector<QuotaUsage> out = Lines(std::move(lines));
  for (QuotaUsage& line : out) {  // limits are the children's, not its own
    line.borrowing_limit.reset();
    line.lending_limit.reset();
  }
  return out;
}

}  // namespace

namespace {

// What the cohort's borrowers use of its children's unused quota, split
// among the children that leave some unused, in proportion to it.
void SplitLending(const std::vector<std::vector<QuotaUsage>*>& children) {
  std::map<FlavorResource, std::pair<int64_t, int64_t>> borrowed_unused;
  auto unused = [](const QuotaUsage& line) {
    const int64_t cap = line.lending_limit.value_or(line.nominal);
    return std::min(cap, std::max<int64_t>(0, line.nominal - line.used));
  };
  for (const std::vector<QuotaUsage>* child : children) {
    for (const QuotaUsage& line : *child) {
      borrowed_unused[line.fr].first += line.borrowed;
      borrowed_unused[line.fr].second += unused(line);
    }
  }
  for (std::vector<QuotaUsage>* child : children) {
    for (QuotaUsage& line : *child) {
      const auto [borrowed, total_unused] = borrowed_unused[line.fr];
      if (total_unused == 0) continue;
      line.lent =
          std::min(borrowed, total_unused) * unused(line) / total_unused;
    }
  }
}

// Builds the views of the cohorts above the ClusterQueues, children
// before parents, so each cohort adds up its children's lines and splits
// what its borrowers use among its lenders.
class CohortBuilder {
 public:
  CohortBuilder(const QueueingEngine& engine,
                std::vector<ClusterQueueView>& cluster_queues)
      : engine_(engine), cluster_queues_(cluster_queues) {
    for (const Cohort& cohort : engine.policy().cohorts) {
      own_[cohort.name] = &cohort.resource_groups;
    }
  }

  std::vector<CohortView> Build() && {
    std::set<std::string> roots;
    for (const ClusterQueueView& cq : cluster_queues_) {
      const std::vector<std::string> path = engine_.quota().PathToRoot(cq.name);
      if (path.size() > 1) roots.insert(path.back());
    }
    for (const std::string& root : roots) Visit(root);
    std::vector<CohortView> out(std::make_move_iterator(cohorts_.begin()),
                                std::make_move_iterator(cohorts_.end()));
    std::sort(out.begin(), out.end(),
              [](const CohortView& a, const CohortView& b) {
                return a.name < b.name;
              });
    return out;
  }

 private:
  std::vector<QuotaUsage>* LinesOfClusterQueue(const std::string& name) {
    for (ClusterQueueView& cq : cluster_queues_) {
      if (cq.name == name) return &cq.quota;
    }
    return nullptr;
  }

  // The cohort's quota lines, once its children's are built.
  std::vector<QuotaUsage>* Visit(const std::string& node) {
    std::vector<std::vector<QuotaUsage>*> children;
    for (const std::string& cq : engine_.quota().ChildClusterQueues(node)) {
      if (std::vector<QuotaUsage>* lines = LinesOfClusterQueue(cq)) {
        children.push_back(lines);
      }
    }
    for (const std::string& cohort : engine_.quota().ChildCohorts(node)) {
      children.push_back(Visit(cohort));
    }
    SplitLending(children);
    const std::string name = node.substr(kCohortPrefix.size());
    const std::string parent = engine_.quota().Parent(node);
    static const std::vector<ResourceGroup> kNoQuota;
    auto own = own_.find(name);
    cohorts_.push_back(CohortView{
        .name = name,
        .parent = parent.empty() ? "" : parent.substr(kCohortPrefix.size()),
        .quota = CohortLines(own == own_.end() ? kNoQuota : *own->second,
                             {children.begin(), children.end()})});
    return &cohorts_.back().quota;
  }

  const QueueingEngine& engine_;
  std::vector<ClusterQueueView>& cluster_queues_;
  std::map<std::string, const std::vector<ResourceGroup>*> own_;
  std::list<CohortView> cohorts_;  // stable while parents read children
};

}  // namespace

namespace {

std::vector<LocalQueueView> LocalQueuesOf(
    const QueueingEngine& engine, const std::vector<ClusterQueueView>& cqs) {
  std::map<std::pair<std::string, std::string>, LocalQueueView> by_name;
  const std::map<std::string, AfsQueueUsage>& usages = engine.AfsUsages();
  for (const LocalQueue& lq : engine.policy().local_queues) {
    LocalQueueView& view = by_name[{lq.namespace_name, lq.name}];
    view = {.namespace_name = lq.namespace_name,
            .name = lq.name,
            .cluster_queue = lq.cluster_queue};
    auto usage = usages.find(absl::StrCat(lq.namespace_name, "/", lq.name));
    if (usage != usages.end()) view.admission_fair_sharing = usage->second;
  }
  for (const ClusterQueueView& cq : cqs) {
    for (const PendingWorkload& w : cq.pending) {
      auto it = by_name.find({w.namespace_name, w.local_queue});
      if (it == by_name.end()) continue;
      ++it->second.pending;
      if (!w.reserved.empty()) ++it->second.reserving;
    }
    for (const AdmittedWorkload& w : cq.admitted) {
      auto it = by_name.find({w.namespace_name, w.local_queue});
      if (it != by_name.end()) ++it->second.admitted;
    }
  }
  std::vector<LocalQueueView> out;
  for (auto& [name, view] : by_name) out.push_back(std::move(view));
  return out;
}

void AddAdmitted(const QueueingEngine& engine,
                 std::vector<ClusterQueueView>& cqs) {
  std::map<std::string, ClusterQueueView*> by_name;
  for (ClusterQueueView& cq : cqs) by_name[cq.name] = &cq;
  for (const auto& [key, w] : engine.workloads()) {
    if (!w.admitted()) continue;
    auto it = by_name.find(w.cluster_queue);
    if (it != by_name.end()) it->second->admitted.push_back(AdmittedOf(w));
  }
}

}  // namespace

std::string_view PendingStatusName(PendingStatus status) {
  return status == PendingStatus::kActive ? "active" : "inadmissible";
}

size_t ClusterQueueView::PendingWith(PendingStatus status) const {
  return std::count_if(
      pending.begin(), pending.end(),
      [&](const PendingWorkload& w) { return w.status == status; });
}

QueueView BuildQueueView(const QueueingEngine& engine, uint64_t pass,
                         int64_t now) {
  QueueView view{.built_at_ms = now, .pass = pass};
  for (const ClusterQueue& cq : engine.policy().cluster_queues) {
    view.cluster_queues.push_back(ClusterQueueOf(engine, cq));
  }
  std::sort(view.cluster_queues.begin(), view.cluster_queues.end(),
            [](const ClusterQueueView& a, const ClusterQueueView& b) {
              return a.name < b.name;
            });
  AddAdmitted(engine, view.cluster_queues);
  view.cohorts = CohortBuilder(engine, view.cluster_queues).Build();
  view.local_queues = LocalQueuesOf(engine, view.cluster_queues);
  return view;
}

const ClusterQueueView* QueueView::FindClusterQueue(
    std::string_view name) const {
  for (const ClusterQueueView& cq : cluster_queues) {
    if (cq.name == name) return &cq;
  }
  return nullptr;
}

const LocalQueueView* QueueView::FindLocalQueue(std::string_view namespace_name,
                                                std::string_view name) const {
  for (const LocalQueueView& lq : local_queues) {
    if (lq.namespace_name == namespace_name && lq.name == name) return &lq;
  }
  return nullptr;
}

const CohortView* QueueView::FindCohort(std::string_view name) const {
  for (const CohortView& cohort : cohorts) {
    if (cohort.name == name) return &cohort;
  }
  return nullptr;
}

const PendingWorkload* QueueView::FindPending(std::string_view key) const {
  for (const ClusterQueueView& cq : cluster_queues) {
    for (const PendingWorkload& w : cq.pending) {
      if (w.key == key) return &w;
    }
  }
  return nullptr;
}

std::vector<const PendingWorkload*> QueueView::PendingOf(
    std::string_view namespace_name, std::string_view local_queue) const {
  std::vector<const PendingWorkload*> out;
  for (const ClusterQueueView& cq : cluster_queues) {
    for (const PendingWorkload& w : cq.pending) {
      if (w.namespace_name == namespace_name && w.local_queue == local_queue) {
        out.push_back(&w);
      }
    }
  }
  return out;
}

}  // namespace gpusched
