// A PodDisruptionBudget's refusal to evict a victim makes the preemptor
// wait or choose other victims, and is tried again only after a back-off:
// never a tight loop.
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

constexpr char kBudget[] =
    "Cannot evict pod as it would violate the pod's disruption budget.";

class EvictionRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.UpsertNode(Dgx("dgx-0"));
    const PreemptionPolicy lower{.within_cluster_queue =
                                     WithinClusterQueue::kLowerPriority};
    auto engine = QueueingEngine::Create(TwoTeams(lower), &model_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }
  void Submit(const std::string& group, int gpus, int32_t priority,
              int64_t now) {
    engine_->AddPod(GangPod("team-a", group, 0, gpus, 1, priority), now);
  }
  const Workload& W(const std::string& group) {
    return engine_->workloads().at("team-a/" + group);
  }
  // The refused member still runs where it was: the loop adopts it again.
  void Readopt(const std::string& group, const std::string& node, int64_t now) {
    Pod pod = W(group).pods.begin()->second;
    pod.node_name = node;
    EXPECT_EQ(engine_->Adopt(pod, node, /*bound=*/true, now).outcome,
              Adoption::Outcome::kAdopted);
  }
  int Preemptions(const std::string& group) {
    int n = 0;
    for (const EngineEvent& e : engine_->events()) {
      n += e.type == EngineEvent::Type::kPreempted &&
           e.workload == "team-a/" + group;
    }
    return n;
  }

  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
};

TEST_F(EvictionRefusalTest, PreemptorWaitsNamingTheBudgetUntilTheBackoffEnds) {
  Submit("low", 8, 0, 0);
  engine_->Schedule(0);
  ASSERT_TRUE(W("low").admitted());
  Submit("urgent", 8, 5, 1'000);
  engine_->Schedule(1'000);
  ASSERT_EQ(Preemptions("low"), 1);
  ASSERT_TRUE(W("urgent").admitted());  // on the capacity low had
  // The API server refuses to evict low: urgent cannot run there.
  engine_->EvictionBlocked("team-a/low", kBudget, 2'000);
  EXPECT_FALSE(W("urgent").admitted());
  EXPECT_EQ(W("urgent").code, ReasonCode::kPreempting);
  Readopt("low", "dgx-0", 2'000);
  ASSERT_TRUE(W("low").admitted());
  // Every pass in the back-off: no new eviction, urgent waits for the
  // budget and says so.
  for (int64_t now = 2'000; now < 32'000; now += 5'000) {
    engine_->Schedule(now);
    EXPECT_EQ(Preemptions("low"), 1) << now;
    EXPECT_TRUE(W("low").admitted()) << now;
    EXPECT_EQ(engine_->PendingCode(W("urgent")), ReasonCode::kPreempting);
  }
  EXPECT_EQ(engine_->PendingReason(W("urgent"), 1, 1),
            std::string("waiting to preempt team-a/low: its eviction was "
                        "refused: ") +
                kBudget + "; position 1 of 1");
  // The loop is woken when the back-off ends, and low is tried again.
  EXPECT_EQ(engine_->NextWakeup(27'000), 32'000);
  engine_->Schedule(32'000);
  EXPECT_EQ(Preemptions("low"), 2);
  // A second refusal backs off twice as long.
  engine_->EvictionBlocked("team-a/low", kBudget, 33'000);
  Readopt("low", "dgx-0", 33'000);
  engine_->Schedule(33'000);
  EXPECT_EQ(engine_->NextWakeup(33'000), 93'000);
  engine_->Schedule(92'000);
  EXPECT_EQ(Preemptions("low"), 2);
}

TEST_F(EvictionRefusalTest, PreemptorChoosesAnotherVictim) {
  Submit("lowest", 4, 0, 0);
  Submit("low", 4, 1, 0);
  engine_->Schedule(0);
  ASSERT_TRUE(W("lowest").admitted());
  ASSERT_TRUE(W("low").admitted());
  // An earlier preemption of lowest was refused; it is left alone now.
  engine_->EvictionBlocked("team-a/lowest", kBudget, 500);
  Submit("urgent", 4, 5, 1'000);
  engine_->Schedule(1'000);
  EXPECT_TRUE(W("urgent").admitted());
  EXPECT_EQ(Preemptions("low"), 1);
  EXPECT_EQ(Preemptions("lowest"), 0);
  EXPECT_TRUE(W("lowest").admitted());
}

TEST_F(EvictionRefusalTest, BoundPreemptorKeepsItsAdmission) {
  Submit("low", 4, 0, 0);
  engine_->Schedule(0);
  Submit("urgent", 8, 5, 1'000);
  engine_->Schedule(1'000);
  ASSERT_TRUE(W("urgent").admitted());
  engine_->MarkBound("team-a/urgent-0");  // it runs already
  engine_->EvictionBlocked("team-a/low", kBudget, 2'000);
  EXPECT_TRUE(W("urgent").admitted());
}

}  // namespace
}  // namespace gpusched
