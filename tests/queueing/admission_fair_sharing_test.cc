// Admission Fair Sharing: the ledger's arithmetic (decay, entry penalty,
// weights) and the order it gives inside a usage-based ClusterQueue. The
// engine cases are Kueue v0.19.2's TestScheduleForAFS
// (pkg/scheduler/scheduler_afs_test.go) with GPUs for cpu.

#include "queueing/admission_fair_sharing.h"

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

constexpr char kGpuResource[] = "nvidia.com/gpu";
constexpr int64_t kSecond = 1000;

AdmissionFairSharingConfig TenSecondHalfLife() {
  return {.usage_half_life_ms = 10 * kSecond,
          .usage_sampling_interval_ms = 1 * kSecond};
}

// One ClusterQueue of 8 GPUs ordering by usage, LocalQueues lq-a, lq-b,
// lq-c (weight 1) and lq-zero (weight 0) in namespace "default".
Policy AfsPolicy(bool configured = true) {
  Policy policy = TwoTeams();
  policy.cluster_queues = {Queue("cq1", 8)};
  policy.cluster_queues[0].cohort.clear();
  policy.cluster_queues[0].admission_mode = AdmissionMode::kUsageBased;
  policy.local_queues.clear();
  for (const char* name : {"lq-a", "lq-b", "lq-c"}) {
    policy.local_queues.push_back(LocalQueue{"default", name, "cq1"});
  }
  policy.local_queues.push_back(
      LocalQueue{"default", "lq-zero", "cq1", /*fair_weight_milli=*/0});
  if (configured) policy.config.admission_fair_sharing = TenSecondHalfLife();
  return policy;
}

// A single pod of `gpus` GPUs in LocalQueue `lq`, created at `second`.
Pod PodIn(const std::string& lq, const std::string& name, int gpus,
          int64_t second) {
  Pod pod = QueuedPod("default", name, gpus);
  pod.meta.labels[kQueueNameLabel] = lq;
  pod.meta.creation_unix_seconds = 1'000 + second;
  ReadPodAdmissionState(pod);
  return pod;
}

bool AdmittedIn(const QueueingEngine& engine, const std::string& name) {
  auto it = engine.workloads().find("default/" + name);
  return it != engine.workloads().end() && it->second.admitted();
}

class AdmissionFairSharingEngineTest : public EngineFixture {
 protected:
  bool Admitted(const std::string& name) const {
    return AdmittedIn(*engine_, name);
  }
  // Kueue's CandidatesOrdering: within a usage-based ClusterQueue, the
  // victim comes from the LocalQueue that used more (lq-a, seeded with 8
  // GPUs), though wl-b was admitted later (which alone would make it the
  // victim). `configured`: with Admission Fair Sharing.
  std::string VictimOfPreemptionWithinTheQueue(bool configured) {
    Policy policy = AfsPolicy(configured);
    policy.cluster_queues[0].preemption.within_cluster_queue =
        WithinClusterQueue::kLowerPriority;
    Start(policy, 1);
    QueueingEngine& engine = *engine_;
    engine.RestoreAfsUsage("default/lq-a", {{kGpuResource, 8}});
    engine.AddPod(PodIn("lq-a", "wl-a", 4, 0), 0);
    engine.Schedule(0);
    engine.AddPod(PodIn("lq-b", "wl-b", 4, 1), 1 * kSecond);
    engine.Schedule(1 * kSecond);
    Pod urgent = PodIn("lq-c", "wl-c", 4, 2);
    urgent.priority = 10;
    engine.AddPod(urgent, 2 * kSecond);
    engine.Schedule(2 * kSecond);
    std::string victims;
    for (const char* name : {"wl-a", "wl-b"}) {
      if (!AdmittedIn(engine, name)) victims += name;
    }
    return victims;
  }
};

