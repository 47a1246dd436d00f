#include "queueing/quota_tree.h"

#include <algorithm>
#include <climits>
#include <limits>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

std::string CohortKey(std::string_view name) {
  return absl::StrCat("cohort:", Sv(name));
}

int64_t Get(const FrAmounts& amounts, const FlavorResource& fr) {
  auto it = amounts.find(fr);
  return it == amounts.end() ? 0 : it->second;
}

template <typename NodeT>
void AddGroups(NodeT& node, const std::vector<ResourceGroup>& groups) {
  for (const ResourceGroup& group : groups) {
    for (const FlavorQuotas& flavor : group.flavors) {
      for (const ResourceQuota& quota : flavor.resources) {
        FlavorResource fr{flavor.flavor, quota.name};
        node.nominal[fr] += quota.nominal;
        if (quota.borrowing_limit)
          node.borrowing_limit[fr] = *quota.borrowing_limit;
        if (quota.lending_limit) node.lending_limit[fr] = *quota.lending_limit;
      }
    }
  }
}

}  // namespace

int QuotaTree::Find(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

int QuotaTree::FindOrAddCohort(const std::string& name) {
  std::string key = CohortKey(name);
  if (int found = Find(key); found >= 0) return found;
  nodes_.push_back(Node{.name = key});
  index_[key] = static_cast<int>(nodes_.size()) - 1;
  return static_cast<int>(nodes_.size()) - 1;
}

absl::StatusOr<QuotaTree> QuotaTree::Build(const Policy& policy) {
  QuotaTree tree;
  for (const Cohort& cohort : policy.cohorts) {
    int node = tree.FindOrAddCohort(cohort.name);
    AddGroups(tree.nodes_[node], cohort.resource_groups);
    tree.nodes_[node].weight_milli = cohort.fair_weight_milli;
    if (!cohort.parent.empty()) {
      int parent = tree.FindOrAddCohort(cohort.parent);
      tree.nodes_[node].parent = parent;
    }
  }
  for (const ClusterQueue& cq : policy.cluster_queues) {
    if (tree.Find(cq.name) >= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("ClusterQueue \"", cq.name, "\" is defined twice"));
    }
    Node node{.name = cq.name,
              .is_cluster_queue = true,
              .weight_milli = cq.fair_weight_milli};
    AddGroups(node, cq.resource_groups);
    tree.nodes_.push_back(std::move(node));
    const int index = static_cast<int>(tree.nodes_.size()) - 1;
    tree.index_[cq.name] = index;
    if (!cq.cohort.empty()) {
      int parent = tree.FindOrAddCohort(cq.cohort);
      tree.nodes_[index].parent = parent;
    }
  }
  if (absl::Status s = tree.CheckAcyclic(); !s.ok()) return s;
  for (size_t i = 0; i < tree.nodes_.size(); ++i) {
    if (tree.nodes_[i].parent >= 0) {
      tree.nodes_[tree.nodes_[i].parent].children.push_back(
          static_cast<int>(i));
    }
  }
  for (size_t i = 0; i < tree.nodes_.size(); ++i) {
    if (tree.nodes_[i].parent < 0) tree.ComputeSubtree(static_cast<int>(i));
  }
  return tree;
}

absl::Status QuotaTree::CheckAcyclic() const {
  for (size_t start = 0; start < nodes_.size(); ++start) {
    int node = static_cast<int>(start);
    for (size_t steps = 0; node >= 0; ++steps, node = nodes_[node].parent) {
      if (steps > nodes_.size()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cohort parents form a cycle through ", nodes_[start].name));
      }
    }
  }
  return absl::OkStatus();
}

void QuotaTree::ComputeSubtree(int index) {
  Node& node = nodes_[index];
  node.subtree = node.nominal;
  for (int child : node.children) {
    ComputeSubtree(child);
    const Node& c = nodes_[child];
    for (const auto& [fr, amount] : c.subtree) {
      nodes_[index].subtree[fr] += amount - Guaranteed(c, fr);
    }
  }
}

