// Quota and flavor, the admission stage before placement: which
// ClusterQueue a workload's quota comes from, the cohort trees (who can
// lend, who borrows now), the flavors whose quota fits, and why a
// workload waits when none does.
#ifndef GPUSCHED_QUEUEING_QUOTA_FLAVORS_H_
#define GPUSCHED_QUEUEING_QUOTA_FLAVORS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "queueing/policy.h"
#include "queueing/quota_tree.h"
#include "queueing/reason_code.h"
#include "queueing/workload.h"

namespace gpusched {

// One flavor of a resource group whose quota fits, with what it charges.
struct FlavorOption {
  const FlavorQuotas* flavor = nullptr;
  FrAmounts demand;
};

// The flavors a workload's quota fits, per requested resource group, in
// the queue's order. `fits` is false when some group has none; `why` says
// why the first refused flavor was refused.
struct FlavorChoices {
  bool fits = false;
  std::vector<std::vector<FlavorOption>> groups;
  WaitReason why;
};

class QuotaFlavors {
 public:
  // An index over a policy and its quota tree, built by Rebuild; the
  // calls that read quota (or flavors) are given the tree (and policy).
  QuotaFlavors() = default;

  // Indexes the policy's queues and cohort trees again (a new policy). The
  // index points into `policy`: rebuild it whenever the policy is replaced.
  void Rebuild(const Policy& policy, const QuotaTree& quota);

  const ClusterQueue* ClusterQueueNamed(const std::string& name) const;
  // The root of the queue's cohort tree; the queue itself without cohort.
  const std::string& TreeOf(const std::string& cluster_queue) const;
  // The root of the queue's cohort tree, or nullptr without cohort.
  const std::string* RootOf(const std::string& cluster_queue) const;
  // The ClusterQueues of the tree that borrow now.
  const std::vector<const std::string*>& BorrowingQueuesOf(
      const QuotaTree& quota, const std::string& root);

  // The quota a workload would take on the first flavor of each resource
  // group: what borrowing and shares are judged on before a flavor is
  // chosen.
  FrAmounts FirstFlavorDemand(const Workload& w) const;
  // Kueue orders a cycle's heads by the borrowing of the flavors assigned
  // to them. Before placement that is the flavor flavorFungibility picks
  // on quota alone: the borrowing height (QuotaTree::BorrowHeight) of the
  // flavor of the queue's fungible group where the search would end among
  // those whose quota holds the demand now; `first_demand` is on the first
  // flavor of each group (FirstFlavorDemand), and its height is the answer
  // when no flavor holds it.
  int BorrowHeightOfChoice(const QuotaTree& quota, const std::string& queue,
                           const FrAmounts& first_demand) const;
  // The quota the workload would take with `flavor` in the resource group
  // that lists it and the first flavor in every other group.
  FrAmounts DemandWith(const Workload& w, const std::string& flavor) const;
  // The flavors of the workload's queue that it tolerates and whose quota
  // holds `members`; with `only_flavor`, the resource group that lists it
  // offers that flavor alone (the flavor search judges one at a time).
  FlavorChoices Choose(const Policy& policy, const QuotaTree& quota,
                       const Workload& w,
                       const std::vector<const Pod*>& members,
                       const std::string* only_flavor = nullptr) const;
  // The quota check of one flavor: the shortfall, or an empty reason.
  WaitReason QuotaFits(const QuotaTree& quota, const Workload& w,
                       const ClusterQueue& cq, const ResourceGroup& group,
                       const std::string& flavor,
                       const FrAmounts& demand) const;

 private:
  WaitReason FlavorRefusal(const Policy& policy, const QuotaTree& quota,
                           const Workload& w, const ClusterQueue& cq,
                           const ResourceGroup& group,
                           const std::string& flavor,
                           const std::vector<const Pod*>& members,
                           const FrAmounts& demand) const;

  absl::flat_hash_map<std::string, const ClusterQueue*> cluster_queue_by_name_;
  std::map<std::string, std::string> root_of_queue_;  // ClusterQueue -> root
  // The ClusterQueues of each cohort tree, by root.
  std::map<std::string, std::vector<std::string>> queues_of_root_;
  struct BorrowingQueues {
    bool valid = false;
    uint64_t usage_version = 0;
    std::vector<const std::string*> queues;  // into queues_of_root_
  };
  std::map<std::string, BorrowingQueues> borrowing_by_root_;
};

const ResourceFlavor* FindFlavor(const Policy& policy, const std::string& name);

// The group whose flavors flavorFungibility searches: the first listing
// more than one flavor that covers a `requested` resource; nullptr when
// none does.
const ResourceGroup* FungibleGroup(
    const ClusterQueue& cq,
    const std::function<bool(const std::string& resource)>& requested);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_QUOTA_FLAVORS_H_
