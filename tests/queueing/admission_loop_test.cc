// The admission loop: inputs in, decisions out, on its own thread; filter
// (Check) reads published verdicts and never runs a pass.
#include "queueing/admission_loop.h"

#include <atomic>
#include <mutex>
#include <thread>

#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

class RecordingSink : public DecisionSink {
 public:
  void Publish(std::vector<QueueDecision> decisions) override {
    std::lock_guard lock(mu_);
    for (QueueDecision& d : decisions) all_.push_back(std::move(d));
  }
  std::vector<QueueDecision> Take() {
    std::lock_guard lock(mu_);
    return std::exchange(all_, {});
  }

 private:
  std::mutex mu_;
  std::vector<QueueDecision> all_;
};

Pod Gated(Pod pod) {
  pod.scheduling_gates.push_back(kAdmissionGate);
  return pod;
}

class AdmissionLoopTest : public ::testing::Test {
 protected:
  void Start(Policy policy, int nodes = 1) {
    auto loop = AdmissionLoop::Create(std::move(policy),
                                      {.clock = [this] { return now_.load(); }});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(
        ServiceOptions{.gate = loop_.get(), .clock = [this] { return now_.load(); }});
    std::vector<Node> all;
    for (int i = 0; i < nodes; ++i) all.push_back(Dgx("dgx-" + std::to_string(i)));
    service_->UpsertNodes(std::move(all));
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override {
    if (loop_ != nullptr) loop_->Stop();
  }

  std::atomic<int64_t> now_{1000};
  RecordingSink sink_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
};

TEST_F(AdmissionLoopTest, GangIsAdmittedWholeByTheLoopAndPublished) {
  Start(TwoTeams());
  loop_->PodUpserted(Gated(GangPod("team-a", "ring", 0, 4, 2)));
  loop_->WaitIdle();
  EXPECT_EQ(loop_->Check(GangPod("team-a", "ring", 0, 4, 2)).waiting_reason,
            "waiting for pods: 1 of minMember 2 exist; position 1 of 1");
  EXPECT_TRUE(sink_.Take().empty());

  loop_->PodUpserted(Gated(GangPod("team-a", "ring", 1, 4, 2)));
  loop_->WaitIdle();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(loop_->Check(GangPod("team-a", "ring", i, 4, 2)).assigned_node,
              "dgx-0");
  }
  std::vector<QueueDecision> decisions = sink_.Take();
  ASSERT_EQ(decisions.size(), 2u);
  for (const QueueDecision& d : decisions) {
    const auto* admit = std::get_if<AdmitMember>(&d);
    ASSERT_NE(admit, nullptr);
    EXPECT_EQ(admit->node, "dgx-0");
    EXPECT_EQ(admit->workload, "team-a/ring");
    EXPECT_TRUE(admit->gated);
  }
}

TEST_F(AdmissionLoopTest, CheckOfAnUnseenPodHandsItToTheLoopWithoutAPass) {
  Start(TwoTeams());
  const uint64_t passes = loop_->passes();
  Pod pod = GangPod("team-a", "solo", 0, 2, 1);
  // The answer comes from what was published; no pass ran inside Check.
  EXPECT_EQ(loop_->Check(pod).waiting_reason,
            "waiting for admission: gpusched's queueing core has not seen "
            "this pod yet");
  loop_->WaitIdle();
  EXPECT_GT(loop_->passes(), passes);
  EXPECT_EQ(loop_->Check(pod).assigned_node, "dgx-0");
}

TEST_F(AdmissionLoopTest, SucceededPodsGiveTheirQuotaBackAtOnce) {
  Policy policy = TwoTeams();
  policy.cluster_queues[0].cohort.clear();  // no borrowing: 8 is the limit
  Start(std::move(policy), 2);
  for (int i = 0; i < 2; ++i) loop_->PodUpserted(GangPod("team-a", "first", i, 4, 2));
  loop_->WaitIdle();
  for (int i = 0; i < 2; ++i) loop_->PodUpserted(GangPod("team-a", "second", i, 4, 2));
  loop_->WaitIdle();
  EXPECT_EQ(loop_->Check(GangPod("team-a", "second", 0, 4, 2)).assigned_node, "");
  sink_.Take();

  for (int i = 0; i < 2; ++i) {
    Pod done = GangPod("team-a", "first", i, 4, 2);
    done.node_name = "dgx-0";
    done.phase = "Succeeded";
    loop_->PodUpserted(done);
  }
  loop_->WaitIdle();
  EXPECT_NE(loop_->Check(GangPod("team-a", "second", 0, 4, 2)).assigned_node, "");
  EXPECT_EQ(sink_.Take().size(), 2u);  // the second gang's two admissions
}

TEST_F(AdmissionLoopTest, MembersOfALostNodeAreRevokedAndGatedOnesEvicted) {
  Start(TwoTeams());
  for (int i = 0; i < 2; ++i) {
    loop_->PodUpserted(Gated(GangPod("team-a", "ring", i, 4, 2)));
  }
  loop_->WaitIdle();
  ASSERT_EQ(sink_.Take().size(), 2u);
  service_->RemoveNode("dgx-0");  // the node watch first, then the loop
  loop_->NodeRemoved("dgx-0");
  loop_->WaitIdle();
  std::vector<QueueDecision> decisions = sink_.Take();
  ASSERT_EQ(decisions.size(), 2u);
  for (const QueueDecision& d : decisions) {
    const auto* revoke = std::get_if<RevokeMember>(&d);
    ASSERT_NE(revoke, nullptr);
    EXPECT_EQ(revoke->node, "dgx-0");
    EXPECT_TRUE(revoke->evict);  // ungated already: only eviction frees it
  }
}

TEST_F(AdmissionLoopTest, DeletedPodsMissingFromARelistLeaveTheCore) {
  Start(TwoTeams());
  loop_->PodUpserted(GangPod("team-a", "ring", 0, 4, 2));
  loop_->WaitIdle();
  loop_->PodsListed({});
  loop_->WaitIdle();
  EXPECT_EQ(loop_->Check(GangPod("team-a", "ring", 0, 4, 2)).waiting_reason,
            "waiting for admission: gpusched's queueing core has not seen "
            "this pod yet");
}

// Filters read while the loop writes: every answer is either an assigned
// node or a reason, and no GPU is given twice (16 single-GPU pods on 8).
TEST_F(AdmissionLoopTest, ChecksRaceWithPassesAndNoGpuIsGivenTwice) {
  Start(TwoTeams());
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) {
      for (int i = 0; i < 16; ++i) {
        GateVerdict v = loop_->Check(GangPod("team-a", "p" + std::to_string(i), 0, 1, 1));
        EXPECT_NE(v.assigned_node.empty(), v.waiting_reason.empty());
      }
    }
  });
  for (int i = 0; i < 16; ++i) {
    loop_->PodUpserted(GangPod("team-a", "p" + std::to_string(i), 0, 1, 1));
    now_ += 10;
  }
  loop_->WaitIdle();
  done = true;
  reader.join();
  int admitted = 0;
  for (const QueueDecision& d : sink_.Take()) admitted += std::holds_alternative<AdmitMember>(d);
  EXPECT_EQ(admitted, 8);  // team-a's 8 and the 8 it may borrow share 8 GPUs
  EXPECT_EQ(service_->CountGpus().free, 0);
}

}  // namespace
}  // namespace gpusched