int64_t QuotaTree::Guaranteed(const Node& node,
                              const FlavorResource& fr) const {
  auto it = node.lending_limit.find(fr);
  if (it == node.lending_limit.end()) return 0;
  return std::max<int64_t>(0, Get(node.subtree, fr) - it->second);
}

int64_t QuotaTree::AvailableAt(int index, const FlavorResource& fr) const {
  const Node& node = nodes_[index];
  const int64_t usage = Get(node.usage, fr);
  if (node.parent < 0) return Get(node.subtree, fr) - usage;
  const int64_t guaranteed = Guaranteed(node, fr);
  const int64_t local = std::max<int64_t>(0, guaranteed - usage);
  int64_t from_parent = AvailableAt(node.parent, fr);
  if (auto it = node.borrowing_limit.find(fr);
      it != node.borrowing_limit.end()) {
    const int64_t stored_in_parent = Get(node.subtree, fr) - guaranteed;
    const int64_t used_in_parent = std::max<int64_t>(0, usage - guaranteed);
    from_parent =
        std::min(from_parent, stored_in_parent - used_in_parent + it->second);
  }
  return local + std::max<int64_t>(0, from_parent);
}

// AvailableAt with every usage zero.
int64_t QuotaTree::MaxAvailableAt(int index, const FlavorResource& fr) const {
  const Node& node = nodes_[index];
  if (node.parent < 0) return Get(node.subtree, fr);
  const int64_t guaranteed = Guaranteed(node, fr);
  int64_t from_parent = MaxAvailableAt(node.parent, fr);
  if (auto it = node.borrowing_limit.find(fr);
      it != node.borrowing_limit.end()) {
    from_parent =
        std::min(from_parent, Get(node.subtree, fr) - guaranteed + it->second);
  }
  return guaranteed + std::max<int64_t>(0, from_parent);
}

int64_t QuotaTree::MaxAvailable(std::string_view cq,
                                const FlavorResource& fr) const {
  int index = Find(cq);
  return index < 0 ? 0 : MaxAvailableAt(index, fr);
}

void QuotaTree::AddAt(int index, const FlavorResource& fr, int64_t amount) {
  Node& node = nodes_[index];
  const int64_t local =
      std::max<int64_t>(0, Guaranteed(node, fr) - Get(node.usage, fr));
  node.usage[fr] += amount;
  if (node.parent >= 0 && amount > local)
    AddAt(node.parent, fr, amount - local);
}

void QuotaTree::RemoveAt(int index, const FlavorResource& fr, int64_t amount) {
  Node& node = nodes_[index];
  const int64_t stored = Get(node.usage, fr) - Guaranteed(node, fr);
  node.usage[fr] -= amount;
  if (node.parent >= 0 && stored > 0) {
    RemoveAt(node.parent, fr, std::min(amount, stored));
  }
}

bool QuotaTree::HasClusterQueue(std::string_view name) const {
  int index = Find(name);
  return index >= 0 && nodes_[index].is_cluster_queue;
}

std::vector<std::string> QuotaTree::ClusterQueueNames() const {
  std::vector<std::string> names;
  for (const auto& [name, index] : index_) {
    if (nodes_[index].is_cluster_queue) names.push_back(name);
  }
  return names;
}

std::vector<std::string> QuotaTree::PathToRoot(std::string_view cq) const {
  std::vector<std::string> path;
  for (int node = Find(cq); node >= 0; node = nodes_[node].parent) {
    path.push_back(nodes_[node].name);
  }
  return path;
}

int64_t QuotaTree::Nominal(std::string_view node,
                           const FlavorResource& fr) const {
  int index = Find(node);
  return index < 0 ? 0 : Get(nodes_[index].nominal, fr);
}

