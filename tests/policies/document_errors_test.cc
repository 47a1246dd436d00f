// Errors inside one document (envelope, ClusterQueue fields, resource
// groups), each with its exact text and line.

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

class DocumentErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(DocumentErrorTest, ReportsExactly) {
  EXPECT_THAT(ErrorsOf(GetParam().yaml), ElementsAreArray(GetParam().errors));
}

// The issue's own example, on its line 23.
const ErrorCase kNegativeQuota = {"NegativeNominalQuota",
                                  R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: b}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: a
      resources:
      - name: cpu
        nominalQuota: 8
    - name: b
      resources:
      - {name: cpu, nominalQuota: -1}
)",
                                  {"p.yaml:23: ClusterQueue \"team-a\": "
                                   "spec.resourceGroups[0].flavors[1]."
                                   "resources[0].nominalQuota: Invalid value "
                                   "\"-1\": must be non-negative"}};

const ErrorCase kEnvelopeCases[] = {
    {"MissingKind",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
metadata: {name: a}
)",
     {"p.yaml:1: document 1: kind: Required value"}},
    {"UnknownKind",
     R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: a}
)",
     {"p.yaml:2: document 1: kind: Unsupported value \"ConfigMap\": supported "
      "values: \"AdmissionCheck\", \"ClusterQueue\", \"Cohort\", "
      "\"Configuration\", \"LocalQueue\", \"ProvisioningRequestConfig\", "
      "\"ResourceFlavor\", \"SchedulerConfig\", \"Topology\", "
      "\"WorkloadPriorityClass\""}},
    {"WrongApiVersion",
     R"(
apiVersion: kueue.x-k8s.io/v1
kind: ResourceFlavor
metadata: {name: a}
)",
     {"p.yaml:1: ResourceFlavor \"a\": apiVersion: Unsupported value "
      "\"kueue.x-k8s.io/v1\": supported values: \"gpusched.io/v1alpha1\", "
      "\"kueue.x-k8s.io/v1beta1\", \"kueue.x-k8s.io/v1beta2\""}},
    {"KueueApiVersionOnSchedulerConfig",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: SchedulerConfig
metadata: {name: default}
)",
     {"p.yaml:1: SchedulerConfig \"default\": apiVersion: Unsupported value "
      "\"kueue.x-k8s.io/v1beta1\": supported values: "
      "\"gpusched.io/v1alpha1\""}},
    {"MissingName",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  labels: {team: a}
)",
     {"p.yaml:4: ResourceFlavor (document 1): metadata.name: Required "
      "value"}},
    {"InvalidName",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: Team_A}
)",
     {"p.yaml:3: ClusterQueue \"Team_A\": metadata.name: Invalid value "
      "\"Team_A\": a lowercase RFC 1123 subdomain must consist of lower case "
      "alphanumeric characters, '-' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'team-a')"}},
    {"LocalQueueWithoutNamespace",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: q}
spec: {clusterQueue: cq}
)",
     {"p.yaml:3: LocalQueue \"q\": metadata.namespace: Required value: a "
      "LocalQueue lives in a namespace",
      // Other errors of the document are still found.
      "p.yaml:4: LocalQueue \"q\": spec.clusterQueue: Not found \"cq\": no "
      "ClusterQueue of that name"}},
    {"UnknownTopLevelField",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: a}
data: {x: y}
)",
     {"p.yaml:4: ResourceFlavor \"a\": data: Unknown field"}},
    {"UnknownMetadataField",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: a
  labels: {team: a}
  annotations: {note: fine}
  nmae: typo
)",
     {"p.yaml:7: ResourceFlavor \"a\": metadata.nmae: Unknown field"}},
    {"DocumentNotAMapping",
     R"(
- a
- b
)",
     {"p.yaml:1: document 1: Invalid value: must be a mapping, not a list"}},
    {"RepeatedKey",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  queueingStrategy: StrictFIFO
  queueingStrategy: BestEffortFIFO
)",
     {"p.yaml:6: ClusterQueue \"a\": spec.queueingStrategy: Duplicate field: "
      "the key appears more than once"}},
    {"YamlSyntaxError",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: [ResourceFlavor
metadata: {name: a}
)",
     {"p.yaml:3: YAML syntax error: end of sequence flow not found "
      "(column 9)"}},
};

