// The read model: what BuildQueueView shows of the engine's queues.
#include "queueing/queue_view.h"

#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

class QueueViewTest : public EngineFixture {
 protected:
  static const QuotaUsage& Gpus(const std::vector<QuotaUsage>& lines) {
    for (const QuotaUsage& line : lines) {
      if (line.fr == FlavorResource{"h100", "nvidia.com/gpu"}) return line;
    }
    ADD_FAILURE() << "no h100 nvidia.com/gpu line";
    return lines.front();
  }
};

TEST_F(QueueViewTest, PendingAreListedInAdmissionOrderWithPositionsFromZero) {
  Start(TwoTeams(), 1);  // 8 GPUs in all
  SubmitGang("team-a", "running", 1, 8, 0);
  engine_->Schedule(0);
  SubmitGang("team-a", "old", 1, 4, 1000);
  SubmitGang("team-a", "urgent", 1, 4, 2000, /*priority=*/10);
  SubmitGang("team-a", "new", 1, 4, 3000);
  engine_->Schedule(3000);

  const QueueView view = BuildQueueView(*engine_, 7, 3000);
  EXPECT_EQ(view.pass, 7u);
  const ClusterQueueView* cq = view.FindClusterQueue("team-a");
  ASSERT_NE(cq, nullptr);
  ASSERT_EQ(cq->pending.size(), 3u);
  EXPECT_EQ(cq->pending[0].key, "team-a/urgent");
  EXPECT_EQ(cq->pending[1].key, "team-a/old");
  EXPECT_EQ(cq->pending[2].key, "team-a/new");
  for (size_t i = 0; i < cq->pending.size(); ++i) {
    EXPECT_EQ(cq->pending[i].position_in_cluster_queue, i);
    EXPECT_EQ(cq->pending[i].position_in_local_queue, i);
    EXPECT_EQ(cq->pending[i].local_queue, "q");
    EXPECT_EQ(cq->pending[i].kind, WorkloadRef::Kind::kKueueGroup);
  }
  EXPECT_EQ(cq->pending[0].priority, 10);
  EXPECT_EQ(cq->pending[0].requests.Get("nvidia.com/gpu"), 4);
  ASSERT_EQ(cq->admitted.size(), 1u);
  EXPECT_EQ(cq->admitted[0].key, "team-a/running");
  EXPECT_EQ(cq->admitted[0].placed, 1);
  const LocalQueueView* lq = view.FindLocalQueue("team-a", "q");
  ASSERT_NE(lq, nullptr);
  EXPECT_EQ(lq->pending, 3u);
  EXPECT_EQ(lq->admitted, 1u);
  ASSERT_EQ(view.PendingOf("team-a", "q").size(), 3u);
  EXPECT_EQ(view.PendingOf("team-b", "q").size(), 0u);
}

TEST_F(QueueViewTest, CodeAndSentenceAreTheEnginesAndSayInadmissible) {
  Start(TwoTeams(), 1);
  SubmitGang("team-a", "running", 1, 8, 0);
  engine_->Schedule(0);
  SubmitGang("team-b", "waits", 1, 8, 1000);
  engine_->Schedule(1000);

  const QueueView view = BuildQueueView(*engine_, 1, 1000);
  const PendingWorkload* w = view.FindPending("team-b/waits");
  ASSERT_NE(w, nullptr);
  const Workload& engine_w = engine_->workloads().at("team-b/waits");
  EXPECT_EQ(w->code, engine_->PendingCode(engine_w));
  EXPECT_NE(w->code, ReasonCode::kNone);
  EXPECT_EQ(w->status, PendingStatus::kInadmissible);
  EXPECT_FALSE(w->message.empty());
  EXPECT_EQ(w->message.find("position"), std::string::npos);
  EXPECT_EQ(view.FindClusterQueue("team-b")->PendingWith(
                PendingStatus::kInadmissible),
            1u);
}

TEST_F(QueueViewTest, BorrowerAndLenderAddUpInTheirCohort) {
  Start(TwoTeams(), 2);  // 16 GPUs; team-a and team-b have 8 each
  SubmitGang("team-a", "big", 3, 4, 0);  // 12: borrows 4 of team-b's
  engine_->Schedule(0);
  ASSERT_TRUE(engine_->workloads().at("team-a/big").admitted());

  const QueueView view = BuildQueueView(*engine_, 1, 0);
  const QuotaUsage& a = Gpus(view.FindClusterQueue("team-a")->quota);
  EXPECT_EQ(a.nominal, 8);
  EXPECT_EQ(a.used, 12);
  EXPECT_EQ(a.borrowed, 4);
  EXPECT_EQ(a.lent, 0);
  const QuotaUsage& b = Gpus(view.FindClusterQueue("team-b")->quota);
  EXPECT_EQ(b.used, 0);
  EXPECT_EQ(b.borrowed, 0);
  EXPECT_EQ(b.lent, 4);
  ASSERT_EQ(view.cohorts.size(), 1u);
  EXPECT_EQ(view.cohorts[0].name, "research");
  EXPECT_EQ(view.cohorts[0].parent, "");
  const QuotaUsage& cohort = Gpus(view.cohorts[0].quota);
  EXPECT_EQ(cohort.nominal, 16);
  EXPECT_EQ(cohort.used, 12);
  EXPECT_EQ(cohort.borrowed, 0);
}

TEST_F(QueueViewTest, LendingLimitCapsWhatAQueueIsShownLending) {
  Policy policy = TwoTeams();
  policy.cluster_queues[1]
      .resource_groups[0]
      .flavors[0]
      .resources[0]
      .lending_limit = 2;
  Start(std::move(policy), 2);
  SubmitGang("team-a", "big", 5, 2, 0);  // 10: 2 borrowed, all team-b lends
  engine_->Schedule(0);
  ASSERT_TRUE(engine_->workloads().at("team-a/big").admitted());

  const QueueView view = BuildQueueView(*engine_, 1, 0);
  const QuotaUsage& b = Gpus(view.FindClusterQueue("team-b")->quota);
  EXPECT_EQ(b.lending_limit, 2);
  EXPECT_EQ(b.lent, 2);
}

TEST_F(QueueViewTest, SameEngineSameView) {
  Start(TwoTeams(), 1);
  SubmitGang("team-a", "x", 2, 8, 0);
  SubmitGang("team-b", "y", 1, 2, 10);
  engine_->Schedule(10);
  EXPECT_EQ(BuildQueueView(*engine_, 3, 10), BuildQueueView(*engine_, 3, 10));
}

}  // namespace
}  // namespace gpusched