int64_t QuotaTree::Usage(std::string_view node,
                         const FlavorResource& fr) const {
  int index = Find(node);
  return index < 0 ? 0 : Get(nodes_[index].usage, fr);
}

int64_t QuotaTree::Available(std::string_view cq,
                             const FlavorResource& fr) const {
  int index = Find(cq);
  return index < 0 ? 0 : AvailableAt(index, fr);
}

bool QuotaTree::Fits(std::string_view cq, const FrAmounts& demand) const {
  int index = Find(cq);
  if (index < 0) return false;
  for (const auto& [fr, amount] : demand) {
    if (amount > 0 && amount > AvailableAt(index, fr)) return false;
  }
  return true;
}

bool QuotaTree::WouldBorrow(std::string_view cq,
                            const FrAmounts& demand) const {
  int index = Find(cq);
  if (index < 0) return false;
  const Node& node = nodes_[index];
  for (const auto& [fr, amount] : demand) {
    if (amount > 0 && Get(node.usage, fr) + amount > Get(node.subtree, fr)) {
      return true;
    }
  }
  return false;
}

FrAmounts QuotaTree::Borrowed(std::string_view cq) const {
  FrAmounts borrowed;
  int index = Find(cq);
  if (index < 0) return borrowed;
  const Node& node = nodes_[index];
  for (const auto& [fr, usage] : node.usage) {
    const int64_t over = usage - Get(node.subtree, fr);
    if (over > 0) borrowed[fr] = over;
  }
  return borrowed;
}

bool QuotaTree::IsBorrowing(std::string_view cq) const {
  int index = Find(cq);
  if (index < 0) return false;
  const Node& node = nodes_[index];
  for (const auto& [fr, usage] : node.usage) {
    if (usage > Get(node.subtree, fr)) return true;
  }
  return false;
}

void QuotaTree::AddUsage(std::string_view cq, const FrAmounts& amounts) {
  ++usage_version_;
  int index = Find(cq);
  if (index < 0) return;
  for (const auto& [fr, amount] : amounts) {
    if (amount != 0) AddAt(index, fr, amount);
  }
}

void QuotaTree::RemoveUsage(std::string_view cq, const FrAmounts& amounts) {
  ++usage_version_;
  int index = Find(cq);
  if (index < 0) return;
  for (const auto& [fr, amount] : amounts) {
    if (amount != 0) RemoveAt(index, fr, amount);
  }
}

int QuotaTree::Root(int node) const {
  while (nodes_[node].parent >= 0) node = nodes_[node].parent;
  return node;
}

int64_t QuotaTree::WeightedShare(std::string_view name,
                                 const FrAmounts& extra) const {
  int index = Find(name);
  if (index < 0 || nodes_[index].parent < 0) return 0;
  const Node& node = nodes_[index];
  const Node& root = nodes_[Root(index)];
  // Per resource (summed over flavors): borrowed and the root's capacity.
  std::map<std::string, std::pair<int64_t, int64_t>> per_resource;
  for (const auto& [fr, capacity] : root.subtree) {
    per_resource[fr.resource].second += capacity;
  }
  FrAmounts usage = node.usage;
  for (const auto& [fr, amount] : extra) usage[fr] += amount;
  for (const auto& [fr, used] : usage) {
    const int64_t over = used - Get(node.subtree, fr);
    if (over > 0) per_resource[fr.resource].first += over;
  }
  int64_t dominant = 0;
  for (const auto& [resource, totals] : per_resource) {
    const auto& [borrowed, lendable] = totals;
    if (borrowed <= 0) continue;
    dominant = std::max(
        dominant, lendable <= 0 ? INT64_MAX / 2 : borrowed * 1000 / lendable);
  }
  if (dominant == 0) return 0;
  if (node.weight_milli == 0) return INT64_MAX;
  return dominant * 1000 / node.weight_milli;
}