const ErrorCase kClusterQueueCases[] = {
    {"UnknownSpecField",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  cohort: c
  quota: 8
)",
     {"p.yaml:6: ClusterQueue \"a\": spec.quota: Unknown field"}},
    {"UnsupportedKueueField",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  stopPolicy: Hold
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.stopPolicy: Unsupported field: "
      "gpusched does not stop ClusterQueues; only None"}},
    {"CohortAndCohortName",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec: {cohort: x, cohortName: y}
)",
     {"p.yaml:4: ClusterQueue \"a\": spec.cohortName: Forbidden: set "
      "spec.cohort or spec.cohortName (the v1beta2 spelling of the same "
      "field), not both"}},
    {"UnsupportedQueueingStrategy",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec: {queueingStrategy: FIFO}
)",
     {"p.yaml:4: ClusterQueue \"a\": spec.queueingStrategy: Unsupported "
      "value \"FIFO\": supported values: \"BestEffortFIFO\", "
      "\"StrictFIFO\""}},
    {"UnsupportedPreemptionPolicy",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  preemption: {withinClusterQueue: Any}
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.preemption.withinClusterQueue: "
      "Unsupported value \"Any\": supported values: \"Never\", "
      "\"LowerPriority\", \"LowerOrNewerEqualPriority\""}},
    {"BorrowWithinCohortNeedsReclaim",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  cohort: c
  preemption:
    reclaimWithinCohort: Never
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
)",
     {"p.yaml:8: ClusterQueue \"a\": "
      "spec.preemption.borrowWithinCohort.policy: Invalid value "
      "\"LowerPriority\": must be Never when reclaimWithinCohort is Never"}},
    {"NegativeWeight",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec: {fairSharing: {weight: "-1"}}
)",
     {"p.yaml:4: ClusterQueue \"a\": spec.fairSharing.weight: Invalid value "
      "\"-1\": must be non-negative"}},
    {"SelectorInWithoutValues",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  namespaceSelector:
    matchExpressions:
    - {key: team, operator: In}
)",
     {"p.yaml:7: ClusterQueue \"a\": "
      "spec.namespaceSelector.matchExpressions[0].values: Required value: In "
      "and NotIn need at least one value"}},
    {"SelectorExistsWithValues",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  namespaceSelector:
    matchExpressions:
    - {key: team, operator: Exists, values: [a]}
)",
     {"p.yaml:7: ClusterQueue \"a\": "
      "spec.namespaceSelector.matchExpressions[0].values: Forbidden: Exists "
      "and DoesNotExist take no values"}},
    // An empty cohort means none, as in Kueue; limits then are errors.
    {"EmptyCohortIsNoCohort",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  cohort: ""
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 1, lendingLimit: 1}]}]
)",
     {"p.yaml:12: ClusterQueue \"a\": "
      "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid "
      "value \"1\": must be unset when spec.cohort is empty"}},
};

// One flavor "f" and a ClusterQueue "q" in cohort "c" whose single group
// starts on line 11; cases append their groups (after a newline).
std::string QueueWithGroups(std::string_view groups) {
  return std::string(R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  cohort: c
  resourceGroups:
)") + std::string(groups.substr(1));
}

