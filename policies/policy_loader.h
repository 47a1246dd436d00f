#ifndef GPUSCHED_POLICIES_POLICY_LOADER_H_
#define GPUSCHED_POLICIES_POLICY_LOADER_H_

// Policy YAML -> Policy (queueing/policy.h), strictly validated.
//
// Input: multi-document YAML, any number of files merged into one policy.
// Each document has `apiVersion`, `kind` and `metadata.name` (LocalQueue
// also `metadata.namespace`). Kinds and field names are Kueue's, so that an
// admin who knows Kueue can write one and an existing Kueue config mostly
// loads as is:
//
//   ResourceFlavor         spec.{nodeLabels, nodeTaints, tolerations}
//   ClusterQueue           spec.{cohort | cohortName, namespaceSelector,
//                          queueingStrategy, resourceGroups, preemption,
//                          fairSharing.weight, admissionChecksStrategy,
//                          admissionChecks (v1beta1)}
//   LocalQueue             spec.{clusterQueue, fairSharing.weight}
//   Cohort                 spec.{parentName, resourceGroups,
//                          fairSharing.weight}
//   WorkloadPriorityClass  value, description
//   AdmissionCheck         spec.{controllerName, parameters}
//   ProvisioningRequestConfig spec.{provisioningClassName, parameters,
//                          managedResources, retryStrategy, podSetUpdates,
//                          podSetMergePolicy}
//   SchedulerConfig        gpusched's own, see below
//
// apiVersion: gpusched.io/v1alpha1, kueue.x-k8s.io/v1beta1 or
// kueue.x-k8s.io/v1beta2 (same meaning; Cohort also kueue.x-k8s.io/v1alpha1,
// where Kueue first served it). SchedulerConfig only gpusched.io/v1alpha1.
//
// Decisions, following Kueue where it has a rule:
// - metadata: name and namespace are read; labels, annotations, uid,
//   resourceVersion, generation, creationTimestamp, finalizers,
//   ownerReferences, managedFields and the like are accepted and ignored.
//   namespace on a cluster-scoped kind is ignored (kustomize sets it).
//   `status` is ignored on Kueue kinds (kubectl get -o yaml output loads).
//   Any other field, in metadata, spec or at the top, is an error.
// - Kueue fields gpusched does not implement (admissionScope,
//   ResourceFlavor topologyName,
//   toleration tolerationSeconds, and stopPolicy other than its default
//   None) are errors ("Unsupported field"), not silently different
//   behaviour. The defaults Kueue's CRDs write into every object the API
//   server returns load, so `kubectl get -o yaml` output does.
// - Names are RFC 1123 subdomains, namespaces RFC 1123 labels, resource
//   names and label keys qualified names; names are unique per kind
//   (LocalQueue per namespace/name).
// - ClusterQueue: `cohortName` (v1beta2) is an alias of `cohort`; setting
//   both is an error; "" means no cohort. A cohort or parentName with no
//   Cohort object is an implicit cohort, as in Kueue, not an error.
//   flavorFungibility takes Kueue's values and defaults (whenCanBorrow
//   MayStopSearch, whenCanPreempt TryNextFlavor); v1beta1's deprecated
//   `Borrow` and `Preempt` read as MayStopSearch in a v1beta1 document, as
//   Kueue's conversion maps them (v1beta2 refuses them, as its CRD does);
//   `preference` needs both TryNextFlavor
//   (Kueue's CEL rule). An absent namespaceSelector selects every
//   namespace (policy.h's meaning; in Kueue, v1beta1 and v1beta2 alike, it
//   selects none: README, "Where gpusched differs from Kueue on purpose"),
//   `{}` is the empty selector, also every namespace.
// - resourceGroups: each resource in one group's coveredResources only;
//   each flavor in one group only; a flavor's resources list exactly the
//   group's coveredResources, in order; nominalQuota required,
//   borrowingLimit/lendingLimit optional; all non-negative Kubernetes
//   quantities (`8`, `500m`, `64Gi`; numbers or strings); the limits only
//   with a cohort (a Cohort's only with a parentName); lendingLimit <=
//   nominalQuota. Flavors must be defined by a ResourceFlavor.
// - preemption: withinClusterQueue Never|LowerPriority|
//   LowerOrNewerEqualPriority, reclaimWithinCohort Never|LowerPriority|Any,
//   borrowWithinCohort {policy: Never|LowerPriority, maxPriorityThreshold};
//   all default Never. borrowWithinCohort needs reclaimWithinCohort !=
//   Never and cannot be combined with fair sharing.
// - Weights are non-negative decimal quantities ("0.5" or "500m" -> 500
//   milli), default 1. WorkloadPriorityClass value is an int32.
// - Admission checks (Kueue v0.19.2's CRDs): an AdmissionCheck's
//   controllerName must be kueue.x-k8s.io/provisioning-request, the only
//   controller gpusched carries out (a check of another controller would
//   never be marked, so its ClusterQueue could never admit: refused, and
//   the cluster's policy source leaves that queue out, inactive, as Kueue
//   keeps it inactive); its parameters {apiGroup kueue.x-k8s.io, kind
//   ProvisioningRequestConfig, name} are required and must name one.
//   ProvisioningRequestConfig: provisioningClassName required (a DNS
//   subdomain); parameters at most 100, values at most 255 characters;
//   managedResources qualified names, each once, at most 100;
//   retryStrategy {backoffLimitCount 3, backoffBaseSeconds 60,
//   backoffMaxSeconds 1800} each defaulted on its own, non-negative;
//   podSetUpdates.nodeSelector at most 8, keys unique;
//   podSetMergePolicy IdenticalPodTemplates |
//   IdenticalWorkloadSchedulingRequirements. A ClusterQueue's
//   admissionChecksStrategy.admissionChecks [{name, onFlavors}] (and in
//   v1beta1 also admissionChecks [name], never both) names each check
//   once, and each must exist; onFlavors is not checked against the
//   flavors (Kueue neither).
// - Cohort parents must not form a cycle (reported once, at the cohort with
//   the smallest name in the cycle).
//
// SchedulerConfig (at most one; every field optional, defaults in
// queueing/policy.h):
//   spec.fairSharing.enable                 false (Kueue's default)
//   spec.fairSharing.preemptionStrategies   [LessThanOrEqualToFinalShare,
//       LessThanInitialShare]; also [LessThanOrEqualToFinalShare] or
//       [LessThanInitialShare], the only lists Kueue accepts
//   spec.gang.admissionTimeout              300s, > 0
//   spec.gang.backoffBase                   10s, > 0
//   spec.gang.backoffMax                    5m, >= backoffBase
//   spec.gang.staleGangGracePeriod          60s
//   spec.starvationTimeout                  30m, > 0
//   spec.preemption.minimumRuntime          0s
//   spec.scoring                            {binpack: 1, spread: 0,
//       topology: 2, fragmentation: 3}; names of the scorer registry,
//       integers 0..100, at least one positive; as with --scoring, scorers
//       a given map leaves out get 0. Stored in registry order.
//   spec.topologyLevels                     [topology.kubernetes.io/zone,
//       gpusched.io/block, gpusched.io/rack, kubernetes.io/hostname];
//       label keys, widest first, each once
// Durations are Go's ("300s", "5m", "1h30m", "250ms"), whole milliseconds.
//
// Errors: every error of every document and file, sorted by file (in the
// order given), line and text, in Kubernetes' field-error words:
//   policy.yaml:23: ClusterQueue "team-a":
//   spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: Invalid
//   value "-1": must be non-negative
// (one line). Either a complete Policy or the errors, never both. A YAML
// syntax error stops its file (yaml-cpp cannot resume), not the others.
// The Policy's lists are sorted by name (LocalQueues by namespace/name);
// resource groups and flavors keep their written order, which is the order
// admission tries them.