int64_t QuotaTree::WeightedShareWithDemand(std::string_view cluster_queue,
                                           std::string_view ancestor,
                                           const FrAmounts& demand) const {
  FrAmounts passed = demand;
  for (int index = Find(cluster_queue); index >= 0;
       index = nodes_[index].parent) {
    const Node& node = nodes_[index];
    if (node.name == ancestor) return WeightedShare(ancestor, passed);
    FrAmounts upward;
    for (const auto& [fr, amount] : passed) {
      const int64_t usage = Get(node.usage, fr);
      const int64_t guaranteed = Guaranteed(node, fr);
      const int64_t stored_before = std::max<int64_t>(0, usage - guaranteed);
      const int64_t stored_after =
          std::max<int64_t>(0, usage + amount - guaranteed);
      if (stored_after > stored_before)
        upward[fr] = stored_after - stored_before;
    }
    passed = std::move(upward);
  }
  return 0;
}

int64_t QuotaTree::AvailableWithoutBorrowingLimit(
    std::string_view cluster_queue, const FlavorResource& fr) const {
  int index = Find(cluster_queue);
  if (index < 0) return 0;
  const Node& node = nodes_[index];
  if (node.parent < 0) return AvailableAt(index, fr);
  const int64_t local =
      std::max<int64_t>(0, Guaranteed(node, fr) - Get(node.usage, fr));
  return local + std::max<int64_t>(0, AvailableAt(node.parent, fr));
}

std::optional<int64_t> QuotaTree::BorrowingLimit(
    std::string_view cluster_queue, const FlavorResource& fr) const {
  int index = Find(cluster_queue);
  if (index < 0) return std::nullopt;
  const auto& limits = nodes_[index].borrowing_limit;
  auto it = limits.find(fr);
  if (it == limits.end()) return std::nullopt;
  return it->second;
}

std::string QuotaTree::Parent(std::string_view name) const {
  const int index = Find(name);
  if (index < 0 || nodes_[index].parent < 0) return "";
  return nodes_[nodes_[index].parent].name;
}

std::vector<std::string> QuotaTree::ChildCohorts(std::string_view name) const {
  std::vector<std::string> out;
  if (const int index = Find(name); index >= 0) {
    for (int child : nodes_[index].children) {
      if (!nodes_[child].is_cluster_queue) out.push_back(nodes_[child].name);
    }
  }
  return out;
}

std::vector<std::string> QuotaTree::ChildClusterQueues(
    std::string_view name) const {
  std::vector<std::string> out;
  if (const int index = Find(name); index >= 0) {
    for (int child : nodes_[index].children) {
      if (nodes_[child].is_cluster_queue) out.push_back(nodes_[child].name);
    }
  }
  return out;
}

bool QuotaTree::WithinNominal(std::string_view name,
                              const std::vector<FlavorResource>& frs) const {
  const int index = Find(name);
  if (index < 0) return true;
  const Node& node = nodes_[index];
  return std::none_of(frs.begin(), frs.end(), [&](const FlavorResource& fr) {
    return Get(node.usage, fr) > Get(node.subtree, fr);
  });
}

bool QuotaTree::FitsInSubtree(std::string_view name, const FrAmounts& demand,
                              FrAmounts* remaining) const {
  const int index = Find(name);
  if (index < 0) return false;
  const Node& node = nodes_[index];
  bool fits = true;
  for (const auto& [fr, amount] : demand) {
    const int64_t usage = Get(node.usage, fr);
    if (usage + amount > Get(node.subtree, fr)) fits = false;
    const int64_t local = std::max<int64_t>(0, Guaranteed(node, fr) - usage);
    (*remaining)[fr] = std::max<int64_t>(0, amount - local);
  }
  return fits;
}

int QuotaTree::Height(int index) const {
  const Node& node = nodes_[index];
  int height = node.children.empty() ? 0 : 1;
  for (int child : node.children) {
    if (!nodes_[child].is_cluster_queue) {
      height = std::max(height, Height(child) + 1);
    }
  }
  return height;
}

