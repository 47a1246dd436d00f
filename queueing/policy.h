#ifndef GPUSCHED_QUEUEING_POLICY_H_
#define GPUSCHED_QUEUEING_POLICY_H_

// Quota policy as admins write it (Kueue's objects and field meanings, plus
// gpusched's SchedulerConfig), as plain values. policies/ parses YAML into
// these; the queueing core reads them. Quantities use ResourceList's units
// (cpu in milli-CPU, everything else in base units).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/dra_quota.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

struct ResourceQuota {
  std::string name;  // "nvidia.com/gpu", "cpu", ...
  int64_t nominal = 0;
  // Unset: Kueue's defaults (borrow up to what the cohort has; lend all).
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
};

struct FlavorQuotas {
  std::string flavor;  // a ResourceFlavor name
  std::vector<ResourceQuota> resources;
};

struct ResourceGroup {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotas> flavors;  // in the order admission tries them
};

enum class QueueingStrategy { kBestEffortFifo, kStrictFifo };

// Kueue's fair-sharing preemption strategies (FairStrategyPasses says what
// each allows).
enum class FairPreemptionStrategy {
  kLessThanOrEqualToFinalShare,
  kLessThanInitialShare,
};

// Kueue's name for it, as a SchedulerConfig writes it.
constexpr std::string_view FairPreemptionStrategyName(
    FairPreemptionStrategy strategy) {
  return strategy == FairPreemptionStrategy::kLessThanOrEqualToFinalShare
             ? "LessThanOrEqualToFinalShare"
             : "LessThanInitialShare";
}
enum class WithinClusterQueue {
  kNever,
  kLowerPriority,
  kLowerOrNewerEqualPriority
};
enum class ReclaimWithinCohort { kNever, kLowerPriority, kAny };
enum class BorrowWithinCohort { kNever, kLowerPriority };

struct PreemptionPolicy {
  WithinClusterQueue within_cluster_queue = WithinClusterQueue::kNever;
  ReclaimWithinCohort reclaim_within_cohort = ReclaimWithinCohort::kNever;
  BorrowWithinCohort borrow_within_cohort = BorrowWithinCohort::kNever;
  std::optional<int32_t> max_priority_threshold;  // borrowWithinCohort
};

// Kueue's flavorFungibility: whether the flavor search goes on past a
// flavor the workload fits only by borrowing or only by preempting, and
// which of the flavors found wins when none fits outright.
enum class FungibilityPolicy { kMayStopSearch, kTryNextFlavor };
enum class FlavorPreference {
  kBorrowingOverPreemption,
  kPreemptionOverBorrowing
};

struct FlavorFungibility {
  FungibilityPolicy when_can_borrow = FungibilityPolicy::kMayStopSearch;
  FungibilityPolicy when_can_preempt = FungibilityPolicy::kTryNextFlavor;
  // Unset behaves as BorrowingOverPreemption (Kueue's isPreferred).
  std::optional<FlavorPreference> preference;
};

// A Kubernetes label selector (namespaceSelector).
struct LabelSelector {
  StringMap match_labels;
  std::vector<NodeSelectorRequirement>
      match_expressions;  // In/NotIn/Exists/DoesNotExist
};

struct ResourceFlavor {
  std::string name;
  StringMap node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;
  // spec.topologyName: the Topology whose levels a gang placed in this
  // flavor may name; "" without (the SchedulerConfig's levels then).
  std::string topology_name;
};

// Kueue's Topology: the node label keys of its levels, widest domain first
// (spec.levels[].nodeLabel).
struct Topology {
  std::string name;
  std::vector<std::string> levels;
};

// A ClusterQueue's admissionScope.admissionMode: with
// UsageBasedAdmissionFairSharing (and Kueue's admissionFairSharing
// configured) its pending workloads go by their LocalQueue's decayed usage
// first (admission_fair_sharing.h).
enum class AdmissionMode { kNoAdmissionFairSharing, kUsageBased };

