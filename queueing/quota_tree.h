#ifndef GPUSCHED_QUEUEING_QUOTA_TREE_H_
#define GPUSCHED_QUEUEING_QUOTA_TREE_H_

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/policy.h"

namespace gpusched {

// The unit quota is counted in: one resource of one flavor.
struct FlavorResource {
  std::string flavor;
  std::string resource;
  friend auto operator<=>(const FlavorResource&,
                          const FlavorResource&) = default;
};

// Amounts per flavor-resource; ordered so every walk is deterministic.
using FrAmounts = std::map<FlavorResource, int64_t>;

// ClusterQueues (leaves) and cohorts (inner nodes) with Kueue's quota
// arithmetic (pkg/cache resource nodes):
//  - A node's subtree quota is its own nominal quota plus, per child, the
//    part the child lends: subtree - guaranteed, where guaranteed =
//    max(0, subtree - lendingLimit) when a lending limit is set, else 0.
//  - Usage beyond a node's guaranteed part is stored in its parent.
//  - What a node may still use is its unused guaranteed part plus what its
//    parent may still give, capped by its borrowingLimit.
// Cohorts named by ClusterQueues without a Cohort object exist implicitly.
// Nodes are named as ClusterQueues are, and cohorts as "cohort:<name>", so
// a cohort and a ClusterQueue may share a name as they may in Kueue.
//
// Invariant: for every cohort, usage = sum over children of
// max(0, child usage - child guaranteed), per flavor-resource.
class QuotaTree {
 public:
  static absl::StatusOr<QuotaTree> Build(const Policy& policy);

  bool HasClusterQueue(std::string_view name) const;
  std::vector<std::string> ClusterQueueNames() const;  // sorted
  // The cohort tree path of a ClusterQueue, itself first, root last.
  std::vector<std::string> PathToRoot(std::string_view cluster_queue) const;

  int64_t Nominal(std::string_view node, const FlavorResource& fr) const;
  int64_t Usage(std::string_view node, const FlavorResource& fr) const;
  // How much more of `fr` the ClusterQueue may use now, borrowing included.
  int64_t Available(std::string_view cluster_queue,
                    const FlavorResource& fr) const;
  // Available as if no queue used anything: the most the ClusterQueue can
  // ever get. A demand above it can never be admitted.
  int64_t MaxAvailable(std::string_view cluster_queue,
                       const FlavorResource& fr) const;
  // True when every amount fits Available.
  bool Fits(std::string_view cluster_queue, const FrAmounts& demand) const;
  // True when adding `demand` takes the ClusterQueue over its nominal quota
  // in some flavor-resource.
  bool WouldBorrow(std::string_view cluster_queue,
                   const FrAmounts& demand) const;
  // Amounts the ClusterQueue uses beyond its nominal quota.
  FrAmounts Borrowed(std::string_view cluster_queue) const;
  bool IsBorrowing(std::string_view cluster_queue) const;

  void AddUsage(std::string_view cluster_queue, const FrAmounts& amounts);
  void RemoveUsage(std::string_view cluster_queue, const FrAmounts& amounts);
  // Changes with every AddUsage and RemoveUsage, so callers may keep what
  // they derived from usage (who borrows) until it moves.
  uint64_t usage_version() const { return usage_version_; }

  // Kueue's weighted dominant resource share, in thousandths, of a node
  // with `extra` added to its usage: per resource, borrowed / lendable
  // capacity of the root, the maximum over resources, divided by the
  // weight. 0 for nodes that do not borrow; INT64_MAX for a borrowing node
  // of weight 0.
  int64_t WeightedShare(std::string_view node,
                        const FrAmounts& extra = {}) const;
  // The weighted share of `ancestor` (the ClusterQueue itself or a cohort
  // on its path) if the ClusterQueue took `demand`: only the part beyond
  // each node's guaranteed quota reaches the node above, as in AddUsage.
  int64_t WeightedShareWithDemand(std::string_view cluster_queue,
                                  std::string_view ancestor,
                                  const FrAmounts& demand) const;
  // Available as if the ClusterQueue had no borrowingLimit (so a "why
  // pending" message can say when the limit, not the cohort, binds).
  int64_t AvailableWithoutBorrowingLimit(std::string_view cluster_queue,
                                         const FlavorResource& fr) const;
  std::optional<int64_t> BorrowingLimit(std::string_view cluster_queue,
                                        const FlavorResource& fr) const;