#include <string>
#include <string_view>
#include <vector>

#include "policies/policy_error.h"
#include "queueing/policy.h"

namespace gpusched {

// Parses one file's text; `file_name` names it in errors.
PolicyResult ParsePolicyText(std::string_view yaml, std::string_view file_name);

// Reads and merges `paths` into one Policy; references may cross files. An
// unreadable file is an error like any other.
PolicyResult LoadPolicyFiles(const std::vector<std::string>& paths);

// One source of policy documents held in memory: a file's text, or one
// object read from the API server (JSON is YAML), named as errors name it.
struct PolicyText {
  std::string name;  // "policy.yaml", "clusterqueues/team-a"
  std::string text;

  bool operator==(const PolicyText&) const = default;
};

// Parses and merges `texts` into one Policy, as LoadPolicyFiles does files.
PolicyResult ParsePolicyTexts(const std::vector<PolicyText>& texts);

// As ParsePolicyTexts, but a text of `optional` with errors is left out
// (set_aside, with its first error) and the rest parsed again, until what
// is left loads: so is one that names an object left out (a LocalQueue of a
// ClusterQueue with errors), as Kueue keeps such objects inactive. Errors
// in `required` (the admin's file), or none that a text of `optional`
// owns, fail the whole, as ParsePolicyTexts does.
PolicyResult ParsePolicyTextsSettingAside(
    const std::vector<PolicyText>& optional,
    const std::vector<PolicyText>& required);

// The `gpusched validate` summary: per ClusterQueue its cohort, strategy,
// preemption and weight; per queue and flavor the nominal, borrowing and
// lending amount of each resource; the LocalQueues; the cohort tree with its
// queues; priority classes; the SchedulerConfig.
std::string PolicySummary(const Policy& policy);

}  // namespace gpusched

#endif  // GPUSCHED_POLICIES_POLICY_LOADER_H_
