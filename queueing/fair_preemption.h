// Kueue's fair-sharing preemption: the order in which ClusterQueues give
// up workloads to a preemptor (FairTargetOrdering: down the cohort tree,
// always to the child with the highest dominant resource share), and the
// share comparisons of its two strategies. The planner runs the trials.
#ifndef GPUSCHED_QUEUEING_FAIR_PREEMPTION_H_
#define GPUSCHED_QUEUEING_FAIR_PREEMPTION_H_

#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "queueing/policy.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"

namespace gpusched {

class FairTargetOrdering {
 public:
  // `candidates` in CandidateBefore order; each queue keeps that order.
  FairTargetOrdering(QuotaTree* quota, std::string preemptor_queue,
                     const std::vector<Workload*>& candidates);

  // The next ClusterQueue to take a workload from; nullopt when none is
  // left. Shares are read from the quota as it is at each call.
  std::optional<std::string> Next();
  bool HasWorkload(const std::string& queue) const;
  Workload* Pop(const std::string& queue);
  // Gives the queue's remaining workloads up (to try them again later).
  std::vector<Workload*> PopAll(const std::string& queue);
  void Drop(const std::string& queue) { pruned_queues_.insert(queue); }

  // The shares Kueue's strategies compare: the preemptor's side and the
  // target's side, each taken just below the cohort where their paths
  // meet ("almost least common ancestors").
  struct Shares {
    QuotaTree::Share preemptor;
    QuotaTree::Share target;
  };
  Shares SharesFor(const std::string& target) const;
  // The target side's share once `v` is gone.
  QuotaTree::Share TargetShareWithout(const std::string& target,
                                      const Workload& v);

 private:
  std::optional<std::string> NextUnder(const std::string& cohort);
  std::optional<std::string> HighestQueueUnder(const std::string& cohort,
                                               QuotaTree::Share* share);
  std::optional<std::string> HighestCohortUnder(const std::string& cohort,
                                                QuotaTree::Share* share);
  // The node below the meeting point on `queue`'s path.
  std::string AlmostMeetingPoint(const std::string& queue,
                                 const std::string& meeting) const;
  std::string MeetingPoint(const std::string& target) const;

  QuotaTree* quota_;
  std::string preemptor_queue_;
  std::set<std::string> ancestors_;  // of the preemptor's queue
  std::map<std::string, std::deque<Workload*>> by_queue_;
  std::set<std::string> pruned_queues_;
  std::set<std::string> pruned_cohorts_;
};

// Kueue's strategies: the preemptor's share with the workload must stay at
// or below the target's share once the victim is gone
// (LessThanOrEqualToFinalShare), or below the target's share before
// (LessThanInitialShare).
bool FairStrategyPasses(FairPreemptionStrategy strategy,
                        const QuotaTree::Share& preemptor_new,
                        const QuotaTree::Share& target_old,
                        const QuotaTree::Share& target_new);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_FAIR_PREEMPTION_H_
