// Errors across documents (references, duplicates, cycles, fair sharing),
// of the other kinds and of SchedulerConfig, and how errors aggregate.

#include <string>
#include <string_view>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/policies/error_case.h"

namespace gpusched {
namespace {

using ::gpusched::testing::CaseName;
using ::gpusched::testing::ErrorCase;
using ::gpusched::testing::ErrorsOf;
using ::testing::ElementsAreArray;

class PolicyErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(PolicyErrorTest, ReportsExactly) {
  EXPECT_THAT(ErrorsOf(GetParam().yaml), ElementsAreArray(GetParam().errors));
}

const ErrorCase kCrossObjectCases[] = {
    {"LocalQueueToMissingClusterQueue",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: default}
spec:
  clusterQueue: team-x
)",
     {"p.yaml:5: LocalQueue \"team-a/default\": spec.clusterQueue: Not found "
      "\"team-x\": no ClusterQueue of that name"}},
    {"CohortCycle",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: b}
spec: {parentName: c}
---
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Cohort
metadata: {name: a}
spec: {parentName: b}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: c}
spec: {parentName: a}
)",
     {"p.yaml:9: Cohort \"a\": spec.parentName: Invalid value \"b\": cohort "
      "cycle: a -> b -> c -> a"}},
    {"CohortIsItsOwnParent",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: a}
spec: {parentName: a}
)",
     {"p.yaml:4: Cohort \"a\": spec.parentName: Invalid value \"a\": cohort "
      "cycle: a -> a"}},
    {"DuplicateClusterQueue",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
---
apiVersion: gpusched.io/v1alpha1
kind: ClusterQueue
metadata:
  name: a
)",
     {"p.yaml:8: ClusterQueue \"a\": metadata.name: Duplicate value \"a\": "
      "already defined at p.yaml:3"}},
    {"DuplicateLocalQueueInOneNamespace",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: q}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-b, name: q}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: q}
spec: {clusterQueue: cq}
)",
     {"p.yaml:17: LocalQueue \"team-a/q\": metadata.name: Duplicate value "
      "\"q\": already defined at p.yaml:7"}},
    {"TwoSchedulerConfigs",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
---
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: other}
)",
     {"p.yaml:5: SchedulerConfig \"other\": Forbidden: at most one "
      "SchedulerConfig per policy; SchedulerConfig \"default\" is at "
      "p.yaml:1"}},
    {"BorrowWithinCohortWithFairSharing",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec: {fairSharing: {enable: true}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  cohort: c
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort:
      policy: LowerPriority
)",
     {"p.yaml:14: ClusterQueue \"a\": "
      "spec.preemption.borrowWithinCohort.policy: Invalid value "
      "\"LowerPriority\": must be Never when fair sharing is enabled "
      "(SchedulerConfig \"default\" at p.yaml:1)"}},
};

const ErrorCase kOtherKindCases[] = {
    {"PriorityValueOutOfRange",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: huge}
value: 3000000000
)",
     {"p.yaml:4: WorkloadPriorityClass \"huge\": value: Invalid value "
      "\"3000000000\": must be between -2147483648 and 2147483647"}},
    {"PriorityValueMissing",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: p}
description: no value
)",
     {"p.yaml:1: WorkloadPriorityClass \"p\": value: Required value"}},
    {"TaintWithoutEffect",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
spec:
  nodeTaints:
  - key: dedicated
    value: inference
)",
     {"p.yaml:6: ResourceFlavor \"f\": spec.nodeTaints[0].effect: Required "
      "value"}},
    {"TolerationExistsWithValue",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
spec:
  tolerations:
  - {key: dedicated, operator: Exists, value: inference}
)",
     {"p.yaml:6: ResourceFlavor \"f\": spec.tolerations[0].value: Invalid "
      "value \"inference\": must be empty when operator is Exists"}},
    {"LocalQueueStopPolicy",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: ns, name: q}
spec:
  clusterQueue: cq
  stopPolicy: Hold
)",
     {"p.yaml:10: LocalQueue \"ns/q\": spec.stopPolicy: Unsupported field: "
      "gpusched does not stop LocalQueues; only None"}},
};

