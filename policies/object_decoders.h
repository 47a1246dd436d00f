#ifndef GPUSCHED_POLICIES_OBJECT_DECODERS_H_
#define GPUSCHED_POLICIES_OBJECT_DECODERS_H_

// Internal: one decoder per kind. Each reads the kind's own top-level fields
// (spec, value, ...) from `top`, whose apiVersion, kind and metadata the
// document decoder has read, and appends the object to the draft even when
// some field was wrong (the errors are already reported; the draft then
// never becomes a Policy), so that references to it still resolve and do
// not add false "Not found" errors.

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "policies/policy_draft.h"
#include "policies/yaml_reader.h"
#include "queueing/policy.h"

namespace gpusched::policy_internal {

void DecodeResourceFlavor(DocContext& doc, MapReader& top, Origin origin,
                          PolicyDraft* draft);
void DecodeClusterQueue(DocContext& doc, MapReader& top, Origin origin,
                        PolicyDraft* draft);
void DecodeLocalQueue(DocContext& doc, MapReader& top, Origin origin,
                      std::string namespace_name, PolicyDraft* draft);
void DecodeCohort(DocContext& doc, MapReader& top, Origin origin,
                  PolicyDraft* draft);
void DecodeWorkloadPriorityClass(DocContext& doc, MapReader& top, Origin origin,
                                 PolicyDraft* draft);
void DecodeTopology(DocContext& doc, MapReader& top, Origin origin,
                    PolicyDraft* draft);
void DecodeSchedulerConfig(DocContext& doc, MapReader& top, Origin origin,
                           PolicyDraft* draft);
// Kueue's Configuration (policies/kueue_configuration.cc).
void DecodeKueueConfiguration(DocContext& doc, MapReader& top, Origin origin,
                              PolicyDraft* draft);

// Kueue's admission check kinds (policies/admission_check_decoders.cc).
void DecodeAdmissionCheck(DocContext& doc, MapReader& top, Origin origin,
                          PolicyDraft* draft);
void DecodeProvisioningRequestConfig(DocContext& doc, MapReader& top,
                                     Origin origin, PolicyDraft* draft);
// A ClusterQueue's spec.admissionChecksStrategy, and in a v1beta1 document
// also spec.admissionChecks (never both), as rules sorted by check name;
// the checks and flavors named go to `references`.
std::vector<AdmissionCheckRule> DecodeClusterQueueChecks(
    DocContext& doc, MapReader& spec, bool v1beta1,
    std::vector<Reference>* references);

// fairSharing of a SchedulerConfig or of Kueue's Configuration:
// {enable, preemptionStrategies}; v1beta2 of Kueue's Configuration has no
// `enable`, its presence switches fair sharing on (`presence_enables`).
void DecodeFairSharingConfig(DocContext& doc, const Value& value,
                             bool presence_enables, SchedulerConfig* config);
// resources.deviceClassMappings: [{name, deviceClassNames}]; a DeviceClass
// already in `classes` is a duplicate.
std::vector<DeviceClassMapping> DecodeDeviceClassMappings(
    DocContext& doc, const Value& value,
    std::set<std::string, std::less<>>& classes);

// Where a quota tree node sits: Kueue allows borrowingLimit and
// lendingLimit only on a node that has a parent to borrow from or lend to.
struct QuotaOwner {
  bool has_parent = false;
  std::string_view parent_field;  // "spec.cohort" or "spec.parentName"
};

// spec.resourceGroups of a ClusterQueue or a Cohort. Flavor names are
// appended to `references`, checked once every file is read.
std::vector<ResourceGroup> DecodeResourceGroups(
    DocContext& doc, const Value& value, const QuotaOwner& owner,
    std::vector<Reference>* references);

// A cohort name (spec.cohort, spec.parentName). Empty means none, as in
// Kueue; a name without a Cohort object is an implicit cohort, so the
// reference is recorded for the cycle check only.
std::optional<std::string> ReadCohortReference(
    DocContext& doc, const Value& value, std::vector<Reference>* references);

// spec.flavorFungibility of a ClusterQueue: {whenCanBorrow,
// whenCanPreempt, preference}; Kueue's defaults when absent. `v1beta1`
// also accepts that version's deprecated Borrow and Preempt.
FlavorFungibility DecodeFlavorFungibility(DocContext& doc, const Value& value,
                                          bool v1beta1);

// spec.fairSharing: {weight}.
int64_t DecodeFairSharing(DocContext& doc, const Value& value);

}  // namespace gpusched::policy_internal

#endif  // GPUSCHED_POLICIES_OBJECT_DECODERS_H_