TEST(AdmissionFairSharingLedgerTest, UsageHalvesAfterOneHalfLife) {
  Policy policy = AfsPolicy();
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.Restore("default/lq-a", {{kGpuResource, 8}});
  afs.CatchUp(0);  // seeds lq-a, clock starts
  afs.NoteAdmitted({});
  afs.CatchUp(10 * kSecond);
  // 8 * 0.5^(10 s / 10 s) = 4
  EXPECT_NEAR(afs.usages().at("default/lq-a").consumed.at(kGpuResource), 4.0,
              1e-9);
  EXPECT_EQ(afs.usages().at("default/lq-a").last_update_ms, 10 * kSecond);
}

TEST(AdmissionFairSharingLedgerTest, UsageDecaysTowardsWhatIsAdmitted) {
  Policy policy = AfsPolicy();
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.CatchUp(0);
  afs.NoteAdmitted({{"default/lq-b", {{kGpuResource, 8}}}});
  afs.CatchUp(20 * kSecond);
  // 0 * 0.25 + 8 * (1 - 0.5^2) = 6
  EXPECT_NEAR(afs.usages().at("default/lq-b").consumed.at(kGpuResource), 6.0,
              1e-9);
}

// Samples are taken every interval after the last update: 2.5 s after the
// start, two 1 s samples are due, the last at 2 s.
TEST(AdmissionFairSharingLedgerTest, SamplesOnlyAtWholeIntervals) {
  Policy policy = AfsPolicy();
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.Restore("default/lq-a", {{kGpuResource, 8}});
  afs.CatchUp(0);
  afs.NoteAdmitted({});
  afs.CatchUp(2'500);
  // 8 * 0.5^(2 s / 10 s)
  EXPECT_NEAR(afs.usages().at("default/lq-a").consumed.at(kGpuResource),
              8 * std::pow(0.5, 0.2), 1e-9);
  EXPECT_EQ(afs.usages().at("default/lq-a").last_update_ms, 2'000);
}

TEST(AdmissionFairSharingLedgerTest, ZeroHalfLifeForgetsUsageAtEachSample) {
  Policy policy = AfsPolicy();
  policy.config.admission_fair_sharing->usage_half_life_ms = 0;
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.Restore("default/lq-a", {{kGpuResource, 8}});
  afs.CatchUp(0);
  afs.CatchUp(1 * kSecond);
  EXPECT_TRUE(afs.usages().at("default/lq-a").consumed.empty());
}

TEST(AdmissionFairSharingLedgerTest, AdmissionAddsTheEntryPenalty) {
  Policy policy = AfsPolicy();
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.CatchUp(0);
  afs.Settle("default/lq-a", "default/w", {{kGpuResource, 4}},
             {{kGpuResource, 4}}, 0);
  // No time passed: decay adds nothing; penalty 4 * (1 - 0.5^(1/10)).
  EXPECT_NEAR(afs.usages().at("default/lq-a").consumed.at(kGpuResource),
              4 * (1 - std::pow(0.5, 0.1)), 1e-9);
}

// usage = sum of resourceWeights[r] * consumed[r] / LocalQueue weight;
// cpu counts in cores (Kueue's quantity), not milli-CPU.
TEST(AdmissionFairSharingLedgerTest, UsageWeighsResourcesAndDividesByWeight) {
  Policy policy = AfsPolicy();
  policy.config.admission_fair_sharing->resource_weights = {
      {kGpuResource, 2.0}};
  policy.local_queues[0].fair_weight_milli = 2000;
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.Restore("default/lq-a", FlattenToKueueUnits({{{"h100", kGpuResource}, 3},
                                                   {{"h100", "cpu"}, 4000}}));
  afs.CatchUp(0);
  // (2 * 3 + 1 * 4) / 2 = 5
  EXPECT_DOUBLE_EQ(afs.Usage("default/lq-a"), 5.0);
}

TEST(AdmissionFairSharingLedgerTest, ZeroWeightIsInfiniteUsage) {
  Policy policy = AfsPolicy();
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.CatchUp(0);
  EXPECT_TRUE(std::isinf(afs.Usage("default/lq-zero")));
}

TEST(AdmissionFairSharingLedgerTest, RestoreLeavesASampledQueueAlone) {
  Policy policy = AfsPolicy();
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.CatchUp(0);
  afs.Restore("default/lq-a", {{kGpuResource, 8}});
  afs.CatchUp(0);
  EXPECT_TRUE(afs.usages().at("default/lq-a").consumed.empty());
}

TEST(AdmissionFairSharingLedgerTest, DroppedLocalQueueLosesItsUsage) {
  Policy policy = AfsPolicy();
  AdmissionFairSharing afs;
  afs.Configure(policy);
  afs.CatchUp(0);
  policy.local_queues.erase(policy.local_queues.begin());  // lq-a
  afs.Configure(policy);
  EXPECT_FALSE(afs.usages().contains("default/lq-a"));
  EXPECT_TRUE(afs.usages().contains("default/lq-b"));
}

// One of Kueue's TestScheduleForAFS cases: LocalQueue usage seeded as a
// restart seeds it, single pods (name, LocalQueue, GPUs, priority) created
// a second apart in this order, one pass on one 8-GPU node.
struct AfsCase {
  std::string name;
  bool configured = true;
  bool fair_sharing = false;  // SchedulerConfig fairSharing: the tournament
  QueueingStrategy strategy = QueueingStrategy::kBestEffortFifo;
  std::map<std::string, double> gpu_usage;  // by LocalQueue name
  struct Submitted {
    std::string name;
    std::string local_queue;
    int gpus = 8;
    int32_t priority = 0;
  };
  std::vector<Submitted> pods;
  std::set<std::string> admitted;  // the rest wait
};

class AdmissionFairSharingCaseTest
    : public EngineFixture,
      public ::testing::WithParamInterface<AfsCase> {
 protected:
  bool Admitted(const std::string& name) const {
    return AdmittedIn(*engine_, name);
  }
};

TEST_P(AdmissionFairSharingCaseTest, AdmitsWhatKueueAdmits) {
  const AfsCase& c = GetParam();
  Policy policy = AfsPolicy(c.configured);
  policy.cluster_queues[0].queueing_strategy = c.strategy;
  policy.config.fair_sharing = c.fair_sharing;
  Start(policy, 1);
  for (const auto& [lq, gpus] : c.gpu_usage) {
    engine_->RestoreAfsUsage("default/" + lq, {{kGpuResource, gpus}});
  }
  int64_t second = 0;
  for (const AfsCase::Submitted& p : c.pods) {
    Pod pod = PodIn(p.local_queue, p.name, p.gpus, second++);
    pod.priority = p.priority;
    engine_->AddPod(pod, 0);
  }
  engine_->Schedule(0);
  for (const AfsCase::Submitted& p : c.pods) {
    EXPECT_EQ(Admitted(p.name), c.admitted.contains(p.name)) << p.name;
  }
}

const AfsCase kKueueCases[] = {
    {.name = "LessActiveLocalQueueGoesFirst",
     .gpu_usage = {{"lq-a", 8}, {"lq-b", 2}},
     .pods = {{"wl-a1", "lq-a"}, {"wl-b1", "lq-b"}},
     .admitted = {"wl-b1"}},
    {.name = "WithoutConfigurationUsageIsIgnored",
     .configured = false,
     .gpu_usage = {{"lq-a", 8}, {"lq-b", 2}},
     .pods = {{"wl-a1", "lq-a"}, {"wl-b1", "lq-b"}},
     .admitted = {"wl-a1"}},
    {.name = "ZeroWeightLocalQueueGoesLast",
     .pods = {{"wl-z1", "lq-zero"}, {"wl-a1", "lq-a"}},
     .admitted = {"wl-a1"}},
    // Equal usage: wl-a1 goes first by creation; its entry penalty then
    // puts lq-a behind lq-b, and wl-b1 takes the rest before wl-a2.
    {.name = "EntryPenaltyAlternatesLocalQueues",
     .gpu_usage = {{"lq-a", 4}, {"lq-b", 4}},
     .pods = {{"wl-a1", "lq-a", 4},
              {"wl-a2", "lq-a", 4},
              {"wl-b1", "lq-b", 4},
              {"wl-b2", "lq-b", 4}},
     .admitted = {"wl-a1", "wl-b1"}},
    {.name = "FairSharingTournamentSeesTheEntryPenalty",
     .fair_sharing = true,
     .gpu_usage = {{"lq-a", 4}, {"lq-b", 4}},
     .pods = {{"wl-a1", "lq-a", 4},
              {"wl-a2", "lq-a", 4},
              {"wl-b1", "lq-b", 4},
              {"wl-b2", "lq-b", 4}},
     .admitted = {"wl-a1", "wl-b1"}},
    {.name = "EqualUsageAdmitsAllThatFit",
     .gpu_usage = {{"lq-a", 2}, {"lq-b", 2}, {"lq-c", 2}},
     .pods = {{"wl-a1", "lq-a", 4}, {"wl-b1", "lq-b", 3}, {"wl-c1", "lq-c", 1}},
     .admitted = {"wl-a1", "wl-b1", "wl-c1"}},
    {.name = "LocalQueueWithoutHistoryCountsAsIdle",
     .gpu_usage = {{"lq-a", 8}},
     .pods = {{"wl-a1", "lq-a"}, {"wl-b1", "lq-b"}},
     .admitted = {"wl-b1"}},
    // Usage is compared before priority (queueOrderingFunc wraps the
    // priority order).
    {.name = "UsageComesBeforePriority",
     .gpu_usage = {{"lq-a", 8}},
     .pods = {{"wl-a1", "lq-a", 8, 1000}, {"wl-b1", "lq-b"}},
     .admitted = {"wl-b1"}},
    {.name = "StrictFifoHeadIsTheLeastUsedQueues",
     .strategy = QueueingStrategy::kStrictFifo,
     .gpu_usage = {{"lq-a", 8}},
     .pods = {{"wl-a1", "lq-a"}, {"wl-b1", "lq-b"}},
     .admitted = {"wl-b1"}},
};

INSTANTIATE_TEST_SUITE_P(Kueue, AdmissionFairSharingCaseTest,
                         ::testing::ValuesIn(kKueueCases),
                         [](const ::testing::TestParamInfo<AfsCase>& info) {
                           return info.param.name;
                         });

// The admission's penalty and later samples show in the exported usage,
// which is what LocalQueue status writes.
TEST_F(AdmissionFairSharingEngineTest, AdmissionShowsInExportedUsage) {
  Start(AfsPolicy(), 1);
  engine_->AddPod(PodIn("lq-a", "wl-a1", 4, 0), 0);
  engine_->Schedule(0);
  ASSERT_TRUE(Admitted("wl-a1"));
  const double penalty = 4 * (1 - std::pow(0.5, 0.1));
  EXPECT_NEAR(engine_->AfsUsages().at("default/lq-a").consumed.at(kGpuResource),
              penalty, 1e-9);
  engine_->Schedule(10 * kSecond);
  // One half-life later: penalty / 2 + 4 GPUs admitted * 1/2.
  EXPECT_NEAR(engine_->AfsUsages().at("default/lq-a").consumed.at(kGpuResource),
              penalty / 2 + 2, 1e-9);
}

TEST_F(AdmissionFairSharingEngineTest, VictimComesFromTheBusierLocalQueue) {
  EXPECT_EQ(VictimOfPreemptionWithinTheQueue(true), "wl-a");
}

TEST_F(AdmissionFairSharingEngineTest, WithoutItTheNewestIsTheVictim) {
  EXPECT_EQ(VictimOfPreemptionWithinTheQueue(false), "wl-b");
}

}  // namespace
}  // namespace gpusched
