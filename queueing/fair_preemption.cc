#include "queueing/fair_preemption.h"

#include "queueing/classical_preemption.h"

namespace gpusched {

FairTargetOrdering::FairTargetOrdering(QuotaTree* quota,
                                       std::string preemptor_queue,
                                       const std::vector<Workload*>& candidates)
    : quota_(quota), preemptor_queue_(std::move(preemptor_queue)) {
  for (std::string node = quota_->Parent(preemptor_queue_); !node.empty();
       node = quota_->Parent(node)) {
    ancestors_.insert(node);
  }
  for (Workload* v : candidates) by_queue_[v->cluster_queue].push_back(v);
}

bool FairTargetOrdering::HasWorkload(const std::string& queue) const {
  auto it = by_queue_.find(queue);
  return it != by_queue_.end() && !it->second.empty();
}

Workload* FairTargetOrdering::Pop(const std::string& queue) {
  std::deque<Workload*>& list = by_queue_[queue];
  Workload* head = list.front();
  list.pop_front();
  return head;
}

std::vector<Workload*> FairTargetOrdering::PopAll(const std::string& queue) {
  std::deque<Workload*>& list = by_queue_[queue];
  std::vector<Workload*> out(list.begin(), list.end());
  list.clear();
  return out;
}

// Without a cohort only the own queue gives workloads up; in a tree, the
// walk starts again from the root after every pick (shares moved).
std::optional<std::string> FairTargetOrdering::Next() {
  std::string root = quota_->Parent(preemptor_queue_);
  if (root.empty()) {
    if (pruned_queues_.contains(preemptor_queue_) ||
        !HasWorkload(preemptor_queue_)) {
      return std::nullopt;
    }
    return preemptor_queue_;
  }
  while (!quota_->Parent(root).empty()) root = quota_->Parent(root);
  while (!pruned_cohorts_.contains(root)) {
    if (std::optional<std::string> target = NextUnder(root)) return target;
  }
  return std::nullopt;
}

// Queues that neither borrow nor are the preemptor's, and queues with no
// candidates left, are pruned; among the rest the highest share wins, ties
// going to the queue whose first candidate comes first.
std::optional<std::string> FairTargetOrdering::HighestQueueUnder(
    const std::string& cohort, QuotaTree::Share* best) {
  std::optional<std::string> highest;
  for (const std::string& queue : quota_->ChildClusterQueues(cohort)) {
    if (pruned_queues_.contains(queue)) continue;
    const QuotaTree::Share share = quota_->DominantShare(queue);
    if ((!share.borrowing && queue != preemptor_queue_) ||
        !HasWorkload(queue)) {
      pruned_queues_.insert(queue);
      continue;
    }
    const int order = highest ? QuotaTree::CompareShares(share, *best) : 1;
    if (order > 0 ||
        (order == 0 &&
         CandidateBefore(*by_queue_[queue].front(),
                         *by_queue_[*highest].front(), preemptor_queue_))) {
      highest = queue;
      *best = share;
    }
  }
  return highest;
}

// Cohorts that do not borrow are pruned unless the preemptor is under
// them; the last of equal shares wins.
std::optional<std::string> FairTargetOrdering::HighestCohortUnder(
    const std::string& cohort, QuotaTree::Share* best) {
  std::optional<std::string> highest;
  for (const std::string& child : quota_->ChildCohorts(cohort)) {
    if (pruned_cohorts_.contains(child)) continue;
    const QuotaTree::Share share = quota_->DominantShare(child);
    if (!share.borrowing && !ancestors_.contains(child)) {
      pruned_cohorts_.insert(child);
    } else if (!highest || QuotaTree::CompareShares(share, *best) >= 0) {
      highest = child;
      *best = share;
    }
  }
  return highest;
}

std::optional<std::string> FairTargetOrdering::NextUnder(
    const std::string& cohort) {
  QuotaTree::Share queue_share, cohort_share;
  std::optional<std::string> queue = HighestQueueUnder(cohort, &queue_share);
  std::optional<std::string> child = HighestCohortUnder(cohort, &cohort_share);
  if (!queue && !child) {
    pruned_cohorts_.insert(cohort);
    return std::nullopt;
  }
  if (child &&
      (!queue || QuotaTree::CompareShares(cohort_share, queue_share) >= 0)) {
    return NextUnder(*child);
  }
  return queue;
}

std::string FairTargetOrdering::MeetingPoint(const std::string& target) const {
  for (std::string node = quota_->Parent(target); !node.empty();
       node = quota_->Parent(node)) {
    if (ancestors_.contains(node)) return node;
  }
  return "";
}

std::string FairTargetOrdering::AlmostMeetingPoint(
    const std::string& queue, const std::string& meeting) const {
  std::string below = queue;
  for (std::string node = quota_->Parent(queue); !node.empty();
       node = quota_->Parent(node)) {
    if (node == meeting) return below;
    below = node;
  }
  return below;
}

FairTargetOrdering::Shares FairTargetOrdering::SharesFor(
    const std::string& target) const {
  const std::string meeting = MeetingPoint(target);
  return {quota_->DominantShare(AlmostMeetingPoint(preemptor_queue_, meeting)),
          quota_->DominantShare(AlmostMeetingPoint(target, meeting))};
}

QuotaTree::Share FairTargetOrdering::TargetShareWithout(
    const std::string& target, const Workload& v) {
  const std::string node = AlmostMeetingPoint(target, MeetingPoint(target));
  if (node == target) {
    FrAmounts without;
    for (const auto& [fr, amount] : v.charged) without[fr] = -amount;
    return quota_->DominantShare(node, without);
  }
  // A cohort: take the workload off the tree for a moment.
  quota_->RemoveUsage(target, v.charged);
  QuotaTree::Share share = quota_->DominantShare(node);
  quota_->AddUsage(target, v.charged);
  return share;
}

bool FairStrategyPasses(FairPreemptionStrategy strategy,
                        const QuotaTree::Share& preemptor_new,
                        const QuotaTree::Share& target_old,
                        const QuotaTree::Share& target_new) {
  if (strategy == FairPreemptionStrategy::kLessThanOrEqualToFinalShare) {
    return QuotaTree::CompareShares(preemptor_new, target_new) <= 0;
  }
  return QuotaTree::CompareShares(preemptor_new, target_old) < 0;
}

}  // namespace gpusched
