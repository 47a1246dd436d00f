// Valid policies: every field round-trips into the Policy, Kueue's own
// shapes load, files merge, and the result does not depend on how the
// documents are spread over files.

#include "policies/policy_loader.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/policies/policy_dump.h"

namespace gpusched {
namespace {

using testing::Dump;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::string TestData(const std::string& name) {
  return std::string(GPUSCHED_SOURCE_DIR) + "/tests/testdata/policies/" + name;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> Messages(const PolicyResult& result) {
  std::vector<std::string> out;
  for (const PolicyError& e : result.errors) out.push_back(e.message);
  return out;
}

constexpr int64_t kGi = int64_t{1} << 30;

// What full.yaml says, built by hand.
Policy ExpectedFullPolicy() {
  Policy p;
  p.flavors = {
      {.name = "a100-mig"},
      {.name = "h100",
       .node_labels = {{"gpusched.io/block", "block-1"},
                       {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}},
       .node_taints = {{"nvidia.com/gpu", "present", "NoSchedule"}},
       .tolerations = {{"nvidia.com/gpu", "Exists", "", "NoSchedule"},
                       {"dedicated", "Equal", "training", ""}}},
  };
  ClusterQueue team_a{
      .name = "team-a",
      .cohort = "research",  // spelled cohortName (v1beta2)
      .namespace_selector =
          LabelSelector{
              .match_labels = {{"team", "a"}},
              .match_expressions = {{"tier", "In", {"gold", "silver"}},
                                    {"sandbox", "DoesNotExist", {}}}},
      .queueing_strategy = QueueingStrategy::kStrictFifo,
      .resource_groups =
          {{.covered_resources = {"cpu", "memory", "nvidia.com/gpu"},
            .flavors = {{"h100",
                         {{"cpu", 96'000, 500, std::nullopt},  // "96", 500m
                          {"memory", 1024 * kGi, std::nullopt, 512 * kGi},
                          {"nvidia.com/gpu", 8, 8, 4}}}}},
           {.covered_resources = {"nvidia.com/mig-1g.5gb"},
            .flavors = {{"a100-mig", {{"nvidia.com/mig-1g.5gb", 16}}}}}},
      .preemption = {.within_cluster_queue =
                         WithinClusterQueue::kLowerOrNewerEqualPriority,
                     .reclaim_within_cohort = ReclaimWithinCohort::kAny,
                     .borrow_within_cohort = BorrowWithinCohort::kLowerPriority,
                     .max_priority_threshold = 100},
      .fair_weight_milli = 500,  // "0.5"
  };
  ClusterQueue team_c{
      .name = "team-c",
      .cohort = "research",
      .namespace_selector = LabelSelector{},  // {}
      .preemption = {.reclaim_within_cohort =
                         ReclaimWithinCohort::kLowerPriority},
  };
  p.cluster_queues = {team_a, {.name = "team-b"}, team_c};
  p.local_queues = {{"team-a", "batch", "team-b"},
                    {"team-a", "training", "team-a"}};
  p.cohorts = {
      {.name = "research",
       .parent = "org",
       .resource_groups =
           {{.covered_resources = {"nvidia.com/gpu"},
             .flavors = {{"h100", {{"nvidia.com/gpu", 4, std::nullopt, 2}}}}}},
       .fair_weight_milli = 2000}};
  p.priority_classes = {{"prod", 1000}, {"scavenger", -10}};
  SchedulerConfig& c = p.config;
  c.preemption_strategies = {FairPreemptionStrategy::kLessThanInitialShare};
  c.gang_admission_timeout_ms = 150'000;  // 2m30s
  c.gang_backoff_max_ms = 3'600'000;      // 1h
  c.starvation_timeout_ms = 2'700'000;    // 45m
  c.preemption_minimum_runtime_ms = 90'000;
  // Scorers the map leaves out get 0, as with --scoring.
  c.scoring = {
      {"binpack", 5}, {"spread", 0}, {"topology", 1}, {"fragmentation", 0}};
  c.topology_levels = {"topology.kubernetes.io/zone", "kubernetes.io/hostname"};
  c.device_class_mappings = {
      {"nvidia.com/gpu", {"gpu.nvidia.com", "h100.example.com"}}};
  return p;
}

TEST(PolicyLoaderTest, FullFileRoundTripsIntoThePolicy) {
  const PolicyResult result = LoadPolicyFiles({TestData("full.yaml")});
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  EXPECT_EQ(Dump(*result.policy), Dump(ExpectedFullPolicy()));
}

TEST(PolicyLoaderTest, TextAndFileGiveTheSamePolicy) {
  const PolicyResult from_text =
      ParsePolicyText(ReadText(TestData("full.yaml")), "full.yaml");
  ASSERT_TRUE(from_text.ok());
  EXPECT_EQ(Dump(*from_text.policy), Dump(ExpectedFullPolicy()));
}

TEST(PolicyLoaderTest, EmptyInputIsAnEmptyPolicyWithDefaultConfig) {
  const PolicyResult result = ParsePolicyText("# nothing yet\n", "empty.yaml");
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(Dump(*result.policy), Dump(Policy{}));
}

TEST(PolicyLoaderTest, KueueSampleLoadsAsIs) {
  const PolicyResult result = LoadPolicyFiles({TestData("kueue-sample.yaml")});
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  const Policy& p = *result.policy;
  ASSERT_EQ(p.cluster_queues.size(), 3u);
  const ClusterQueue& team_a = p.cluster_queues[1];
  EXPECT_EQ(team_a.name, "team-a-cq");
  EXPECT_EQ(team_a.cohort, "team-ab");  // implicit: no Cohort object
  ASSERT_EQ(team_a.resource_groups.size(), 1u);
  const FlavorQuotas& spot = team_a.resource_groups[0].flavors[0];
  EXPECT_EQ(spot.flavor, "spot");
  EXPECT_EQ(spot.resources[0].borrowing_limit, 6000);  // 6 cpu in milli
  EXPECT_EQ(spot.resources[1].borrowing_limit, 24 * kGi);
  EXPECT_EQ(team_a.resource_groups[0].flavors[1].resources[0].lending_limit,
            9000);
  EXPECT_EQ(team_a.preemption.max_priority_threshold, 100);
  EXPECT_EQ(p.cluster_queues[0].resource_groups[0].flavors[0].resources[2].name,
            "pods");
  EXPECT_THAT(p.priority_classes, ::testing::SizeIs(1));
  EXPECT_EQ(p.priority_classes[0].value, 10000);
  EXPECT_EQ(p.flavors[2].tolerations[0].op, "Exists");
}

// The v1beta2 example of reference/peers-queueing.md §2.1: everything
// loads; its flavor names a Topology the example leaves out, which is the
// one error (Kueue keeps such a flavor's ClusterQueue inactive).
TEST(PolicyLoaderTest, KueueV1beta2ExampleFailsOnlyOnItsMissingTopology) {
  const std::string yaml = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: { name: h100 }
spec:
  nodeLabels: { gpu.example.com/model: h100 }
  topologyName: dc-topology
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: { name: research }
spec:
  parentName: org
  fairSharing: { weight: "2" }
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: { name: team-a }
spec:
  cohortName: research
  namespaceSelector: { matchLabels: { team: a } }
  queueingStrategy: BestEffortFIFO
  fairSharing: { weight: "1" }
  flavorFungibility: { whenCanBorrow: MayStopSearch, whenCanPreempt: TryNextFlavor }
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
    borrowWithinCohort: { policy: LowerPriority, maxPriorityThreshold: 100 }
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - { name: cpu, nominalQuota: 96 }
      - { name: memory, nominalQuota: 1Ti }
      - { name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 8, lendingLimit: 4 }
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: { name: user-queue, namespace: team-a }
spec: { clusterQueue: team-a }
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: { name: prod }
value: 1000
description: production training
)";
  EXPECT_THAT(
      Messages(ParsePolicyText(yaml, "kueue.yaml")),
      ElementsAre("kueue.yaml:6: ResourceFlavor \"h100\": spec.topologyName: "
                  "Not found \"dc-topology\": no Topology of that name"));
}

TEST(PolicyLoaderTest, FilesMergeWithReferencesAcrossThem) {
  const PolicyResult result = LoadPolicyFiles({TestData("multi/queues.yaml"),
                                               TestData("multi/flavors.yaml"),
                                               TestData("multi/config.yaml")});
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  EXPECT_EQ(result.policy->flavors[0].name, "h100");
  EXPECT_EQ(
      result.policy->cluster_queues[0].resource_groups[0].flavors[0].flavor,
      "h100");
  EXPECT_EQ(result.policy->local_queues[0].cluster_queue, "team-a");
  EXPECT_TRUE(result.policy->config.fair_sharing);
}

TEST(PolicyLoaderTest, MergedErrorsNameTheirFileAndFollowFileOrder) {
  const std::string queues = TestData("multi/queues.yaml");
  const std::string config = TestData("multi/config.yaml");
  const std::string conflicts = TestData("multi/conflicts.yaml");
  const std::vector<std::string> paths = {TestData("multi/flavors.yaml"),
                                          queues, config, conflicts};
  EXPECT_THAT(
      Messages(LoadPolicyFiles(paths)),
      ElementsAre(conflicts +
                      ":4: ClusterQueue \"team-a\": metadata.name: Duplicate "
                      "value \"team-a\": already defined at " +
                      queues + ":4",
                  conflicts +
                      ":9: ClusterQueue \"team-a\": "
                      "spec.preemption.borrowWithinCohort.policy: Invalid "
                      "value \"LowerPriority\": must be Never when fair "
                      "sharing is enabled (SchedulerConfig \"default\" at " +
                      config + ":1)",
                  conflicts +
                      ":18: ClusterQueue \"team-b\": "
                      "spec.resourceGroups[0].flavors[0].name: Not found "
                      "\"a100\": no ResourceFlavor of that name"));
}

// "Defined twice" blames the later file in the order given.
TEST(PolicyLoaderTest, FileOrderDecidesWhichDefinitionIsTheDuplicate) {
  const std::string queues = TestData("multi/queues.yaml");
  const std::string conflicts = TestData("multi/conflicts.yaml");
  const PolicyResult result =
      LoadPolicyFiles({conflicts, queues, TestData("multi/flavors.yaml")});
  ASSERT_FALSE(result.errors.empty());
  EXPECT_EQ(result.errors.front().file, conflicts);  // a100 not found
  EXPECT_EQ(result.errors.back().message,
            queues +
                ":4: ClusterQueue \"team-a\": metadata.name: Duplicate "
                "value \"team-a\": already defined at " +
                conflicts + ":4");
  EXPECT_EQ(result.errors.back().line, 4);
}

TEST(PolicyLoaderTest, UnreadableFileIsAnErrorAndOthersAreStillChecked) {
  const std::string missing = TestData("multi/no-such-file.yaml");
  EXPECT_THAT(
      Messages(LoadPolicyFiles({missing, TestData("multi/queues.yaml")})),
      ElementsAre(missing + ": cannot read the file: No such file or "
                            "directory",
                  TestData("multi/queues.yaml") +
                      ":10: ClusterQueue \"team-a\": "
                      "spec.resourceGroups[0].flavors[0].name: Not "
                      "found \"h100\": no ResourceFlavor of that "
                      "name"));
}

// Splitting the same documents differently over files, in another order,
// yields the same Policy.
TEST(PolicyLoaderTest, PolicyDoesNotDependOnFileOrder) {
  const PolicyResult a = LoadPolicyFiles({TestData("multi/flavors.yaml"),
                                          TestData("multi/queues.yaml"),
                                          TestData("multi/config.yaml")});
  const PolicyResult b = LoadPolicyFiles({TestData("multi/config.yaml"),
                                          TestData("multi/queues.yaml"),
                                          TestData("multi/flavors.yaml")});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(Dump(*a.policy), Dump(*b.policy));
}

// Texts held in memory merge as files do; each error names its text.
TEST(PolicyLoaderTest, TextsMergeAsFilesAndErrorsNameTheirText) {
  const PolicyResult merged =
      ParsePolicyTexts({{.name = "multi/flavors.yaml",
                         .text = ReadText(TestData("multi/flavors.yaml"))},
                        {.name = "multi/queues.yaml",
                         .text = ReadText(TestData("multi/queues.yaml"))},
                        {.name = "multi/config.yaml",
                         .text = ReadText(TestData("multi/config.yaml"))}});
  const PolicyResult files = LoadPolicyFiles({TestData("multi/flavors.yaml"),
                                              TestData("multi/queues.yaml"),
                                              TestData("multi/config.yaml")});
  ASSERT_TRUE(merged.ok() && files.ok());
  EXPECT_EQ(Dump(*merged.policy), Dump(*files.policy));
  const PolicyResult bad = ParsePolicyTexts(
      {{.name = "clusterqueues/a",
        .text = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
                "metadata: {name: a}\nspec: {stopPolicy: Hold}\n"}});
  EXPECT_THAT(Messages(bad),
              ElementsAre("clusterqueues/a:4: ClusterQueue \"a\": "
                          "spec.stopPolicy: Unsupported field: gpusched does "
                          "not stop ClusterQueues; only None"));
}

// The API server writes Kueue's CRD defaults into every object: those a
// gpusched policy means anyway load.
TEST(PolicyLoaderTest, KueueDefaultsTheApiServerWritesLoad) {
  const PolicyResult result = ParsePolicyText(R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {stopPolicy: None, namespaceSelector: {}}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: ns, name: q}
spec: {clusterQueue: cq, stopPolicy: None, fairSharing: {weight: "2"}}
)",
                                              "served.yaml");
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  EXPECT_EQ(result.policy->local_queues[0].fair_weight_milli, 2000);
}

PolicyText Doc(std::string name, std::string yaml) {
  return {.name = std::move(name), .text = std::move(yaml)};
}

// Kueue's objects as the cluster holds them: a ClusterQueue naming a flavor
// nobody created, a LocalQueue of it, and a queue that is fine.
std::vector<PolicyText> ClusterObjects() {
  return {
      Doc("resourceflavors/h100",
          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\n"
          "metadata: {name: h100}\n"),
      Doc("clusterqueues/good",
          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
          "metadata: {name: good}\n"),
      Doc("clusterqueues/bad",
          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
          "metadata: {name: bad}\nspec:\n  resourceGroups:\n"
          "  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
          "    - name: a100\n      resources:\n"
          "      - {name: nvidia.com/gpu, nominalQuota: 8}\n"),
      Doc("localqueues/ml/bad",
          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
          "metadata: {namespace: ml, name: bad}\nspec: {clusterQueue: bad}\n"),
      Doc("localqueues/ml/good",
          "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\n"
          "metadata: {namespace: ml, name: good}\n"
          "spec: {clusterQueue: good}\n")};
}

TEST(PolicyLoaderTest, ObjectsWithErrorsAndThoseNamingThemAreSetAside) {
  const PolicyResult result =
      ParsePolicyTextsSettingAside(ClusterObjects(), {});
  ASSERT_TRUE(result.ok()) << ::testing::PrintToString(Messages(result));
  ASSERT_EQ(result.policy->cluster_queues.size(), 1u);
  EXPECT_EQ(result.policy->cluster_queues[0].name, "good");
  ASSERT_EQ(result.policy->local_queues.size(), 1u);
  EXPECT_EQ(result.policy->local_queues[0].name, "good");
  ASSERT_EQ(result.set_aside.size(), 2u);
  EXPECT_EQ(result.set_aside[0].name, "clusterqueues/bad");
  EXPECT_THAT(result.set_aside[0].message,
              ::testing::HasSubstr("Not found \"a100\": no ResourceFlavor"));
  EXPECT_EQ(result.set_aside[1].name, "localqueues/ml/bad");
  EXPECT_THAT(result.set_aside[1].message,
              ::testing::HasSubstr("Not found \"bad\": no ClusterQueue"));
}

TEST(PolicyLoaderTest, ErrorsInTheRequiredFileFailTheWhole) {
  const PolicyResult result = ParsePolicyTextsSettingAside(
      ClusterObjects(),
      {Doc("policy.yaml",
           "apiVersion: gpusched.io/v1alpha1\nkind: SchedulerConfig\n"
           "metadata: {name: default}\nspec: {starvationTimeout: 0s}\n")});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(Messages(result),
              ::testing::Contains(::testing::StartsWith("policy.yaml:4:")));
}

}  // namespace
}  // namespace gpusched
