#include "queueing/quota_flavors.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "queueing/flavor_fungibility.h"
#include "scheduler/node_predicates.h"

namespace gpusched {
namespace {

// More than the queue could take with every queue of its cohort idle can
// never fit; less waits for quota to be given back.
WaitReason QuotaShortfall(const QuotaTree& quota, const std::string& cq,
                          const FlavorResource& fr, int64_t need) {
  auto format = [&](int64_t amount) {
    return ResourceList::FormatAmount(fr.resource, amount);
  };
  const int64_t nominal = quota.Nominal(cq, fr);
  const int64_t own_free = std::max<int64_t>(0, nominal - quota.Usage(cq, fr));
  const int64_t lend = std::max<int64_t>(0, quota.Available(cq, fr) - own_free);
  std::string text = absl::StrCat(
      "queue ", cq, ": needs ", format(need), " ", fr.resource, " of flavor ",
      fr.flavor, "; ", format(own_free), " free of nominal ", format(nominal),
      ", cohort has ", format(lend), " to lend");
  // When the ClusterQueue's own borrowingLimit binds, say so: the cohort
  // may have more unused quota than the queue is allowed to take.
  const int64_t unlimited_lend = std::max<int64_t>(
      0, quota.AvailableWithoutBorrowingLimit(cq, fr) - own_free);
  if (auto limit = quota.BorrowingLimit(cq, fr);
      limit && unlimited_lend > lend) {
    absl::StrAppend(&text, " (borrowingLimit ", format(*limit), " reached; ",
                    format(unlimited_lend), " unused in the cohort)");
  }
  return {need > quota.MaxAvailable(cq, fr) ? ReasonCode::kExceedsMaxQuota
                                            : ReasonCode::kWaitingForQuota,
          std::move(text)};
}

// What must be free for the workload to take `demand`: the demand itself,
// raised to Volcano's minResources before a gang's first admission (a
// gang whose queue cannot hold its declared minimum does not start).
FrAmounts QuotaToCheck(const Workload& w, const ResourceGroup& group,
                       const std::string& flavor, const FrAmounts& demand) {
  if (w.admitted() || w.min_resources.entries().empty()) return demand;
  FrAmounts check = demand;
  for (const std::string& r : group.covered_resources) {
    const int64_t minimum = w.min_resources.Get(r);
    int64_t& need = check[{flavor, r}];
    need = std::max(need, minimum);
    if (need == 0) check.erase({flavor, r});
  }
  return check;
}

}  // namespace

namespace {

// What the group's covered resources ask of `flavor`.
FrAmounts GroupDemand(const ResourceGroup& group, const std::string& flavor,
                      const ResourceList& total) {
  FrAmounts demand;
  for (const std::string& r : group.covered_resources) {
    if (total.Get(r) > 0) demand[{flavor, r}] = total.Get(r);
  }
  return demand;
}

bool Tolerated(const ResourceFlavor& flavor,
               const std::vector<const Pod*>& pods) {
  auto tolerates = [](const std::vector<Toleration>& list, const Taint& taint) {
    return std::any_of(list.begin(), list.end(), [&](const Toleration& t) {
      return Tolerates(t, taint);
    });
  };
  for (const Taint& taint : flavor.node_taints) {
    for (const Pod* pod : pods) {
      if (!tolerates(flavor.tolerations, taint) &&
          !tolerates(pod->tolerations, taint)) {
        return false;
      }
    }
  }
  return true;
}

bool Lists(const ResourceGroup& group, const std::string& flavor) {
  return std::any_of(group.flavors.begin(), group.flavors.end(),
                     [&](const FlavorQuotas& f) { return f.flavor == flavor; });
}

bool Covers(const ResourceGroup& group, const std::string& resource) {
  return std::find(group.covered_resources.begin(),
                   group.covered_resources.end(),
                   resource) != group.covered_resources.end();
}

// The resource the queue's groups do not cover, or "" when all are.
std::string UncoveredResource(const ClusterQueue& cq,
                              const ResourceList& total) {
  for (const auto& [resource, amount] : total.entries()) {
    if (amount <= 0 || resource == kPods) continue;
    bool covered = false;
    for (const ResourceGroup& g : cq.resource_groups) {
      covered |= Covers(g, resource);
    }
    if (!covered) return resource;
  }
  return "";
}

}  // namespace

const ResourceGroup* FungibleGroup(
    const ClusterQueue& cq,
    const std::function<bool(const std::string& resource)>& requested) {
  for (const ResourceGroup& group : cq.resource_groups) {
    if (group.flavors.size() < 2) continue;
    for (const std::string& r : group.covered_resources) {
      if (requested(r)) return &group;
    }
  }
  return nullptr;
}

int QuotaFlavors::BorrowHeightOfChoice(const QuotaTree& quota,
                                       const std::string& queue,
                                       const FrAmounts& first_demand) const {
  const ClusterQueue* cq = ClusterQueueNamed(queue);
  const ResourceGroup* group =
      cq == nullptr ? nullptr : FungibleGroup(*cq, [&](const std::string& r) {
        return std::any_of(
            first_demand.begin(), first_demand.end(),
            [&](const auto& e) { return e.first.resource == r; });
      });
  if (group == nullptr) return quota.BorrowHeight(queue, first_demand);
  FlavorSearch search(cq->flavor_fungibility);
  for (size_t i = 0; i < group->flavors.size(); ++i) {
    FrAmounts demand;
    for (const auto& [fr, amount] : first_demand) {
      const bool in_group = Covers(*group, fr.resource);
      demand[{in_group ? group->flavors[i].flavor : fr.flavor, fr.resource}] =
          amount;
    }
    if (!quota.Fits(queue, demand)) continue;
    const FlavorVerdict verdict{FlavorMode::kFit,
                                quota.BorrowHeight(queue, demand)};
    if (search.Offer(i, verdict)) break;
  }
  return search.best() ? search.best_verdict().borrow_height
                       : quota.BorrowHeight(queue, first_demand);
}

const ResourceFlavor* FindFlavor(const Policy& policy,
                                 const std::string& name) {
  for (const ResourceFlavor& f : policy.flavors) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

const std::vector<std::string>& TopologyLevelsOf(const Policy& policy,
                                                 const ResourceFlavor* flavor) {
  if (flavor != nullptr && !flavor->topology_name.empty()) {
    for (const Topology& topology : policy.topologies) {
      if (topology.name == flavor->topology_name) return topology.levels;
    }
  }
  return policy.config.topology_levels;
}

void QuotaFlavors::Rebuild(const Policy& policy, const QuotaTree& quota) {
  cluster_queue_by_name_.clear();
  for (const ClusterQueue& cq : policy.cluster_queues) {
    cluster_queue_by_name_.emplace(cq.name, &cq);
  }
  root_of_queue_.clear();
  queues_of_root_.clear();
  borrowing_by_root_.clear();
  for (const std::string& cq : quota.ClusterQueueNames()) {
    std::vector<std::string> path = quota.PathToRoot(cq);
    // A ClusterQueue without a cohort shares with nobody.
    if (path.size() > 1) {
      root_of_queue_[cq] = path.back();
      queues_of_root_[path.back()].push_back(cq);
    }
  }
}

const ClusterQueue* QuotaFlavors::ClusterQueueNamed(
    const std::string& name) const {
  auto it = cluster_queue_by_name_.find(name);
  return it == cluster_queue_by_name_.end() ? nullptr : it->second;
}

const std::string& QuotaFlavors::TreeOf(const std::string& cq) const {
  const std::string* root = RootOf(cq);
  return root == nullptr ? cq : *root;
}

const std::string* QuotaFlavors::RootOf(const std::string& cq) const {
  auto root = root_of_queue_.find(cq);
  return root == root_of_queue_.end() ? nullptr : &root->second;
}

const std::vector<const std::string*>& QuotaFlavors::BorrowingQueuesOf(
    const QuotaTree& quota, const std::string& root) {
  BorrowingQueues& cached = borrowing_by_root_[root];
  if (cached.usage_version != quota.usage_version() || !cached.valid) {
    cached.queues.clear();
    for (const std::string& queue : queues_of_root_[root]) {
      if (quota.IsBorrowing(queue)) cached.queues.push_back(&queue);
    }
    cached.usage_version = quota.usage_version();
    cached.valid = true;
  }
  return cached.queues;
}

FrAmounts QuotaFlavors::FirstFlavorDemand(const Workload& w) const {
  return DemandWith(w, "");
}

FrAmounts QuotaFlavors::DemandWith(const Workload& w,
                                   const std::string& flavor) const {
  FrAmounts demand;
  const ClusterQueue* cq = ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) return demand;
  ResourceList total = TotalRequests(w.MembersToAdmit());
  for (const ResourceGroup& g : cq->resource_groups) {
    if (g.flavors.empty()) continue;
    const std::string& chosen = Lists(g, flavor) ? flavor : g.flavors[0].flavor;
    for (auto& [key, amount] : GroupDemand(g, chosen, total)) {
      demand[key] = amount;
    }
  }
  return demand;
}

WaitReason QuotaFlavors::QuotaFits(const QuotaTree& quota, const Workload& w,
                                   const ClusterQueue& cq,
                                   const ResourceGroup& group,
                                   const std::string& flavor,
                                   const FrAmounts& demand) const {
  for (const auto& [fr, need] : QuotaToCheck(w, group, flavor, demand)) {
    if (need > quota.Available(cq.name, fr)) {
      return QuotaShortfall(quota, cq.name, fr, need);
    }
  }
  return {};
}

// Why `flavor` cannot take the demand: its taints, or its quota; empty
// when it can.
WaitReason QuotaFlavors::FlavorRefusal(
    const Policy& policy, const QuotaTree& quota, const Workload& w,
    const ClusterQueue& cq, const ResourceGroup& group,
    const std::string& flavor, const std::vector<const Pod*>& members,
    const FrAmounts& demand) const {
  const ResourceFlavor* found = FindFlavor(policy, flavor);
  if (found != nullptr && !Tolerated(*found, members)) {
    return {ReasonCode::kNoMatchingFlavor,
            absl::StrCat("flavor ", flavor,
                         ": the pods do not tolerate its node taints")};
  }
  return QuotaFits(quota, w, cq, group, flavor, demand);
}

FlavorChoices QuotaFlavors::Choose(const Policy& policy, const QuotaTree& quota,
                                   const Workload& w,
                                   const std::vector<const Pod*>& members,
                                   const std::string* only_flavor) const {
  FlavorChoices choices;
  const ClusterQueue* cq = ClusterQueueNamed(w.cluster_queue);
  if (cq == nullptr) {
    choices.why = {
        ReasonCode::kNoMatchingFlavor,
        absl::StrCat("ClusterQueue ", w.cluster_queue, " does not exist")};
    return choices;
  }
  const ResourceList total = TotalRequests(members);
  if (std::string r = UncoveredResource(*cq, total); !r.empty()) {
    choices.why = {ReasonCode::kNoMatchingFlavor,
                   absl::StrCat("queue ", cq->name, ": resource ", r,
                                " is not covered by its resourceGroups")};
    return choices;
  }
  for (const ResourceGroup& g : cq->resource_groups) {
    std::vector<FlavorOption> fitting;
    bool requested = false;
    const bool pinned = only_flavor != nullptr && Lists(g, *only_flavor);
    for (const FlavorQuotas& f : g.flavors) {
      if (pinned && f.flavor != *only_flavor) continue;
      FrAmounts demand = GroupDemand(g, f.flavor, total);
      requested = !demand.empty();
      WaitReason refused =
          FlavorRefusal(policy, quota, w, *cq, g, f.flavor, members, demand);
      if (refused.empty()) {
        fitting.push_back({&f, std::move(demand)});
      } else if (choices.why.empty()) {
        choices.why = std::move(refused);
      }
    }
    if (!requested) continue;
    if (fitting.empty()) return choices;
    choices.groups.push_back(std::move(fitting));
  }
  choices.fits = true;
  return choices;
}

}  // namespace gpusched