int QuotaTree::HeightWhereFits(int cq, const FlavorResource& fr,
                               int64_t amount) const {
  const Node& queue = nodes_[cq];
  if (queue.parent < 0 ||
      Get(queue.usage, fr) + amount <= Get(queue.subtree, fr)) {
    return 0;
  }
  int64_t remaining = amount - std::max<int64_t>(0, Guaranteed(queue, fr) -
                                                        Get(queue.usage, fr));
  for (int n = queue.parent; n >= 0; n = nodes_[n].parent) {
    const Node& node = nodes_[n];
    if (Get(node.usage, fr) + remaining <= Get(node.subtree, fr)) {
      return Height(n);
    }
    remaining -=
        std::max<int64_t>(0, Guaranteed(node, fr) - Get(node.usage, fr));
  }
  return Height(Root(cq));
}

bool QuotaTree::FitsBelowRoot(std::string_view cluster_queue,
                              const FlavorResource& fr, int64_t amount) const {
  const int index = Find(cluster_queue);
  if (index < 0 || nodes_[index].parent < 0) return false;
  const Node& queue = nodes_[index];
  if (Get(queue.usage, fr) + amount <= Get(queue.subtree, fr)) return true;
  int64_t remaining = amount - std::max<int64_t>(0, Guaranteed(queue, fr) -
                                                        Get(queue.usage, fr));
  for (int n = queue.parent; n >= 0; n = nodes_[n].parent) {
    const Node& node = nodes_[n];
    if (Get(node.usage, fr) + remaining <= Get(node.subtree, fr)) {
      return node.parent >= 0;
    }
    remaining -=
        std::max<int64_t>(0, Guaranteed(node, fr) - Get(node.usage, fr));
  }
  return false;
}

int QuotaTree::BorrowHeight(std::string_view cluster_queue,
                            const FrAmounts& demand) const {
  const int index = Find(cluster_queue);
  if (index < 0) return 0;
  int height = 0;
  for (const auto& [fr, amount] : demand) {
    if (amount > 0) {
      height = std::max(height, HeightWhereFits(index, fr, amount));
    }
  }
  return height;
}

double QuotaTree::Share::Weighted() const {
  if (ratio == 0) return 0;
  if (weight_milli == 0) return std::numeric_limits<double>::infinity();
  return ratio * 1000.0 / static_cast<double>(weight_milli);
}

QuotaTree::Share QuotaTree::DominantShare(std::string_view name,
                                          const FrAmounts& extra) const {
  Share share;
  const int index = Find(name);
  if (index < 0) return share;
  const Node& node = nodes_[index];
  share.weight_milli = node.weight_milli;
  if (node.parent < 0) return share;
  std::map<std::string, int64_t> borrowed;  // per resource
  for (const auto& [fr, quota] : node.subtree) {
    const int64_t over = Get(node.usage, fr) + Get(extra, fr) - quota;
    if (over > 0) borrowed[fr.resource] += over;
  }
  share.borrowing = !borrowed.empty();
  std::map<std::string, int64_t> lendable;
  for (const auto& [fr, capacity] : nodes_[Root(index)].subtree) {
    lendable[fr.resource] += MaxAvailableAt(node.parent, fr);
  }
  for (const auto& [resource, amount] : borrowed) {
    const int64_t lend = lendable[resource];
    if (lend > 0) {
      share.ratio = std::max(share.ratio, amount * 1000.0 / lend);
    }
  }
  return share;
}

int QuotaTree::CompareShares(const Share& a, const Share& b) {
  const bool a_zero = a.ZeroWeightBorrows();
  const bool b_zero = b.ZeroWeightBorrows();
  if (a_zero && b_zero) return (a.ratio > b.ratio) - (a.ratio < b.ratio);
  if (a_zero != b_zero) return a_zero ? 1 : -1;
  const double x = a.Weighted();
  const double y = b.Weighted();
  return (x > y) - (x < y);
}

}  // namespace gpusched