// Fair-sharing weights are kept in thousandths ("0.5" -> 500) so that
// shares compare as integers.
inline constexpr int64_t kDefaultFairWeightMilli = 1000;

// Kueue's admission checks. gpusched carries out only the checks of the
// ProvisioningRequest controller (it acts as that controller); a check of
// any other controller could never be marked, so the policy refuses it.
inline constexpr std::string_view kProvisioningRequestController =
    "kueue.x-k8s.io/provisioning-request";

// A ClusterQueue's spec.admissionChecksStrategy.admissionChecks[] entry
// (v1beta1's spec.admissionChecks names read as entries without flavors).
struct AdmissionCheckRule {
  std::string name;  // an AdmissionCheck
  // The check runs only for workloads assigned one of these flavors;
  // empty: for every workload of the queue.
  std::vector<std::string> on_flavors;
};

struct AdmissionCheck {
  std::string name;
  std::string controller_name;              // kProvisioningRequestController
  std::string provisioning_request_config;  // spec.parameters.name
};

// ProvisioningRequestConfig spec.retryStrategy, with Kueue's defaults.
struct ProvisioningRetryStrategy {
  int32_t backoff_limit_count = 3;
  int32_t backoff_base_seconds = 60;
  int32_t backoff_max_seconds = 1800;
};

// spec.podSetUpdates.nodeSelector[]: the node selector the workload's pods
// get once provisioned, valued from the request's provisioningClassDetails.
struct ProvisioningNodeSelectorUpdate {
  std::string key;
  std::string value_from_provisioning_class_detail;
};

enum class PodSetMergePolicy {
  kNone,  // unset: every pod set is its own PodTemplate
  kIdenticalPodTemplates,
  kIdenticalWorkloadSchedulingRequirements,
};

struct ProvisioningRequestConfig {
  std::string name;
  std::string provisioning_class_name;
  StringMap parameters;
  // Empty: every resource is managed.
  std::vector<std::string> managed_resources;
  ProvisioningRetryStrategy retry_strategy;
  std::vector<ProvisioningNodeSelectorUpdate> node_selector_updates;
  PodSetMergePolicy pod_set_merge_policy = PodSetMergePolicy::kNone;
};

struct ClusterQueue {
  std::string name;
  std::string cohort;  // empty: none
  // Unset selects every namespace (Kueue's default for an empty selector).
  std::optional<LabelSelector> namespace_selector;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFifo;
  std::vector<ResourceGroup> resource_groups;
  PreemptionPolicy preemption;
  FlavorFungibility flavor_fungibility;
  int64_t fair_weight_milli = kDefaultFairWeightMilli;
  std::vector<AdmissionCheckRule> admission_checks;  // sorted by name
  AdmissionMode admission_mode = AdmissionMode::kNoAdmissionFairSharing;
};

struct LocalQueue {
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;
  // spec.fairSharing.weight, for Admission Fair Sharing (default 1).
  int64_t fair_weight_milli = 1000;
};

struct Cohort {
  std::string name;
  std::string parent;                          // empty: a root
  std::vector<ResourceGroup> resource_groups;  // quota owned by the cohort
  int64_t fair_weight_milli = kDefaultFairWeightMilli;
};

// Kueue's waitForPodsReady.requeuingStrategy.timestamp: which time orders a
// workload requeued after PodsReadyTimeout in its queue.
enum class RequeuingTimestamp { kEviction, kCreation };

struct WorkloadPriorityClass {
  std::string name;
  int32_t value = 0;
};

// Kueue's Configuration admissionFairSharing: how fast a LocalQueue's
// usage decays, how often it is sampled, and what each resource weighs in
// the one number that orders LocalQueues.
struct AdmissionFairSharingConfig {
  int64_t usage_half_life_ms = 0;  // 0: usage is forgotten at every sample
  int64_t usage_sampling_interval_ms = 300'000;
  // Resource name -> weight; a resource not listed weighs 1.
  std::map<std::string, double> resource_weights;
};

