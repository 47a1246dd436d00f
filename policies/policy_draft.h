#ifndef GPUSCHED_POLICIES_POLICY_DRAFT_H_
#define GPUSCHED_POLICIES_POLICY_DRAFT_H_

// Internal: objects decoded from every document of every file, each with
// where it came from and what it refers to. Cross-object checks run on the
// draft; only a draft without errors becomes a Policy.

#include <string>
#include <string_view>
#include <vector>

#include "policies/diagnostics.h"
#include "queueing/policy.h"

namespace gpusched::policy_internal {

enum class Kind {
  kResourceFlavor,
  kClusterQueue,
  kLocalQueue,
  kCohort,
  kWorkloadPriorityClass,
  kTopology,
  kSchedulerConfig,
  kConfiguration,  // Kueue's own (config.kueue.x-k8s.io)
  kAdmissionCheck,
  kProvisioningRequestConfig,
};

std::string_view KindName(Kind kind);

// A document: its file, the line of its first key, how errors name it, and
// the key objects of its kind are unique by (name, or namespace/name).
struct Origin {
  SourceFile file;
  int line = 0;
  std::string subject;      // `ClusterQueue "team-a"`
  std::string key;          // "team-a"; empty when metadata.name was bad
  int name_line = 0;        // line of metadata.name
  std::string api_version;  // "kueue.x-k8s.io/v1beta1"; "" when invalid
};

// A field that names another object.
struct Reference {
  Kind target;
  std::string name;
  std::string path;
  int line = 0;
};

template <typename T>
struct Decoded {
  T value;
  Origin origin;
  std::vector<Reference> references;
};

struct DecodedClusterQueue : Decoded<ClusterQueue> {
  // Line of spec.preemption.borrowWithinCohort.policy, for the check
  // against fair sharing (which the SchedulerConfig may switch on in
  // another file); 0 when unset.
  int borrow_within_cohort_line = 0;
};

// The SchedulerConfig with the lines of its sections that Kueue's
// Configuration also has (0: unset), so that the two never both set one.
struct DecodedSchedulerConfig : Decoded<SchedulerConfig> {
  int gang_line = 0;
  int fair_sharing_line = 0;
  int resources_line = 0;
};

// Kueue's Configuration: `mapped` holds what its waitForPodsReady,
// fairSharing and resources say in SchedulerConfig's terms; each section
// counts only where its line is set (0: the file leaves it out).
struct DecodedKueueConfiguration {
  Origin origin;
  SchedulerConfig mapped;
  int wait_for_pods_ready_line = 0;
  // v1beta2 without waitForPodsReady: Kueue v0.19.2 turns it on with its
  // defaults (apis/config/v1beta2/defaults.go); v0.17.0 left it off.
  bool wait_for_pods_ready_by_default = false;
  int fair_sharing_line = 0;
  int resources_line = 0;
  int admission_fair_sharing_line = 0;
};

struct PolicyDraft {
  std::vector<Decoded<ResourceFlavor>> flavors;
  std::vector<DecodedClusterQueue> cluster_queues;
  std::vector<Decoded<LocalQueue>> local_queues;
  std::vector<Decoded<Cohort>> cohorts;
  std::vector<Decoded<WorkloadPriorityClass>> priority_classes;
  std::vector<Decoded<Topology>> topologies;
  std::vector<DecodedSchedulerConfig> configs;
  std::vector<DecodedKueueConfiguration> kueue_configurations;
  std::vector<Decoded<AdmissionCheck>> admission_checks;
  std::vector<Decoded<ProvisioningRequestConfig>> provisioning_request_configs;
};

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_POLICY_DRAFT_H_
