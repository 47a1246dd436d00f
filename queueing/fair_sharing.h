#ifndef GPUSCHED_QUEUEING_FAIR_SHARING_H_
#define GPUSCHED_QUEUEING_FAIR_SHARING_H_

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "queueing/quota_tree.h"
#include "queueing/workload.h"

namespace gpusched {

// A workload competing for admission, with the quota it would take (on the
// first flavor of each resource group).
struct Contender {
  Workload* workload = nullptr;
  FrAmounts demand;
};

// Kueue's hierarchical fair-sharing order. Each ClusterQueue offers its
// head; at every cohort, bottom-up, the child (ClusterQueue or sub-cohort)
// whose weighted share would be lowest after admitting its contender wins
// and moves up; ties go to the queue order (priority, creation, name).
// Shares are read from the live QuotaTree at every Next(), so a workload
// admitted in between changes who wins next: two teams alternate instead
// of one taking everything it can before the other gets a turn.
class FairSharingTournament {
 public:
  using Before = std::function<bool(const Workload*, const Workload*)>;

  // `queues`: per ClusterQueue, its contenders in queue order.
  FairSharingTournament(const QuotaTree& quota,
                        std::map<std::string, std::deque<Contender>> queues,
                        Before queue_order);

  // The next winner under the current usage, taken off its queue; nullptr
  // when every queue is empty.
  Workload* Next();
  // Sorts the ClusterQueue's contenders again (an order that reads state
  // an admission changed, as Admission Fair Sharing's usage).
  void Reorder(const std::string& cluster_queue);

 private:
  struct Pick {
    const Contender* contender = nullptr;
    std::string cluster_queue;
  };
  Pick Winner(const std::string& node);
  bool Better(const Pick& a, const std::string& a_node, const Pick& b,
              const std::string& b_node) const;

  const QuotaTree& quota_;
  std::map<std::string, std::deque<Contender>> queues_;
  Before queue_order_;
  std::map<std::string, std::vector<std::string>> children_;
  std::vector<std::string> roots_;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_FAIR_SHARING_H_
