// Preemption, the stage that chooses victims: Kueue's candidate rules and
// order, whole workloads as victims, victims must free room for the
// placement (not only quota), nobody younger than the minimum runtime. It
// plans on trials that leave the model and quota as they were; the engine
// evicts the victims of the plan.
#ifndef GPUSCHED_QUEUEING_PREEMPTION_PLANNER_H_
#define GPUSCHED_QUEUEING_PREEMPTION_PLANNER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "queueing/classical_preemption.h"
#include "queueing/fair_preemption.h"
#include "queueing/gang_trial.h"
#include "queueing/policy.h"
#include "queueing/quota_flavors.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"
#include "scheduler/cluster_model.h"

namespace gpusched {

struct PreemptionPlan {
  enum class Verdict {
    kNotAllowed,    // the queue's policy never preempts
    kNoCandidates,  // nobody may be preempted for it
    kCannotFit,     // it would not fit even with every candidate gone
    // Candidates whose eviction a disruption budget refused lately were
    // left out, and it found no victims without them: it waits.
    kBlockedByBudget,
    kEvict,  // evicting `victims` makes it fit (none: it fits now)
  };
  struct Victim {
    Workload* workload = nullptr;
    std::string reason;  // "InClusterQueue: preempted by ns/w (priority 5)"
  };
  Verdict verdict = Verdict::kNotAllowed;
  std::vector<Victim> victims;  // by key
  // kBlockedByBudget: whom it waits for, and the budget's word.
  std::string reason;
};

// Preemption candidates, and the first one left out because its eviction
// was refused (a sentence naming the budget; empty when none was).
struct CandidateSet {
  std::vector<Workload*> workloads;
  std::string blocked;
};

// Why a preemptor waits for `victim`, whose eviction a budget refused.
std::string WaitingForBudget(const std::string& victim,
                             const std::string& message);

// How long a workload whose eviction a disruption budget refused is no
// preemption victim: `base_ms`, doubling with each refusal up to `max_ms`.
struct RefusalBackoff {
  int64_t base_ms = 30'000;
  int64_t max_ms = 300'000;
};

// Admitted workloads per ClusterQueue, by key (the WorkloadStore's index).
using AdmittedByQueue = std::map<std::string, std::map<std::string, Workload*>>;

// What a plan reads and tries victims on, lent for one call: the plan
// leaves the quota and the model as it found them.
struct PlanInputs {
  const Policy& policy;
  QuotaTree& quota;
  QuotaFlavors& flavors;
  ClusterModel& model;
  const AdmittedByQueue& admitted;
  // When set, preemption is planned on this flavor alone in the resource
  // group that lists it (the flavor search judges flavors one by one).
  const std::string* only_flavor = nullptr;
  // Admission Fair Sharing's usage, for the candidates' order.
  const AdmissionFairSharing* afs = nullptr;
};

// Chooses victims. What it keeps between calls is what it was told about
// evictions (refused ones, whom a victim was evicted for); everything else
// comes with each call (PlanInputs).
class PreemptionPlanner {
 public:
  using AdmittedByQueue = ::gpusched::AdmittedByQueue;
  // How the planner asks whether the preemptor fits; neither may leave the
  // model or the quota changed.
  struct Trials {
    // A necessary condition from counts: it could fit with `freeing` gone.
    std::function<bool(const Workload&, const std::vector<Workload*>&)>
        could_fit;
    // It fits the model and the quota as they are now.
    std::function<bool(Workload&)> fits;
  };

  // Kueue's search: candidates by its rules and in its order
  // (classical_preemption.h, or fair_preemption.h with fair sharing);
  // take them off one by one until the workload fits (quota and
  // placement); then give back, last taken but one first, every victim it
  // fits without.
  PreemptionPlan Plan(Workload& w, int64_t now, const Trials& trials,
                      const PlanInputs& in) const;
  // Candidates by Kueue's rules (classical), in the order they are tried;
  // workloads whose eviction was refused lately are left out.
  CandidateSet Candidates(const Workload& w, const ClusterQueue& cq,
                          int64_t now, const PlanInputs& in) const;

  // `preemptor` had `victim` evicted.
  void NoteVictim(const std::string& victim, const std::string& preemptor) {
    preemptor_of_[victim] = preemptor;
  }
  // Whom `victim` was last evicted for, or nullptr.
  const std::string* PreemptorOf(const std::string& victim) const;
  // The API server refused to evict a member of `victim` (`message` names
  // the budget): it is no candidate until the returned time.
  int64_t NoteRefused(const std::string& victim, std::string message,
                      int64_t now, const RefusalBackoff& backoff);
  // When the next refusal's back-off ends, after `now`.
  std::optional<int64_t> NextRefusalExpiry(int64_t now) const;
  // The workload is gone: forget its refusals and whom it was evicted for.
  void Forget(const std::string& key);

 private:
  // One call's search, over its inputs (preemption_planner.cc).
  class Run;

  struct Refusal {
    int64_t until = 0;
    int count = 0;  // refusals so far: the back-off doubles with each
    std::string message;
  };
  std::map<std::string, Refusal> refused_;           // by victim
  std::map<std::string, std::string> preemptor_of_;  // victim -> preemptor
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_PREEMPTION_PLANNER_H_
