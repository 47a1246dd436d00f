// Invariants of the queueing core and the cluster model it places into,
// checked from outside: by `gpusched simulate --check-invariants` on every
// step, and after every engine pass in Debug and sanitizer builds (the
// hook in QueueingEngine::Schedule). Each check is also a function of the
// parts it reads, so a test can hand it a deliberately broken state.
#ifndef GPUSCHED_QUEUEING_INVARIANTS_H_
#define GPUSCHED_QUEUEING_INVARIANTS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "queueing/gang_timers.h"
#include "queueing/quota_tree.h"
#include "queueing/workload.h"
#include "scheduler/cluster_model.h"
#include "scheduler/node_state.h"

// Debug builds check after every engine pass; sanitizer builds define
// GPUSCHED_CHECK_INVARIANTS to check at -O1 as well.
#if defined(GPUSCHED_CHECK_INVARIANTS) || !defined(NDEBUG)
#define GPUSCHED_INVARIANTS_ON 1
#endif

namespace gpusched {

class QueueingEngine;

// How far each quota node's usage is over its limit, per flavor-resource
// (only entries over it).
using QuotaExcess = std::map<std::pair<std::string, FlavorResource>, int64_t>;

struct InvariantContext {
  // The engine's clock: a gang below minMember must still be in its grace.
  std::optional<int64_t> now;
  // Usage over a limit that is allowed (what was over before a pass): a
  // pod adopted after a restart is charged past the quota, and a policy
  // that shrank leaves admitted workloads charged. Nullptr: none allowed.
  const QuotaExcess* allowed_excess = nullptr;
  // The engine is the model's only writer (the simulator): every placed
  // member is in it. A server's watches remove a bound pod from the model
  // before the engine hears of it; members only assumed on their node must
  // be there after every pass all the same.
  bool engine_owns_model = false;
};

// No GPU, MIG instance or share held twice: per node, each device's free
// share and holders are exactly what its pods' assignments take, no more
// than a whole device, and each MIG pool's use is what its pods take, no
// more than its capacity. Every pod is on one node only.
std::vector<std::string> DeviceViolations(const ClusterModel& model);
std::vector<std::string> NodeDeviceViolations(
    const std::string& node, const GpuInventory& gpus,
    const std::map<std::string, PodAllocation, std::less<>>& pods);

// Each ClusterQueue's usage equals the sum of what its admitted workloads
// are charged; cohorts hold what their children store in them.
std::vector<std::string> QueueUsageViolations(
    const QuotaTree& quota, const std::map<std::string, Workload>& workloads);

// No gang partly admitted: an admitted workload has placements for at
// least minMember pods, less those that succeeded, unless it lost members
// and is within its grace (GangTimers).
std::vector<std::string> GangViolations(
    const std::map<std::string, Workload>& workloads, const GangTimers& timers,
    const SchedulerConfig& config, std::optional<int64_t> now);

// Every placed member is in the model on the node of its placement (a bound
// one may be gone unless `engine_owns_model`), and no pod is placed by two
// workloads.
std::vector<std::string> PlacementViolations(
    const std::map<std::string, Workload>& workloads, const ClusterModel& model,
    bool engine_owns_model);

// Quota never exceeded outside borrowing: usage within nominal quota plus
// borrowing limit, and a cohort tree's root within its capacity.
QuotaExcess QuotaOverLimits(const QuotaTree& quota);
std::vector<std::string> QuotaLimitViolations(const QuotaTree& quota,
                                              const QuotaExcess* allowed);

// All of the above; FailedPrecondition naming every violation.
absl::Status CheckInvariants(const QueueingEngine& engine,
                             const ClusterModel& model,
                             const InvariantContext& context = {});

// The engine's hook: aborts with the violations when `status` is not OK.
void DieOnViolation(const absl::Status& status);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_INVARIANTS_H_
