// Why a workload waits, as one code: each code in its situation (the
// admission loop's tests check it is told once per change).
#include "api/controller/status_tracker.h"
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

class ReasonCodeTest : public ::testing::Test {
 protected:
  void Start(Policy policy, std::vector<Node> nodes) {
    for (Node& node : nodes) model_.UpsertNode(std::move(node));
    auto engine = QueueingEngine::Create(std::move(policy), &model_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }
  void Start(Policy policy, int nodes = 2) {
    std::vector<Node> all;
    for (int i = 0; i < nodes; ++i)
      all.push_back(Dgx("dgx-" + std::to_string(i)));
    Start(std::move(policy), std::move(all));
  }
  void SubmitGang(const std::string& group, int pods, int gpus, int64_t now,
                  int declared = -1) {
    for (int i = 0; i < pods; ++i) {
      engine_->AddPod(
          GangPod("team-a", group, i, gpus, declared < 0 ? pods : declared),
          now);
    }
  }
  ReasonCode Code(const std::string& key) {
    return engine_->PendingCode(engine_->workloads().at(key));
  }
  const std::string& Reason(const std::string& key) {
    return engine_->workloads().at(key).reason;
  }

  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
};

Policy TeamAWithNominal(int64_t gpus) {
  Policy policy = TwoTeams();
  policy.cluster_queues[0].resource_groups[0].flavors[0].resources[0].nominal =
      gpus;
  return policy;
}

TEST_F(ReasonCodeTest, QueueAtQuotaIsWaitingForQuota) {
  Start(TwoTeams());
  SubmitGang("first", 2, 8, 0);  // 16: team-a's 8 and team-b's 8 lent
  engine_->Schedule(0);
  SubmitGang("second", 1, 8, 1000);
  engine_->Schedule(1000);
  EXPECT_EQ(Code("team-a/second"), ReasonCode::kWaitingForQuota)
      << Reason("team-a/second");
}

TEST_F(ReasonCodeTest, MoreThanTheCohortCouldEverLendExceedsMaxQuota) {
  Start(TwoTeams());
  SubmitGang("huge", 3, 8, 0);  // 24 > 8 nominal + 8 the cohort can lend
  engine_->Schedule(0);
  EXPECT_EQ(Code("team-a/huge"), ReasonCode::kExceedsMaxQuota)
      << Reason("team-a/huge");
}

TEST_F(ReasonCodeTest, QuotaThatFitsOnTooFewGpusIsInsufficientGpus) {
  Start(TeamAWithNominal(32), 1);
  SubmitGang("wide", 2, 8, 0);  // 16 of quota 32 on one node of 8
  engine_->Schedule(0);
  EXPECT_EQ(Code("team-a/wide"), ReasonCode::kInsufficientGpus)
      << Reason("team-a/wide");
}

TEST_F(ReasonCodeTest, ResourceNoFlavorCoversIsNoMatchingFlavor) {
  Start(TwoTeams());
  Pod pod = QueuedPod("team-a", "fpga", 1);
  pod.containers[0].requests = {{"example.com/fpga", 1}};
  engine_->AddPod(pod, 0);
  engine_->Schedule(0);
  EXPECT_EQ(Code("team-a/fpga"), ReasonCode::kNoMatchingFlavor)
      << Reason("team-a/fpga");
}

TEST_F(ReasonCodeTest, GangNoRackCanHoldIsTopologyUnsatisfiable) {
  Start(TeamAWithNominal(32), {Dgx("dgx-0", "rack-1"), Dgx("dgx-1", "rack-2")});
  for (int i = 0; i < 2; ++i) {
    Pod pod = GangPod("team-a", "ring", i, 8, 2);
    pod.meta.annotations[kTopologyRequiredAnnotation] = "gpusched.io/rack";
    ReadPodAdmissionState(pod);
    engine_->AddPod(pod, 0);
  }
  engine_->Schedule(0);
  EXPECT_EQ(Code("team-a/ring"), ReasonCode::kTopologyUnsatisfiable)
      << Reason("team-a/ring");
}

TEST_F(ReasonCodeTest, GangShortOfMembersOrPodGroupIsGangIncomplete) {
  Start(TwoTeams());
  SubmitGang("short", 2, 1, 0, /*declared=*/3);
  Pod volcano = GangPod("team-a", "v", 0, 1, 0);
  volcano.meta.labels.erase(kKueueGroupLabel);
  volcano.meta.annotations = {{kVolcanoGroupAnnotation, "v"}};
  ReadPodAdmissionState(volcano);
  engine_->AddPod(volcano, 0);
  engine_->Schedule(0);
  EXPECT_EQ(Code("team-a/short"), ReasonCode::kGangIncomplete);
  EXPECT_EQ(Code("team-a/v"), ReasonCode::kGangIncomplete)
      << Reason("team-a/v");
}

// The default gang admission timeout is 300 s, the first backoff 10 s.
TEST_F(ReasonCodeTest, GangIncompleteAfterItsTimeoutIsBackingOffUntilRetry) {
  Start(TwoTeams());
  SubmitGang("short", 2, 1, 0, /*declared=*/3);
  engine_->Schedule(0);
  engine_->Schedule(300'000);
  EXPECT_EQ(Code("team-a/short"), ReasonCode::kBackingOff);
  engine_->Schedule(310'000);  // backoff over: waiting for its pods again
  EXPECT_EQ(Code("team-a/short"), ReasonCode::kGangIncomplete);
}

TEST_F(ReasonCodeTest, AdmittedGangNotBoundInTimeIsPodsReadyTimeout) {
  Start(TwoTeams());
  SubmitGang("unbound", 2, 1, 0);
  engine_->Schedule(0);
  ASSERT_TRUE(engine_->workloads().at("team-a/unbound").admitted());
  engine_->Schedule(300'000);  // no member bound within 300 s
  EXPECT_EQ(Code("team-a/unbound"), ReasonCode::kPodsReadyTimeout)
      << Reason("team-a/unbound");
}

// waitForPodsReady.blockAdmission: one admission at a time, each waiting
// until every member admitted before it is bound (Kueue's
// waitForPodsReadyIfNeeded).
TEST_F(ReasonCodeTest, BlockAdmissionHoldsAFitUntilEveryAdmittedMemberIsBound) {
  Policy policy = TwoTeams();
  policy.config.gang_block_admission = true;
  Start(std::move(policy));
  SubmitGang("first", 2, 1, 0);
  SubmitGang("second", 2, 1, 1);
  engine_->Schedule(2);
  ASSERT_TRUE(engine_->workloads().at("team-a/first").admitted());
  EXPECT_EQ(Code("team-a/second"), ReasonCode::kWaitingForPodsReady);
  EXPECT_EQ(Reason("team-a/second"),
            "waiting for all admitted workloads to be in PodsReady condition "
            "(waitForPodsReady.blockAdmission): team-a/first has 0 of 2 "
            "members bound");
  engine_->MarkBound("team-a/first-0");
  engine_->Schedule(3);
  EXPECT_EQ(Code("team-a/second"), ReasonCode::kWaitingForPodsReady)
      << "1 of 2 bound is not ready";
  engine_->MarkBound("team-a/first-1");
  engine_->Schedule(4);
  EXPECT_TRUE(engine_->workloads().at("team-a/second").admitted());
}

TEST_F(ReasonCodeTest, WithoutBlockAdmissionFitsAreAdmittedTogether) {
  Start(TwoTeams());
  SubmitGang("first", 2, 1, 0);
  SubmitGang("second", 2, 1, 1);
  engine_->Schedule(2);
  EXPECT_TRUE(engine_->workloads().at("team-a/first").admitted());
  EXPECT_TRUE(engine_->workloads().at("team-a/second").admitted());
}

TEST_F(ReasonCodeTest, AdmittedWorkloadHasNoWaitCode) {
  Start(TwoTeams());
  SubmitGang("fits", 1, 1, 0);
  engine_->Schedule(0);
  EXPECT_EQ(Code("team-a/fits"), ReasonCode::kNone);
}

TEST(CodedReasonTest, PrefixesTheSentenceWithItsCode) {
  EXPECT_EQ(CodedReason(ReasonCode::kWaitingForQuota, "queue team-a: needs 16"),
            "WaitingForQuota: queue team-a: needs 16");
  EXPECT_EQ(CodedReason(ReasonCode::kNone, "waiting"), "waiting");
}

}  // namespace
}  // namespace gpusched