// gpusched.io/v1alpha1 SchedulerConfig; every field has a default.
struct SchedulerConfig {
  bool fair_sharing = false;  // Kueue's default: off
  // Kueue's default strategy list; only the lists Kueue accepts are valid.
  std::vector<FairPreemptionStrategy> preemption_strategies = {
      FairPreemptionStrategy::kLessThanOrEqualToFinalShare,
      FairPreemptionStrategy::kLessThanInitialShare};
  int64_t gang_admission_timeout_ms = 300'000;
  int64_t gang_backoff_base_ms = 10'000;
  int64_t gang_backoff_max_ms = 300'000;
  // How long an admitted gang may run short of minMember before it is
  // evicted whole; kNeverEvictShortGang never (Kueue's recoveryTimeout 0s).
  int64_t stale_gang_grace_ms = 60'000;
  static constexpr int64_t kNeverEvictShortGang = -1;
  // Kueue's requeuingStrategy.backoffLimitCount: after this many requeues
  // by PodsReadyTimeout the next timeout deactivates the workload
  // (RequeuingLimitExceeded). Unset: requeued without end.
  std::optional<int32_t> gang_backoff_limit_count;
  // waitForPodsReady.blockAdmission: while a queued workload admitted
  // earlier has members not bound yet, no other queued workload is
  // admitted (one that must preempt still plans; running gangs still grow).
  bool gang_block_admission = false;
  // requeuingStrategy.timestamp: with Eviction, a workload rolled back by
  // PodsReadyTimeout queues (and compares in preemption) from its rollback
  // on, as Kueue's GetQueueOrderTimestamp does; gpusched's own default is
  // Creation.
  RequeuingTimestamp requeuing_timestamp = RequeuingTimestamp::kCreation;
  int64_t starvation_timeout_ms = 1'800'000;
  int64_t preemption_minimum_runtime_ms = 0;
  // Scorer name -> weight, as ScoringWeights::Parse takes them.
  std::vector<std::pair<std::string, int>> scoring = {
      {"binpack", 1}, {"spread", 0}, {"topology", 2}, {"fragmentation", 3}};
  // Node label keys, widest domain first.
  std::vector<std::string> topology_levels = {
      "topology.kubernetes.io/zone", "gpusched.io/block", "gpusched.io/rack",
      "kubernetes.io/hostname"};
  // resources.deviceClassMappings, as Kueue's Configuration spells it:
  // which quota resource a DRA claim's devices of a class count as. Empty:
  // the defaults (scheduler/dra_quota.h).
  std::vector<DeviceClassMapping> device_class_mappings;
  // Set only by Kueue's Configuration; unset: Admission Fair Sharing off,
  // whatever a ClusterQueue's admissionScope says (as in Kueue).
  std::optional<AdmissionFairSharingConfig> admission_fair_sharing;
};

// Everything one policy file (or set of files) defines.
struct Policy {
  std::vector<ResourceFlavor> flavors;
  std::vector<ClusterQueue> cluster_queues;
  std::vector<LocalQueue> local_queues;
  std::vector<Cohort> cohorts;
  std::vector<WorkloadPriorityClass> priority_classes;
  std::vector<AdmissionCheck> admission_checks;  // sorted by name
  std::vector<ProvisioningRequestConfig> provisioning_request_configs;
  std::vector<Topology> topologies;
  SchedulerConfig config;
  // Not written by admins: Admission Fair Sharing's usage per LocalQueue
  // ("ns/name" -> resource -> amount, cpu in cores) as the LocalQueues'
  // status.fairSharing.admissionFairSharingStatus kept it when gpusched
  // started, so that usage survives a restart or a failover as in Kueue.
  // The engine seeds the LocalQueues it has no usage for.
  std::map<std::string, std::map<std::string, double>> afs_usage_at_start;
};

// The topology levels a gang placed in `flavor` may name: its Topology's
// when it names one, else the SchedulerConfig's (also for a null flavor).
const std::vector<std::string>& TopologyLevelsOf(const Policy& policy,
                                                 const ResourceFlavor* flavor);

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_POLICY_H_