// Kueue allows limits on a Cohort's own quota only below a parent.
const ErrorCase kCohortLimitWithoutParent = {"CohortLimitWithoutParent",
                                             R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: root}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: f
      resources: [{name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 4}]
)",
                                             {"p.yaml:13: Cohort \"root\": "
                                              "spec.resourceGroups[0].flavors["
                                              "0].resources[0].lendingLimit: "
                                              "Invalid value \"4\": must be "
                                              "unset when spec.parentName is "
                                              "empty"}};

const ErrorCase kSchedulerConfigCases[] = {
    {"BadDuration",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  starvationTimeout: 30 minutes
)",
     {"p.yaml:5: SchedulerConfig \"default\": spec.starvationTimeout: Invalid "
      "value \"30 minutes\": must be a duration such as 300s, 5m, 1h30m or "
      "250ms (unknown unit)"}},
    {"ZeroAdmissionTimeout",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  gang: {admissionTimeout: 0s}
)",
     {"p.yaml:5: SchedulerConfig \"default\": spec.gang.admissionTimeout: "
      "Invalid value \"0s\": must be greater than 0"}},
    {"BackoffMaxBelowBase",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  gang:
    backoffBase: 1m
    backoffMax: 30s
)",
     {"p.yaml:7: SchedulerConfig \"default\": spec.gang.backoffMax: Invalid "
      "value \"30s\": must be greater than or equal to gang.backoffBase "
      "(1m)"}},
    {"BackoffBaseAboveDefaultMax",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  gang: {backoffBase: 10m}
)",
     {"p.yaml:5: SchedulerConfig \"default\": spec.gang.backoffBase: Invalid "
      "value \"10m\": must be less than or equal to gang.backoffMax (5m, the "
      "default)"}},
    {"UnknownScorer",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  scoring:
    binpack: 1
    packing: 2
)",
     {"p.yaml:7: SchedulerConfig \"default\": spec.scoring.packing: Unknown "
      "field: scorers are \"binpack\", \"spread\", \"topology\", "
      "\"fragmentation\""}},
    {"ScoringWeightAbove100",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  scoring: {topology: 101}
)",
     {"p.yaml:5: SchedulerConfig \"default\": spec.scoring.topology: Invalid "
      "value \"101\": must be between 0 and 100"}},
    {"ScoringAllZero",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  scoring: {binpack: 0}
)",
     {"p.yaml:5: SchedulerConfig \"default\": spec.scoring: Invalid value: at "
      "least one scorer needs a positive weight"}},
    {"PreemptionStrategiesNotAKueueList",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  fairSharing:
    enable: true
    preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]
)",
     {"p.yaml:7: SchedulerConfig \"default\": "
      "spec.fairSharing.preemptionStrategies: Invalid value "
      "\"[LessThanInitialShare, LessThanOrEqualToFinalShare]\": must be one "
      "of [LessThanOrEqualToFinalShare, LessThanInitialShare], "
      "[LessThanOrEqualToFinalShare], [LessThanInitialShare]"}},
    {"TopologyLevelTwice",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  topologyLevels:
  - kubernetes.io/hostname
  - kubernetes.io/hostname
)",
     {"p.yaml:7: SchedulerConfig \"default\": spec.topologyLevels[1]: "
      "Duplicate value \"kubernetes.io/hostname\": each level may appear "
      "once"}},
    {"DeviceClassMappingsAsKueueSpellsThem",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  resources:
    deviceClassMappings:
    - name: nvidia.com/gpu
      deviceClassNames: [gpu.nvidia.com, Bad_Class]
    - name: example.com/h100
      deviceClassNames: [gpu.nvidia.com]
    - name: example.com/none
      deviceClassNames: []
    - deviceClassNames: [x.example.com]
)",
     {"p.yaml:8: SchedulerConfig \"default\": "
      "spec.resources.deviceClassMappings[0].deviceClassNames[1]: Invalid "
      "value \"Bad_Class\": a lowercase RFC 1123 subdomain must consist of "
      "lower case alphanumeric characters, '-' or '.', and must start and "
      "end with an alphanumeric character (e.g. 'team-a')",
      "p.yaml:10: SchedulerConfig \"default\": "
      "spec.resources.deviceClassMappings[1].deviceClassNames[0]: Duplicate "
      "value \"gpu.nvidia.com\": a DeviceClass maps to one resource",
      "p.yaml:12: SchedulerConfig \"default\": "
      "spec.resources.deviceClassMappings[2].deviceClassNames: Invalid "
      "value: must name at least one DeviceClass",
      "p.yaml:13: SchedulerConfig \"default\": "
      "spec.resources.deviceClassMappings[3].name: Required value"}},
    {"DeviceClassesOutsideQuotaNameEachClassOnce",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  resources:
    deviceClassMappings:
    - name: nvidia.com/gpu
      deviceClassNames: [gpu.nvidia.com]
    deviceClassesOutsideQuota: [nic.example.com, gpu.nvidia.com, Bad_Class]
)",
     {"p.yaml:9: SchedulerConfig \"default\": "
      "spec.resources.deviceClassesOutsideQuota[1]: Duplicate value "
      "\"gpu.nvidia.com\": a DeviceClass maps to one resource",
      "p.yaml:9: SchedulerConfig \"default\": "
      "spec.resources.deviceClassesOutsideQuota[2]: Invalid value "
      "\"Bad_Class\": a lowercase RFC 1123 subdomain must consist of lower "
      "case alphanumeric characters, '-' or '.', and must start and end with "
      "an alphanumeric character (e.g. 'team-a')"}},
    {"EnableNotABool",
     R"(
apiVersion: gpusched.io/v1alpha1
kind: SchedulerConfig
metadata: {name: default}
spec:
  fairSharing: {enable: yes please}
)",
     {"p.yaml:5: SchedulerConfig \"default\": spec.fairSharing.enable: "
      "Invalid value \"yes please\": must be true or false"}},
};

