// QuotaTree's self-checks, for the invariant checks (invariants.h).
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "queueing/quota_tree.h"

namespace gpusched {
namespace {

int64_t AmountOf(const FrAmounts& amounts, const FlavorResource& fr) {
  auto it = amounts.find(fr);
  return it == amounts.end() ? 0 : it->second;
}

std::string Describe(const FlavorResource& fr) {
  return absl::StrCat(fr.flavor, "/", fr.resource);
}

}  // namespace

std::vector<QuotaTree::Overrun> QuotaTree::Overruns() const {
  std::vector<Overrun> overruns;
  for (const Node& node : nodes_) {
    for (const auto& [fr, usage] : node.usage) {
      int64_t limit = AmountOf(node.subtree, fr);
      if (node.parent >= 0) {
        auto it = node.borrowing_limit.find(fr);
        if (it == node.borrowing_limit.end()) continue;
        limit += it->second;
      }
      if (usage > limit) overruns.push_back({node.name, fr, usage, limit});
    }
  }
  return overruns;
}

FrAmounts QuotaTree::UsageOf(std::string_view name) const {
  const int index = Find(name);
  return index < 0 ? FrAmounts{} : nodes_[index].usage;
}

std::vector<std::string> QuotaTree::UsageMismatches() const {
  std::vector<std::string> mismatches;
  for (const Node& node : nodes_) {
    std::set<FlavorResource> resources;
    for (const auto& [fr, amount] : node.usage) resources.insert(fr);
    for (int child : node.children) {
      for (const auto& [fr, amount] : nodes_[child].usage) resources.insert(fr);
    }
    for (const FlavorResource& fr : resources) {
      const int64_t usage = AmountOf(node.usage, fr);
      if (usage < 0) {
        mismatches.push_back(
            absl::StrCat(node.name, " uses ", usage, " of ", Describe(fr)));
      }
      if (node.is_cluster_queue) continue;
      int64_t stored = 0;
      for (int child : node.children) {
        const Node& c = nodes_[child];
        stored +=
            std::max<int64_t>(0, AmountOf(c.usage, fr) - Guaranteed(c, fr));
      }
      if (usage != stored) {
        mismatches.push_back(
            absl::StrCat(node.name, " uses ", usage, " of ", Describe(fr),
                         " but its children store ", stored, " in it"));
      }
    }
  }
  return mismatches;
}

}  // namespace gpusched
