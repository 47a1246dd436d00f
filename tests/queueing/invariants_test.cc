// The invariant checks: each passes on states the engine makes and fails on
// a deliberately broken one.
#include "queueing/invariants.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

const FlavorResource kH100Gpu{"h100", "nvidia.com/gpu"};

PodAllocation Alloc(const std::string& key, std::vector<int> ids, int milli) {
  return PodAllocation{
      .pod_key = key,
      .uid = key,
      .gpus = GpuAssignment{.gpu_ids = std::move(ids), .milli_per_gpu = milli}};
}

using PodMap = std::map<std::string, PodAllocation, std::less<>>;

TEST(DeviceInvariantTest, ExactlyWhatThePodsHoldPasses) {
  GpuInventory gpus = GpuInventory::FromNode(Dgx("dgx-0"));
  PodMap pods = {{"a", Alloc("a", {0, 1}, 1000)}, {"b", Alloc("b", {2}, 1000)}};
  for (const auto& [key, pod] : pods)
    ASSERT_TRUE(gpus.Apply(pod.gpus, key).ok());
  EXPECT_THAT(NodeDeviceViolations("dgx-0", gpus, pods), IsEmpty());
}

TEST(DeviceInvariantTest, GpuHeldByTwoPodsFails) {
  GpuInventory gpus = GpuInventory::FromNode(Dgx("dgx-0"));
  ASSERT_TRUE(gpus.Apply(GpuAssignment{{0}, 1000, {}}, "a").ok());
  PodMap pods = {{"a", Alloc("a", {0}, 1000)}, {"b", Alloc("b", {0}, 1000)}};
  std::vector<std::string> v = NodeDeviceViolations("dgx-0", gpus, pods);
  ASSERT_FALSE(v.empty());
  EXPECT_THAT(v[0], HasSubstr("GPU 0 held twice: 2000 milli taken by a, b"));
}

TEST(DeviceInvariantTest, ShareTakenPastTheWholeGpuFails) {
  Node node = Dgx("shared");
  node.meta.labels["nvidia.com/gpu.replicas"] = "2";
  node.allocatable = {{"nvidia.com/gpu", 16}};
  GpuInventory gpus = GpuInventory::FromNode(node);
  PodMap pods = {{"a", Alloc("a", {3}, 500)},
                 {"b", Alloc("b", {3}, 500)},
                 {"c", Alloc("c", {3}, 500)}};
  EXPECT_THAT(NodeDeviceViolations("shared", gpus, pods),
              ::testing::Contains(HasSubstr("GPU 3 held twice: 1500 milli")));
}

TEST(DeviceInvariantTest, MigInstanceHeldTwiceFails) {
  Node node = Dgx("mig");
  node.allocatable = {{"nvidia.com/mig-3g.40gb", 2}};
  GpuInventory gpus = GpuInventory::FromNode(node);
  PodAllocation a{.pod_key = "a", .uid = "a"};
  a.gpus.mig = {{"nvidia.com/mig-3g.40gb", 2}};
  PodAllocation b = a;
  b.pod_key = b.uid = "b";
  ASSERT_TRUE(gpus.Apply(a.gpus, "a").ok());
  std::vector<std::string> v =
      NodeDeviceViolations("mig", gpus, PodMap{{"a", a}, {"b", b}});
  EXPECT_THAT(v, ::testing::Contains(
                     HasSubstr("4 nvidia.com/mig-3g.40gb held of 2 by a, b")));
  EXPECT_THAT(v, ::testing::Contains(HasSubstr("records 2 used of 2")));
}

TEST(DeviceInvariantTest, InventoryThatForgotAPodFails) {
  GpuInventory gpus = GpuInventory::FromNode(Dgx("dgx-0"));
  PodMap pods = {{"a", Alloc("a", {5}, 1000)}};  // never applied
  EXPECT_THAT(NodeDeviceViolations("dgx-0", gpus, pods),
              ElementsAre(HasSubstr("GPU 5 records 1000 milli free")));
}