// Every document's errors, not the first only, in line order.
const ErrorCase kManyErrors = {
    "CollectsAllDocumentsInLineOrder",
    R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: ns, name: q}
spec: {clusterQueue: missing}
---
kind: Widget
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec: {queueingStrategy: LIFO, extra: 1}
)",
    {
        "p.yaml:4: LocalQueue \"ns/q\": "
        "spec.clusterQueue: Not found \"missing\": "
        "no ClusterQueue of that name",
        "p.yaml:6: document 2: kind: Unsupported "
        "value \"Widget\": supported values: "
        "\"AdmissionCheck\", \"ClusterQueue\", \"Cohort\", "
        "\"Configuration\", \"LocalQueue\", "
        "\"ProvisioningRequestConfig\", \"ResourceFlavor\", "
        "\"SchedulerConfig\", \"Topology\", "
        "\"WorkloadPriorityClass\"",
        "p.yaml:11: ClusterQueue \"cq\": "
        "spec.extra: Unknown field",
        "p.yaml:11: ClusterQueue \"cq\": "
        "spec.queueingStrategy: Unsupported value "
        "\"LIFO\": supported values: "
        "\"BestEffortFIFO\", \"StrictFIFO\"",
    }};

INSTANTIATE_TEST_SUITE_P(CrossObject, PolicyErrorTest,
                         ::testing::ValuesIn(kCrossObjectCases), CaseName);
INSTANTIATE_TEST_SUITE_P(OtherKinds, PolicyErrorTest,
                         ::testing::ValuesIn(kOtherKindCases), CaseName);
INSTANTIATE_TEST_SUITE_P(CohortLimits, PolicyErrorTest,
                         ::testing::Values(kCohortLimitWithoutParent),
                         CaseName);
INSTANTIATE_TEST_SUITE_P(SchedulerConfig, PolicyErrorTest,
                         ::testing::ValuesIn(kSchedulerConfigCases), CaseName);
INSTANTIATE_TEST_SUITE_P(Aggregation, PolicyErrorTest,
                         ::testing::Values(kManyErrors), CaseName);

}  // namespace
}  // namespace gpusched
