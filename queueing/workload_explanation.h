// Why one workload waits, in full: the answer to `explain`. Computed on
// demand for the one workload asked about, from the engine and the model
// it plans on (the admission loop answers it on its own thread, between
// passes), never for every workload of every pass.
#ifndef GPUSCHED_QUEUEING_WORKLOAD_EXPLANATION_H_
#define GPUSCHED_QUEUEING_WORKLOAD_EXPLANATION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "queueing/quota_tree.h"
#include "queueing/reason_code.h"
#include "scheduler/cluster_model.h"
#include "scheduler/dra_explain.h"

namespace gpusched {

class QueueingEngine;
struct Workload;

// One level of the quota arithmetic for one flavor-resource the workload
// asks for: its ClusterQueue first, then each cohort up to the root.
struct QuotaLevel {
  std::string node;  // the ClusterQueue's name, or the cohort's
  bool cohort = false;
  FlavorResource fr;
  int64_t nominal = 0;  // the node's own quota
  int64_t used = 0;     // a ClusterQueue's usage; what a cohort holds for
                        // the children that use beyond their guarantee
  // Only on the ClusterQueue's level: what it may still take with
  // borrowing, what it could take if the cohort were idle, what it uses
  // beyond nominal, and its limit.
  int64_t available = 0;
  int64_t most_ever = 0;
  int64_t borrowed = 0;
  std::optional<int64_t> borrowing_limit;
  int64_t asks = 0;  // what the workload needs of it
  friend bool operator==(const QuotaLevel&, const QuotaLevel&) = default;
};

// Nodes that answered the same to the workload's first member.
struct NodeGroup {
  std::string verdict;  // "fits", or the node's reason
  int nodes = 0;
  std::vector<std::string> examples;  // up to three node names
  // On nodes with DRA devices that refused a member with claims: how the
  // devices stand against the requests they cannot meet (DraNodeShortage).
  std::string dra;
  friend bool operator==(const NodeGroup&, const NodeGroup&) = default;
};

// What preempting for a pending workload would do now: planned as an
// admission pass plans it (Kueue's candidates and order, trials of quota
// and placement), nothing evicted.
struct PreemptionPreview {
  enum class Verdict {
    kNotAllowed,       // its ClusterQueue's policy never preempts
    kNoCandidates,     // nobody may be preempted for it
    kCannotFit,        // it would not fit even with every candidate gone
    kBlockedByBudget,  // the victims it needs are protected by a budget
    kFitsWithout,      // it fits without evicting anyone
    kWouldEvict,       // evicting `victims` admits it
  };
  struct Victim {
    std::string key;  // "namespace/name"
    std::string namespace_name;
    std::string cluster_queue;
    int32_t priority = 0;
    std::string reason;  // Kueue's: "InClusterQueue: preempted by ..."
    friend bool operator==(const Victim&, const Victim&) = default;
  };
  Verdict verdict = Verdict::kNotAllowed;
  std::vector<Victim> victims;
  std::string reason;  // kBlockedByBudget: whom it waits for, and why
  friend bool operator==(const PreemptionPreview&,
                         const PreemptionPreview&) = default;
};
std::string_view PreemptionVerdictName(PreemptionPreview::Verdict verdict);

struct WorkloadExplanation {
  std::string key;
  std::string namespace_name;
  std::string local_queue;
  std::string cluster_queue;
  std::string cohort;  // the ClusterQueue's, empty when none
  enum class State { kPending, kAdmitted, kFinished } state = State::kPending;
  // From 0, as Kueue counts; of how many pending in each queue.
  size_t position_in_cluster_queue = 0;
  size_t pending_in_cluster_queue = 0;
  size_t position_in_local_queue = 0;
  size_t pending_in_local_queue = 0;
  ReasonCode code = ReasonCode::kNone;
  std::string message;
  int members = 0;
  int min_member = 1;
  std::vector<QuotaLevel> quota;
  std::vector<NodeGroup> placement;  // most nodes first
  // What the ClusterQueue's preemption policy lets it take, in words; and
  // what the engine's last attempt said when it was preempting.
  std::string preemption;
  // The dry run: what preempting for it would do now (explain of a
  // pending workload; none otherwise).
  std::optional<PreemptionPreview> preemption_preview;
  // Its DRA claims (a member that has any): the requests, their charge,
  // and for an admitted workload each member's devices by their DRA names.
  std::optional<DraExplanation> dra;
  friend bool operator==(const WorkloadExplanation&,
                         const WorkloadExplanation&) = default;
};

// NotFound when the engine has no workload of that key ("ns/name" of the
// PodGroup or of a single pod). `dra` is where the claims' full demand and
// charge are read (the live DRA sync); unset, only what the pods carry.
absl::StatusOr<WorkloadExplanation> ExplainWorkload(
    const QueueingEngine& engine, const ClusterModel& model,
    std::string_view key, const DraLookup& dra = {});

// workload_explanation_dra.cc: the DRA part of a workload's explanation,
// from its first member with claims; none when no member has any. Sets
// `demand` to that member's demand (for the node groups' DRA shortage).
std::optional<DraExplanation> ExplainWorkloadDra(
    const Workload& w, const ClusterModel& model, const DraLookup& lookup,
    const std::vector<DeviceClassMapping>& mappings, DraDemand& demand);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_WORKLOAD_EXPLANATION_H_