Workload Admitted(const std::string& key, const std::string& cq, int min,
                  int placed, int64_t gpus = 0) {
  Workload w{.key = key,
             .is_gang = min > 1,
             .min_member = min,
             .cluster_queue = cq,
             .state = Workload::State::kAdmitted};
  for (int i = 0; i < placed; ++i) {
    w.placements[key + "-" + std::to_string(i)] = Placement{.node = "dgx-0"};
  }
  if (gpus > 0) w.charged[kH100Gpu] = gpus;
  return w;
}

TEST(QueueUsageInvariantTest, UsageMustEqualTheCharges) {
  QuotaTree quota = *QuotaTree::Build(TwoTeams());
  std::map<std::string, Workload> workloads = {
      {"a/x", Admitted("a/x", "team-a", 1, 1, 4)},
      {"a/y", Admitted("a/y", "team-a", 1, 1, 2)}};
  quota.AddUsage("team-a", {{kH100Gpu, 6}});
  EXPECT_THAT(QueueUsageViolations(quota, workloads), IsEmpty());

  quota.AddUsage("team-a", {{kH100Gpu, 1}});  // charged to no one
  EXPECT_THAT(QueueUsageViolations(quota, workloads),
              ElementsAre("queue team-a uses 7 of h100/nvidia.com/gpu but its "
                          "admitted workloads are charged 6"));
}

TEST(QueueUsageInvariantTest, PendingWorkloadsChargeNothing) {
  QuotaTree quota = *QuotaTree::Build(TwoTeams());
  std::map<std::string, Workload> workloads = {
      {"a/x", Admitted("a/x", "team-a", 1, 1, 4)}};
  workloads["a/x"].state = Workload::State::kPending;
  quota.AddUsage("team-a", {{kH100Gpu, 4}});
  EXPECT_THAT(QueueUsageViolations(quota, workloads),
              ElementsAre(HasSubstr("are charged 0")));
}

TEST(GangInvariantTest, GangShortOfMinMemberFailsOutsideItsGrace) {
  SchedulerConfig config;  // grace 60 s
  GangTimers timers;
  std::map<std::string, Workload> workloads = {
      {"a/g", Admitted("a/g", "team-a", 3, 2)}};
  EXPECT_THAT(GangViolations(workloads, timers, config, 0),
              ElementsAre(HasSubstr("admitted with 2 placements (0 succeeded) "
                                    "of minMember 3, and no grace counts")));

  timers.NoteBelowMin("a/g", 1000);
  EXPECT_THAT(GangViolations(workloads, timers, config, 60'999), IsEmpty());
  EXPECT_THAT(GangViolations(workloads, timers, config, 61'000),
              ElementsAre(HasSubstr("its grace ended at 61000 ms")));
}

TEST(GangInvariantTest, MembersThatSucceededCount) {
  SchedulerConfig config;
  GangTimers timers;
  std::map<std::string, Workload> workloads = {
      {"a/g", Admitted("a/g", "team-a", 3, 2)}};
  workloads["a/g"].succeeded = {"a/g-1"};
  EXPECT_THAT(GangViolations(workloads, timers, config, 0), IsEmpty());
}

TEST(QuotaLimitInvariantTest, CohortCapacityAndBorrowingLimitHold) {
  Policy policy = TwoTeams();
  policy.cluster_queues[1]
      .resource_groups[0]
      .flavors[0]
      .resources[0]
      .borrowing_limit = 2;
  QuotaTree quota = *QuotaTree::Build(policy);
  quota.AddUsage("team-a", {{kH100Gpu, 6}});
  quota.AddUsage("team-b", {{kH100Gpu, 10}});  // 8 + borrowing limit 2
  EXPECT_THAT(QuotaLimitViolations(quota, nullptr), IsEmpty());

  quota.AddUsage("team-b", {{kH100Gpu, 1}});
  EXPECT_THAT(
      QuotaLimitViolations(quota, nullptr),
      ElementsAre(
          "cohort:research uses 17 of h100/nvidia.com/gpu, over its "
          "limit of 16",
          "team-b uses 11 of h100/nvidia.com/gpu, over its limit of 10"));
}

TEST(QuotaLimitInvariantTest, ExcessFromBeforeIsAllowedButMayNotGrow) {
  QuotaTree quota = *QuotaTree::Build(TwoTeams());
  quota.AddUsage("team-a", {{kH100Gpu, 18}});  // adopted past the cohort's 16
  const QuotaExcess before = QuotaOverLimits(quota);
  EXPECT_THAT(QuotaLimitViolations(quota, &before), IsEmpty());
  quota.AddUsage("team-b", {{kH100Gpu, 1}});
  EXPECT_THAT(QuotaLimitViolations(quota, &before),
              ElementsAre(HasSubstr("by more than the 2 it was over before")));
}

class EngineInvariantTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 2; ++i)
      model_.UpsertNode(Dgx("dgx-" + std::to_string(i)));
    engine_ = *QueueingEngine::Create(TwoTeams(), &model_);
  }
  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
};