const ErrorCase kResourceGroupCases[] = {
    {"MalformedQuantity",
     QueueWithGroups(R"(
  - coveredResources: [memory]
    flavors:
    - name: f
      resources:
      - {name: memory, nominalQuota: 64GB}
)"),
     {"p.yaml:15: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid "
      "value \"64GB\": must be a Kubernetes quantity such as 8, 500m or 64Gi "
      "(unknown suffix \"GB\" at character 3)"}},
    {"MissingNominalQuota",
     QueueWithGroups(R"(
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources:
      - name: cpu
)"),
     {"p.yaml:15: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Required "
      "value"}},
    {"ResourceCoveredTwice",
     QueueWithGroups(R"(
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources: [{name: cpu, nominalQuota: 1}]
  - coveredResources: [memory, cpu]
    flavors:
    - name: g
      resources: [{name: memory, nominalQuota: 1}, {name: cpu, nominalQuota: 1}]
)"),
     {"p.yaml:15: ClusterQueue \"q\": "
      "spec.resourceGroups[1].coveredResources[1]: Duplicate value \"cpu\": "
      "resource already listed at spec.resourceGroups[0].coveredResources[0]",
      "p.yaml:17: ClusterQueue \"q\": "
      "spec.resourceGroups[1].flavors[0].name: Not found \"g\": no "
      "ResourceFlavor of that name"}},
    {"FlavorInTwoGroups",
     QueueWithGroups(R"(
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources: [{name: cpu, nominalQuota: 1}]
  - coveredResources: [memory]
    flavors:
    - name: f
      resources: [{name: memory, nominalQuota: 1}]
)"),
     {"p.yaml:17: ClusterQueue \"q\": "
      "spec.resourceGroups[1].flavors[0].name: Duplicate value \"f\": flavor "
      "already listed at spec.resourceGroups[0].flavors[0].name"}},
    {"ResourcesOutOfOrder",
     QueueWithGroups(R"(
  - coveredResources: [cpu, memory]
    flavors:
    - name: f
      resources:
      - {name: memory, nominalQuota: 1}
      - {name: cpu, nominalQuota: 1}
)"),
     {"p.yaml:15: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value "
      "\"memory\": must match coveredResources: \"cpu\"",
      "p.yaml:16: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].resources[1].name: Invalid value "
      "\"cpu\": must match coveredResources: \"memory\""}},
    {"ResourceMissingFromFlavor",
     QueueWithGroups(R"(
  - coveredResources: [cpu, memory]
    flavors:
    - name: f
      resources:
      - {name: cpu, nominalQuota: 1}
)"),
     {"p.yaml:15: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].resources: Invalid value: must list "
      "the resources of coveredResources, in order (cpu, memory)"}},
    {"LendingLimitAboveNominal",
     QueueWithGroups(R"(
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: f
      resources:
      - name: nvidia.com/gpu
        nominalQuota: 8
        lendingLimit: 9
        borrowingLimit: -2
)"),
     {"p.yaml:17: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid "
      "value \"9\": must be less than or equal to nominalQuota (8)",
      "p.yaml:18: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit: "
      "Invalid value \"-2\": must be non-negative"}},
    {"UndefinedFlavor",
     QueueWithGroups(R"(
  - coveredResources: [cpu]
    flavors:
    - name: h200
      resources: [{name: cpu, nominalQuota: 1}]
)"),
     {"p.yaml:13: ClusterQueue \"q\": "
      "spec.resourceGroups[0].flavors[0].name: Not found \"h200\": no "
      "ResourceFlavor of that name"}},
};

const ErrorCase kLimitWithoutCohort = {"BorrowingLimitWithoutCohort",
                                       R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: f}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: q}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: f
      resources: [{name: cpu, nominalQuota: 4, borrowingLimit: 2}]
)",
                                       {"p.yaml:13: ClusterQueue \"q\": "
                                        "spec.resourceGroups[0].flavors[0]."
                                        "resources[0].borrowingLimit: Invalid "
                                        "value \"2\": must be unset when "
                                        "spec.cohort is empty"}};

