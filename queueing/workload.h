#ifndef GPUSCHED_QUEUEING_WORKLOAD_H_
#define GPUSCHED_QUEUEING_WORKLOAD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "queueing/admission_checks.h"
#include "queueing/quota_tree.h"
#include "queueing/reason_code.h"
#include "queueing/workload_types.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// How a pod says which workload it belongs to.
struct WorkloadRef {
  enum class Kind {
    kSinglePod,
    kKueueGroup,
    kVolcanoGroup,
    kCoschedulingGroup,
    kNativeGroup  // scheduling.k8s.io PodGroup (KEP-4671)
  };
  Kind kind = Kind::kSinglePod;
  std::string key;  // "ns/name": the group's for gangs, the pod's otherwise
  int declared_count = 0;  // a Kueue pod group's declared size
};

// The gang the pod's admission state names (native PodGroup, Kueue pod
// group, Volcano or coscheduling group, as api/codec decoded it), else the
// pod itself.
WorkloadRef WorkloadOf(const Pod& pod);

struct Placement {
  std::string node;
  GpuAssignment gpus;
};

// A gang or a single pod, the unit of admission.
struct Workload {
  enum class State { kPending, kAdmitted, kFinished };

  std::string key;  // ns/name
  std::string namespace_name;
  bool is_gang = false;
  // A Volcano, coscheduling or native gang: only its PodGroup says how many
  // members make it (minMember), so it waits while the PodGroup is unknown
  // (podgroup_missing) rather than be admitted one pod at a time.
  bool declared_by_podgroup = false;
  bool podgroup_missing = false;
  // Which API declares it, when a PodGroup does.
  std::optional<PodGroup::Flavor> group_flavor;
  int min_member = 1;
  // Members that succeeded (they leave pods and placements) and whose pods
  // are still in the API, by pod key: they count towards the gang, through
  // an eviction too, as Kueue counts a pod group's Succeeded pods. A gang
  // evicted after some members succeeded is admitted again with the rest.
  // A set, so that one seen again (a relist) is not counted twice.
  std::set<std::string> succeeded;
  std::string local_queue;    // "" outside queues
  std::string cluster_queue;  // "" outside queues or when unresolved
  int32_t priority = 0;
  int64_t created_ms = 0;
  std::optional<int64_t> schedule_timeout_ms;  // coscheduling override
  std::string topology_required;               // node label key of a level
  std::string topology_preferred;
  // Every topology_slice_size members share a domain of this level (Kueue's
  // slices); "" and 0 without.
  std::string topology_slice_level;
  int topology_slice_size = 0;
  // Why its members' topology request cannot be honoured (invalid
  // annotations, members that disagree); it waits while this is set.
  std::string topology_invalid;
  // Volcano spec.minResources: the quota the gang needs free before its
  // first admission, even when its pods request less.
  ResourceList min_resources;
  std::map<std::string, Pod> pods;  // members that exist, by ns/name

  State state = State::kPending;
  std::map<std::string, Placement> placements;  // admitted members
  std::set<std::string> bound;  // members whose bind confirmed the placement
  // Kueue's PodsReady, from a live pod watch: the members whose pod reports
  // condition Ready (or Succeeded). Only once a watch has reported a
  // member's readiness (readiness_reported) does a member need it; the
  // simulator's and the forecast's members are ready once bound.
  std::set<std::string> ready;
  bool readiness_reported = false;
  // Every admitted member was bound and ready once since the admission: a
  // member's readiness lost later is not the admission's timeout.
  bool pods_ready_once = false;
  FrAmounts charged;  // quota held while admitted
  int64_t admitted_at_ms = -1;
  // When its run began, where that is not its admission: a workload
  // adopted after a restart ran from its members' start (status.startTime),
  // not from the restart. -1: from admitted_at_ms. Forecasts, the runtime
  // history and the preemption minimum runtime read RunStartMs; the bind
  // timeout counts from admitted_at_ms.
  int64_t run_started_ms = -1;
  int preemptions = 0;
  std::string reason;                   // why pending, or how it ended
  ReasonCode code = ReasonCode::kNone;  // `reason` as one word, while pending
  int64_t backoff_until_ms = 0;
  int failed_attempts = 0;
  // Kueue's requeueState.count: rollbacks by PodsReadyTimeout (a bind
  // timeout), the count backoffLimitCount limits.
  int requeue_count = 0;
  // Past backoffLimitCount (RequeuingLimitExceeded): pending, never
  // admitted, until a new member pod arrives.
  bool deactivated = false;
  // Kueue's admission checks (admission_checks.h), for a workload of a
  // ClusterQueue that has some: one state per check that runs for it, kept
  // between reservations for their retry counts.
  std::vector<WorkloadCheck> checks;
  // Quota held while its checks run: pending (its pods stay gated), not a
  // candidate of the admission passes, and admitted once every check is
  // Ready.
  std::optional<CheckReservation> check_reservation;
  int64_t pending_since_ms = 0;
  // Interned AdmissionSignature; -1 when its inputs changed since.
  int signature_id = -1;
  // Where the engine's pending index holds it (-1: not indexed), with the
  // order fields as they were when indexed.
  int indexed_signature = -1;
  int32_t indexed_priority = 0;
  int64_t indexed_created_ms = 0;
  // The ClusterQueue whose admitted index holds it ("" when not held).
  std::string indexed_admitted_queue;
  // When admission last looked at it (engine attempt counter), so a newer
  // failure of an equal workload can speak for it.
  int64_t attempt_stamp = 0;

  bool admitted() const { return state == State::kAdmitted; }
  int64_t RunStartMs() const {
    return run_started_ms >= 0 ? run_started_ms : admitted_at_ms;
  }
  void Explain(WaitReason why) {
    code = why.code;
    reason = std::move(why.text);
  }
  // A gang with fewer pods, counting those that succeeded, than minMember.
  bool ShortOfPods() const;
  // Admitted members bound and ready (Kueue: Ready or Succeeded pods).
  size_t ReadyMembers() const;
  // Every admitted member bound and ready, or they all were once since the
  // admission: Kueue's PodsReady condition, which waitForPodsReady's
  // timeout and blockAdmission wait for.
  bool PodsReady() const;
  // Members admission would place now: all existing pods for a single pod;
  // for a gang not yet admitted, the first by name of those still needed
  // (minMember less the members that succeeded).
  std::vector<const Pod*> MembersToAdmit() const;
  // Members beyond those admitted that exist (a running gang's extras).
  bool HasUnplacedMembers() const;
  // The first member not placed yet whose DRA claims quota cannot charge
  // as they stand (Pod::claim_hold), or null: a queued workload waits
  // while there is one.
  const Pod* MemberHeldByClaims() const;
  std::vector<const Pod*> UnplacedMembers() const;
};

// Sum of effective requests of `pods`, per resource.
ResourceList TotalRequests(const std::vector<const Pod*>& pods);

// Everything about a pending workload that admission looks at: queue,
// priority, topology, Volcano minimum and, per member, requests, node
// selection, tolerations and annotations (GPU shares, links). Workloads
// with equal signatures get the same verdict against the same state, so
// one failed attempt speaks for all of them in a pass (Kueue's
// equivalence hashing, KEP-9694). Names and creation times are left out.
std::string AdmissionSignature(const Workload& workload);
// The part of the signature placement depends on: the members and the
// topology, not the queue or priority.
std::string PlacementSignature(const Workload& workload);
// One member's part of PlacementSignature: everything about the pod that
// a node's fit verdict and score read.
std::string MemberSignature(const Pod& pod);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_WORKLOAD_H_