TEST_F(EngineInvariantTest, StatesTheEngineMakesPass) {
  for (int i = 0; i < 2; ++i)
    engine_->AddPod(GangPod("team-a", "g", i, 8, 2), 0);
  engine_->Schedule(0);
  ASSERT_TRUE(engine_->workloads().at("team-a/g").admitted());
  EXPECT_TRUE(CheckInvariants(*engine_, model_, {.now = 0}).ok());

  // A node goes away: the gang runs short of minMember within its grace.
  engine_->NodeDown("dgx-1", 1000);
  engine_->Schedule(1000);
  EXPECT_TRUE(CheckInvariants(*engine_, model_, {.now = 1000}).ok());
  // Past the grace, a check without the pass that evicts the gang fails.
  absl::Status late = CheckInvariants(*engine_, model_, {.now = 61'000});
  EXPECT_THAT(late.message(), HasSubstr("workload team-a/g is admitted with 1 "
                                        "placements"));
  engine_->Schedule(61'000);
  EXPECT_TRUE(CheckInvariants(*engine_, model_, {.now = 61'000}).ok());
}

TEST_F(EngineInvariantTest, PodMissingFromTheModelFails) {
  engine_->AddPod(GangPod("team-a", "g", 0, 8, 1), 0);
  engine_->Schedule(0);
  ASSERT_TRUE(model_.RemovePod("team-a-g-0"));  // behind the engine's back
  EXPECT_THAT(CheckInvariants(*engine_, model_).message(),
              HasSubstr("places team-a/g-0 on dgx-0 but the model has it on "
                        "no node"));
}

TEST_F(EngineInvariantTest, SucceededMemberLeavesNoPartialGang) {
  for (int i = 0; i < 2; ++i)
    engine_->AddPod(GangPod("team-a", "g", i, 8, 2), 0);
  engine_->Schedule(0);
  ASSERT_NE(engine_->Finish("team-a/g-0", 10), FinishOutcome::kUnknownKey);
  engine_->Schedule(10);
  const Workload& w = engine_->workloads().at("team-a/g");
  EXPECT_TRUE(w.admitted());
  EXPECT_EQ(w.succeeded.size(), 1u);
  EXPECT_TRUE(CheckInvariants(*engine_, model_, {.now = 10}).ok());
}

// The hook after every pass (Debug and sanitizer builds) aborts naming the
// violation.
TEST_F(EngineInvariantTest, PassThatLeavesAViolationAborts) {
#ifdef GPUSCHED_INVARIANTS_ON
  engine_->AddPod(GangPod("team-a", "g", 0, 8, 1), 0);
  engine_->Schedule(0);
  // The model moves the pod behind the engine's back.
  ASSERT_TRUE(model_.RemovePod("team-a-g-0"));
  ASSERT_TRUE(model_
                  .Place(GangPod("team-a", "g", 0, 8, 1), "dgx-1",
                         GpuAssignment{{0, 1, 2, 3, 4, 5, 6, 7}, 1000, {}})
                  .ok());
  EXPECT_DEATH(engine_->Schedule(1),
               "places team-a/g-0 on dgx-0 but the model has it on dgx-1");
#else
  GTEST_SKIP() << "invariant checks are compiled out of this build";
#endif
}

}  // namespace
}  // namespace gpusched