// spec.flavorFungibility: Kueue's enums (v1beta1's Borrow and Preempt
// each only in its own field) and its CEL rule on preference.
const ErrorCase kFlavorFungibilityCases[] = {
    {"UnknownWhenCanBorrow",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility: {whenCanBorrow: Never}
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.flavorFungibility.whenCanBorrow: "
      "Unsupported value \"Never\": supported values: \"MayStopSearch\", "
      "\"TryNextFlavor\""}},
    {"BorrowIsOnlyV1beta1",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility: {whenCanBorrow: Borrow}
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.flavorFungibility.whenCanBorrow: "
      "Unsupported value \"Borrow\": supported values: \"MayStopSearch\", "
      "\"TryNextFlavor\""}},
    {"PreemptIsNoWhenCanBorrowValue",
     R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility: {whenCanBorrow: Preempt}
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.flavorFungibility.whenCanBorrow: "
      "Unsupported value \"Preempt\": supported values: \"MayStopSearch\", "
      "\"TryNextFlavor\", \"Borrow\""}},
    {"UnknownWhenCanPreempt",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility:
    whenCanPreempt: Borrow
)",
     {"p.yaml:6: ClusterQueue \"a\": spec.flavorFungibility.whenCanPreempt: "
      "Unsupported value \"Borrow\": supported values: \"MayStopSearch\", "
      "\"TryNextFlavor\""}},
    {"UnknownPreference",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
    preference: Cheapest
)",
     {"p.yaml:7: ClusterQueue \"a\": spec.flavorFungibility.preference: "
      "Unsupported value \"Cheapest\": supported values: "
      "\"BorrowingOverPreemption\", \"PreemptionOverBorrowing\""}},
    {"PreferenceNeedsTryNextFlavorForBorrowing",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility:
    preference: BorrowingOverPreemption
)",
     {"p.yaml:6: ClusterQueue \"a\": spec.flavorFungibility.preference: "
      "Invalid value \"BorrowingOverPreemption\": preference can only be set "
      "when both whenCanBorrow and whenCanPreempt are TryNextFlavor"}},
    {"PreferenceNeedsTryNextFlavorForPreemption",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
    whenCanPreempt: MayStopSearch
    preference: PreemptionOverBorrowing
)",
     {"p.yaml:8: ClusterQueue \"a\": spec.flavorFungibility.preference: "
      "Invalid value \"PreemptionOverBorrowing\": preference can only be "
      "set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"}},
    {"UnknownField",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility: {whenCanReclaim: TryNextFlavor}
)",
     {"p.yaml:5: ClusterQueue \"a\": "
      "spec.flavorFungibility.whenCanReclaim: Unknown field"}},
    {"NotAMapping",
     R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: a}
spec:
  flavorFungibility: TryNextFlavor
)",
     {"p.yaml:5: ClusterQueue \"a\": spec.flavorFungibility: Invalid value "
      "\"TryNextFlavor\": must be a mapping"}},
};

INSTANTIATE_TEST_SUITE_P(IssueExample, DocumentErrorTest,
                         ::testing::Values(kNegativeQuota), CaseName);
INSTANTIATE_TEST_SUITE_P(Envelope, DocumentErrorTest,
                         ::testing::ValuesIn(kEnvelopeCases), CaseName);
INSTANTIATE_TEST_SUITE_P(ClusterQueue, DocumentErrorTest,
                         ::testing::ValuesIn(kClusterQueueCases), CaseName);
INSTANTIATE_TEST_SUITE_P(ResourceGroups, DocumentErrorTest,
                         ::testing::ValuesIn(kResourceGroupCases), CaseName);
INSTANTIATE_TEST_SUITE_P(Limits, DocumentErrorTest,
                         ::testing::Values(kLimitWithoutCohort), CaseName);
INSTANTIATE_TEST_SUITE_P(FlavorFungibility, DocumentErrorTest,
                         ::testing::ValuesIn(kFlavorFungibilityCases),
                         CaseName);

}  // namespace
}  // namespace gpusched