  // --- The cohort tree, as Kueue's hierarchical preemption walks it. Nodes
  // are named as above (ClusterQueues by name, cohorts "cohort:<name>").
  // The parent's name; empty for a root.
  std::string Parent(std::string_view node) const;
  // The child cohorts and the child ClusterQueues, in policy order.
  std::vector<std::string> ChildCohorts(std::string_view node) const;
  std::vector<std::string> ChildClusterQueues(std::string_view node) const;
  // No usage above the node's subtree quota in any of `frs`.
  bool WithinNominal(std::string_view node,
                     const std::vector<FlavorResource>& frs) const;
  // Whether `demand` fits the node's subtree quota on top of its usage,
  // and (in `remaining`) what is left of it once the node's unused
  // guaranteed (unlendable) quota is taken.
  bool FitsInSubtree(std::string_view node, const FrAmounts& demand,
                     FrAmounts* remaining) const;
  // Kueue's borrowing level of a demand: 0 when it fits the ClusterQueue's
  // nominal quota (or the queue has no cohort), else the height of the
  // lowest cohort on its path whose subtree holds it (a cohort of
  // ClusterQueues only has height 1); the largest over flavor-resources.
  // Workloads borrowing from a lower subtree are admitted first.
  int BorrowHeight(std::string_view cluster_queue,
                   const FrAmounts& demand) const;
  // Kueue's "may reclaim in hierarchy": `amount` fits the queue's nominal
  // quota, or the subtree of a cohort on its path below the root.
  bool FitsBelowRoot(std::string_view cluster_queue, const FlavorResource& fr,
                     int64_t amount) const;

  // Kueue's dominant resource share of a node (a ClusterQueue or a
  // cohort) with `extra` added to its usage: per resource, what it uses
  // beyond its subtree quota over what its parent could lend at most
  // (in thousandths), the largest of them; weighted by the node's weight.
  struct Share {
    double ratio = 0;  // unweighted, thousandths
    int64_t weight_milli = kDefaultFairWeightMilli;
    bool borrowing = false;
    bool ZeroWeightBorrows() const { return weight_milli == 0 && ratio > 0; }
    double Weighted() const;  // +inf for a zero weight that borrows
  };
  Share DominantShare(std::string_view node, const FrAmounts& extra = {}) const;
  // <0, 0, >0 as a's share is below, equal to, above b's (Kueue's
  // CompareDRS: shares of zero-weight borrowers rank above all others).
  static int CompareShares(const Share& a, const Share& b);
  // Read by the invariant checks (invariants.h; quota_tree_check.cc).
  struct Overrun {
    std::string node;
    FlavorResource fr;
    int64_t usage = 0;
    int64_t limit = 0;
  };
  // Usage over each node's limit: its subtree quota plus its borrowing
  // limit; at a root its subtree quota alone. A node that may borrow
  // without a limit has none of its own: the cohort above bounds it.
  std::vector<Overrun> Overruns() const;
  // Cohorts whose usage is not what their children store in them (the
  // class invariant), and negative usage anywhere.
  std::vector<std::string> UsageMismatches() const;
  // Everything a node uses, by flavor-resource (empty for unknown nodes).
  FrAmounts UsageOf(std::string_view node) const;

 private:
  uint64_t usage_version_ = 0;
  struct Node {
    std::string name;
    bool is_cluster_queue = false;
    int parent = -1;
    std::vector<int> children;
    FrAmounts nominal;
    std::map<FlavorResource, int64_t> borrowing_limit;
    std::map<FlavorResource, int64_t> lending_limit;
    FrAmounts subtree;
    FrAmounts usage;
    int64_t weight_milli = kDefaultFairWeightMilli;
  };

  int Find(std::string_view name) const;
  int FindOrAddCohort(const std::string& name);
  int64_t Guaranteed(const Node& node, const FlavorResource& fr) const;
  int64_t AvailableAt(int node, const FlavorResource& fr) const;
  int64_t MaxAvailableAt(int node, const FlavorResource& fr) const;
  void AddAt(int node, const FlavorResource& fr, int64_t amount);
  void RemoveAt(int node, const FlavorResource& fr, int64_t amount);
  void ComputeSubtree(int node);
  absl::Status CheckAcyclic() const;
  int Root(int node) const;
  int Height(int node) const;
  int HeightWhereFits(int cluster_queue, const FlavorResource& fr,
                      int64_t amount) const;

  std::vector<Node> nodes_;
  std::map<std::string, int, std::less<>> index_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_QUOTA_TREE_H_
