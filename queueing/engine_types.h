// The values the queueing engine hands out: what happened to workloads
// (EngineEvent), what an object-in operation made of its input (Adoption,
// FinishOutcome, DeleteOutcome), and how the engine is set up
// (EngineOptions). engine.h re-exports them; the store and the admission
// cycle use them without the facade.
#ifndef GPUSCHED_QUEUEING_ENGINE_TYPES_H_
#define GPUSCHED_QUEUEING_ENGINE_TYPES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "queueing/preemption_planner.h"

namespace gpusched {

struct EngineEvent {
  enum class Type {
    kAdmitted,
    kAdopted,
    kPreempted,
    kFinished,
    kTimedOut,
    kEvicted,
    // Quota reserved for a workload whose admission checks now run.
    kQuotaReserved,
  };
  int64_t at_ms = 0;
  Type type = Type::kAdmitted;
  std::string workload;
  std::string by;
  std::string reason;
};

// "Admitted", "Adopted", ...: the simulator's report spells them so.
std::string_view EngineEventName(EngineEvent::Type type);

struct EngineOptions {
  bool requeue_preempted = true;
  // The simulator binds admitted members at once; the extender waits for
  // kube-scheduler's bind, and rolls back gangs not bound in time.
  bool bind_on_admission = false;
  // How long a workload whose eviction a disruption budget refused is left
  // alone by preemption (EvictionBlocked).
  RefusalBackoff eviction_refusal_backoff;
};

// What Adopt made of a pod found already running or admitted.
struct Adoption {
  enum class Outcome {
    kAdopted,          // placed on its node, its queue charged
    kAlreadyPlaced,    // the engine holds it there already: nothing changed
    kPlacedElsewhere,  // the engine holds it on another node: left as it is
    kNodeUnknown,      // its node is not in the model: not adopted
    kDoesNotFit,       // not bound, and its node cannot hold it now
  };
  Outcome outcome = Outcome::kAdopted;
  std::string reason;  // why not adopted
};

// What Finish made of the key it was given.
enum class FinishOutcome {
  kUnknownKey,        // neither a workload nor a pod the engine holds
  kMemberFinished,    // the pod left; its workload still has pods
  kWorkloadFinished,  // no pods are left: the workload is over
};

// What Delete made of the key it was given.
enum class DeleteOutcome {
  kUnknownKey,       // neither a workload nor a pod the engine holds
  kMemberDeleted,    // the pod left; its workload lives on (other pods, or
                     // a PodGroup that still declares it waits for new ones)
  kWorkloadDeleted,  // the workload is over: deleted by its key, or its
                     // last pod went
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_ENGINE_TYPES_H_
