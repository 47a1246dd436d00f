// The `gpusched validate` output: the summary of a valid policy, and the
// error listing of an invalid one.

#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/policy_loader.h"
#include "policies/validate_report.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

constexpr char kSmallPolicy[] = R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata: {name: research}
spec:
  parentName: org
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: 2}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohort: research
  namespaceSelector: {matchLabels: {team: a}}
  fairSharing: {weight: "0.5"}
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: cpu, nominalQuota: 1500m}
      - {name: memory, nominalQuota: 64Gi, lendingLimit: 32Gi}
      - {name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: solo}
spec: {queueingStrategy: StrictFIFO}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: team-a, name: default}
spec: {clusterQueue: team-a}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata: {name: prod}
value: 1000
)";

TEST(PolicySummaryTest, TablesOfQueuesQuotasAndCohorts) {
  const PolicyResult result = ParsePolicyText(kSmallPolicy, "small.yaml");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(
      PolicySummary(*result.policy),
      R"(Policy: 2 ClusterQueues, 1 LocalQueue, 1 Cohort, 1 ResourceFlavor, 1 WorkloadPriorityClass

ClusterQueues:
  CLUSTERQUEUE  COHORT    STRATEGY        PREEMPTION (WITHIN/RECLAIM/BORROW)    WEIGHT  NAMESPACES
  solo          -         StrictFIFO      Never/Never/Never                     1       *
  team-a        research  BestEffortFIFO  LowerPriority/Any/LowerPriority<=100  0.5     team=a

Quotas (limit "-": borrow up to what the cohort lends; lend all unused quota):
  OWNER            FLAVOR  RESOURCE        NOMINAL  BORROWING-LIMIT  LENDING-LIMIT
  team-a           h100    cpu             1500m    -                -
                           memory          64Gi     -                32Gi
                           nvidia.com/gpu  8        4                -
  cohort/research  h100    nvidia.com/gpu  2        -                -

LocalQueues:
  NAMESPACE  LOCALQUEUE  CLUSTERQUEUE
  team-a     default     team-a

Cohorts:
  Cohort org (implicit)
    Cohort research (weight 1)
      ClusterQueue team-a

WorkloadPriorityClasses:
  WORKLOADPRIORITYCLASS  VALUE
  prod                   1000

SchedulerConfig:
  fairSharing: disabled (preemptionStrategies LessThanOrEqualToFinalShare, LessThanInitialShare)
  gang: admissionTimeout 5m, backoff 10s to 5m, staleGangGracePeriod 1m
  starvationTimeout 30m, preemption minimumRuntime 0s
  scoring: binpack=1, spread=0, topology=2, fragmentation=3
  topologyLevels: topology.kubernetes.io/zone > gpusched.io/block > gpusched.io/rack > kubernetes.io/hostname
  deviceClassMappings: (defaults: gpu.nvidia.com and classes with extendedResourceName)
)");
}

// A Topology's levels widest first, and the flavors that name it; the
// flavors of the other Topology none.
TEST(PolicySummaryTest, TopologiesWithTheirLevelsAndFlavors) {
  const PolicyResult result = ParsePolicyText(
      R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: dc}
spec:
  levels: [{nodeLabel: gpusched.io/rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: unused}
spec:
  levels: [{nodeLabel: gpusched.io/block}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
spec: {nodeLabels: {gpu: h100}, topologyName: dc}
)",
      "t.yaml");
  ASSERT_TRUE(result.ok()) << result.errors.at(0).message;
  EXPECT_THAT(
      PolicySummary(*result.policy),
      HasSubstr("\nTopologies:\n"
                "  TOPOLOGY  LEVELS                                     "
                "FLAVORS\n"
                "  dc        gpusched.io/rack > kubernetes.io/hostname  "
                "h100\n"
                "  unused    gpusched.io/block                          "
                "-\n"));
}

TEST(ValidateReportTest, ErrorsGoToStderrWithACount) {
  const std::string path = std::string(GPUSCHED_SOURCE_DIR) +
                           "/tests/testdata/policies/multi/queues.yaml";
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(ValidatePolicyFiles({path}, out, err), 1);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), path +
                           ":10: ClusterQueue \"team-a\": "
                           "spec.resourceGroups[0].flavors[0].name: Not found "
                           "\"h100\": no ResourceFlavor of that name\n"
                           "1 error; the policy was not loaded\n");
}

TEST(ValidateReportTest, ValidFilesPrintOkAndTheSummary) {
  const std::string dir =
      std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/policies/multi/";
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(ValidatePolicyFiles({dir + "flavors.yaml", dir + "queues.yaml"},
                                out, err),
            0);
  EXPECT_EQ(err.str(), "");
  EXPECT_THAT(out.str(), HasSubstr("flavors.yaml, " + dir +
                                   "queues.yaml: OK\n\nPolicy: 1 "
                                   "ClusterQueue, 1 LocalQueue"));
}

}  // namespace
}  // namespace gpusched
