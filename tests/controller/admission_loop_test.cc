// The admission loop: inputs in, decisions out, on its own thread; filter
// (Check) reads published verdicts and never runs a pass.
#include "api/controller/admission_loop.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/admission_loop_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

Pod Gated(Pod pod) {
  pod.scheduling_gates.push_back(kAdmissionGate);
  ReadPodAdmissionState(pod);
  return pod;
}

// The workload statuses told since the last call, for `workload` only.
std::vector<WorkloadStatus> StatusesOf(RecordingSink& sink,
                                       const std::string& workload) {
  std::vector<WorkloadStatus> out;
  for (WorkloadStatus& s : sink.TakeStatuses()) {
    if (s.workload == workload) out.push_back(std::move(s));
  }
  return out;
}

TEST_F(AdmissionLoopTest, GangIsAdmittedWholeByTheLoopAndPublished) {
  Start(TwoTeams());
  loop_->PodUpserted(Gated(GangPod("team-a", "ring", 0, 4, 2)));
  loop_->WaitIdle();
  EXPECT_EQ(loop_->Check(GangPod("team-a", "ring", 0, 4, 2)).waiting_reason,
            "GangIncomplete: waiting for pods: 1 of minMember 2 exist; "
            "position 1 of 1");
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

// The read model follows each pass: what filter says of a waiting gang,
// the queues say with the same code; and an older snapshot a reader holds
// does not change under it.
TEST_F(AdmissionLoopTest, EachPassPublishesTheQueuesWithTheSameCodeAsFilter) {
  Start(TwoTeams());
  loop_->WaitIdle();
  const std::shared_ptr<const QueueView> before = loop_->Queues();
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(before->FindPending("team-a/ring"), nullptr);

  loop_->PodUpserted(Gated(GangPod("team-a", "ring", 0, 4, 2)));
  loop_->WaitIdle();
  const std::shared_ptr<const QueueView> waiting = loop_->Queues();
  EXPECT_GT(waiting->pass, before->pass);
  const PendingWorkload* ring = waiting->FindPending("team-a/ring");
  ASSERT_NE(ring, nullptr);
  EXPECT_EQ(ring->code, ReasonCode::kGangIncomplete);
  EXPECT_THAT(loop_->Check(GangPod("team-a", "ring", 0, 4, 2)).waiting_reason,
              ::testing::StartsWith(std::string(ReasonCodeName(ring->code))));
  EXPECT_EQ(ring->position_in_cluster_queue, 0u);

  loop_->PodUpserted(Gated(GangPod("team-a", "ring", 1, 4, 2)));
  loop_->WaitIdle();
  const std::shared_ptr<const QueueView> admitted = loop_->Queues();
  EXPECT_EQ(admitted->FindPending("team-a/ring"), nullptr);
  ASSERT_EQ(admitted->FindClusterQueue("team-a")->admitted.size(), 1u);
  EXPECT_EQ(admitted->FindClusterQueue("team-a")->admitted[0].placed, 2);
  EXPECT_NE(waiting->FindPending("team-a/ring"), nullptr);  // unchanged
}

// explain is answered by the loop thread between passes, from the engine:
// the same code the queues show, positions, and NotFound for a stranger;
// a question does not wait for the pace, nor run a pass of its own.
TEST_F(AdmissionLoopTest, ExplainIsAnsweredBetweenPassesWithoutAPass) {
  Start(TwoTeams(), 1, 1000, /*min_pass_interval_ms=*/3'600'000);
  loop_->PodUpserted(Gated(GangPod("team-a", "ring", 0, 4, 2)));
  loop_->WaitIdle();
  const uint64_t passes = loop_->passes();
  absl::StatusOr<WorkloadExplanation> ring =
      loop_->Explain("team-a/ring", std::chrono::seconds(5));
  ASSERT_TRUE(ring.ok()) << ring.status();
  EXPECT_EQ(ring->code, ReasonCode::kGangIncomplete);
  EXPECT_EQ(ring->code, loop_->Queues()->FindPending("team-a/ring")->code);
  EXPECT_EQ(ring->members, 1);
  EXPECT_EQ(ring->min_member, 2);
  EXPECT_EQ(loop_->passes(), passes);
  EXPECT_TRUE(absl::IsNotFound(
      loop_->Explain("team-a/nobody", std::chrono::seconds(5)).status()));
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

// Inputs that arrive soon after a pass began wait for the pace (and are
// gathered into one pass); an explicit request, as WaitIdle's, does not.
TEST_F(AdmissionLoopTest, InputsSoonAfterAPassWaitForThePaceARequestDoesNot) {
  Start(TwoTeams(), 1, 1000, /*min_pass_interval_ms=*/3'600'000);
  loop_->WaitIdle();
  const uint64_t passes = loop_->passes();
  loop_->PodUpserted(Gated(GangPod("team-a", "solo", 0, 2, 1)));
  loop_->PodUpserted(Gated(GangPod("team-a", "duo", 0, 2, 1)));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(loop_->passes(), passes);  // an hour between passes
  EXPECT_TRUE(sink_.Take().empty());
  loop_->WaitIdle();
  EXPECT_EQ(loop_->passes(), passes + 1);
  EXPECT_EQ(sink_.Take().size(), 2u);  // both admitted in that one pass
}

TEST_F(AdmissionLoopTest, SucceededPodsGiveTheirQuotaBackAtOnce) {
  Policy policy = TwoTeams();
  policy.cluster_queues[0].cohort.clear();  // no borrowing: 8 is the limit
  Start(std::move(policy), 2);
  for (int i = 0; i < 2; ++i)
    loop_->PodUpserted(GangPod("team-a", "first", i, 4, 2));
  loop_->WaitIdle();
  for (int i = 0; i < 2; ++i)
    loop_->PodUpserted(GangPod("team-a", "second", i, 4, 2));
  loop_->WaitIdle();
  EXPECT_EQ(loop_->Check(GangPod("team-a", "second", 0, 4, 2)).assigned_node,
            "");
  sink_.Take();

  for (int i = 0; i < 2; ++i) {
    Pod done = GangPod("team-a", "first", i, 4, 2);
    done.node_name = "dgx-0";
    done.phase = PodPhase::kSucceeded;
    loop_->PodUpserted(done);
  }
  loop_->WaitIdle();
  EXPECT_NE(loop_->Check(GangPod("team-a", "second", 0, 4, 2)).assigned_node,
            "");
  EXPECT_EQ(sink_.Take().size(), 2u);  // the second gang's two admissions
}

// The revocations told within `wait` of real time (the loop checks its
// timers every few milliseconds in these tests).
std::vector<RevokeMember> RevocationsWithin(RecordingSink& sink,
                                            std::chrono::milliseconds wait) {
  std::vector<RevokeMember> out;
  for (auto end = std::chrono::steady_clock::now() + wait;
       out.empty() && std::chrono::steady_clock::now() < end;) {
    for (QueueDecision& d : sink.Take()) {
      if (auto* revoke = std::get_if<RevokeMember>(&d)) out.push_back(*revoke);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return out;
}

// A running gang of two whose member 0 ends in `phase`.
void RunGangThenEndMember(AdmissionLoop& loop, RecordingSink& sink,
                          PodPhase phase) {
  for (int i = 0; i < 2; ++i)
    loop.PodUpserted(Gated(GangPod("team-a", "ring", i, 4, 2)));
  loop.WaitIdle();
  ASSERT_EQ(sink.Take().size(), 2u);
  for (int i = 0; i < 2; ++i) {
    Pod running = GangPod("team-a", "ring", i, 4, 2);
    running.node_name = "dgx-0";
    running.phase = i == 0 ? phase : PodPhase::kRunning;
    loop.PodUpserted(running);
  }
  loop.WaitIdle();
}

TEST_F(AdmissionLoopTest, AGangShortOfAFailedMemberIsEvictedAfterItsGrace) {
  Policy policy = TwoTeams();
  policy.config.stale_gang_grace_ms = 5000;
  Start(std::move(policy), 1, /*max_idle_ms=*/2);
  RunGangThenEndMember(*loop_, sink_, PodPhase::kFailed);
  now_ += 4000;  // inside the grace: a replacement could still come
  EXPECT_TRUE(RevocationsWithin(sink_, std::chrono::milliseconds(100)).empty());
  now_ += 2000;
  std::vector<RevokeMember> revoked =
      RevocationsWithin(sink_, std::chrono::seconds(5));
  ASSERT_EQ(revoked.size(), 1u);
  EXPECT_EQ(revoked[0].pod.pod_name, "ring-1");
  EXPECT_TRUE(revoked[0].evict);
}

TEST_F(AdmissionLoopTest, AGangWhoseMemberSucceededKeepsRunning) {
  Policy policy = TwoTeams();
  policy.config.stale_gang_grace_ms = 5000;
  Start(std::move(policy), 1, /*max_idle_ms=*/2);
  RunGangThenEndMember(*loop_, sink_, PodPhase::kSucceeded);
  now_ += 60'000;
  EXPECT_TRUE(RevocationsWithin(sink_, std::chrono::milliseconds(200)).empty());
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
        GateVerdict v =
            loop_->Check(GangPod("team-a", "p" + std::to_string(i), 0, 1, 1));
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
  for (const QueueDecision& d : sink_.Take())
    admitted += std::holds_alternative<AdmitMember>(d);
  EXPECT_EQ(admitted, 8);  // team-a's 8 and the 8 it may borrow share 8 GPUs
  EXPECT_EQ(service_->CountGpus().free, 0);
}

// The loop tells a workload's code and phase (WorkloadStatus) once per
// change.
TEST_F(AdmissionLoopTest, WaitingIsToldOnceAndNotWhenOnlyItsPositionMoves) {
  Start(TwoTeams(), 2);
  Add(GangPod("team-a", "big", 0, 8, 2));
  Add(GangPod("team-a", "big", 1, 8, 2));  // 16: the whole cohort
  std::vector<WorkloadStatus> big = StatusesOf(sink_, "team-a/big");
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[0].code, ReasonCode::kGangIncomplete);  // 1 of 2 pods
  EXPECT_EQ(big[1].code, ReasonCode::kAdmitted);
  EXPECT_EQ(big[1].members.size(), 2u);

  Add(QueuedPod("team-a", "low", 8));
  std::vector<WorkloadStatus> low = StatusesOf(sink_, "team-a/low");
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0].code, ReasonCode::kWaitingForQuota);
  EXPECT_EQ(low[0].phase, WorkloadPhase::kWaiting);
  EXPECT_NE(low[0].message.find("position 1 of 1"), std::string::npos)
      << low[0].message;
  EXPECT_EQ(loop_->Check(QueuedPod("team-a", "low", 8))
                .waiting_reason.rfind(
                    "WaitingForQuota: queue team-a: needs 8 nvidia.com/gpu", 0),
            0u);

  // A higher priority pod queues ahead: low is now "position 2 of 2",
  // under the same code, which is no news.
  Pod high = QueuedPod("team-a", "high", 8);
  high.priority = 100;
  Add(high);
  now_ += 1000;
  loop_->WaitIdle();
  EXPECT_NE(loop_->Check(QueuedPod("team-a", "low", 8))
                .waiting_reason.find("position 2 of 2"),
            std::string::npos);
  std::vector<WorkloadStatus> all = sink_.TakeStatuses();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].workload, "team-a/high");
  EXPECT_EQ(all[0].code, ReasonCode::kWaitingForQuota);
}

TEST_F(AdmissionLoopTest, AGangThatGetsItsQuotaIsToldAdmittedThenRunning) {
  Start(TwoTeams(), 2);
  Add(GangPod("team-a", "big", 0, 8, 2));
  Add(GangPod("team-a", "big", 1, 8, 2));
  Add(GangPod("team-a", "next", 0, 8, 1));
  ASSERT_EQ(StatusesOf(sink_, "team-a/next").size(), 1u);  // WaitingForQuota

  Pod gone = GangPod("team-a", "big", 0, 8, 2);
  loop_->PodDeleted(gone);
  loop_->PodDeleted(GangPod("team-a", "big", 1, 8, 2));
  loop_->WaitIdle();
  std::vector<WorkloadStatus> next = StatusesOf(sink_, "team-a/next");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].code, ReasonCode::kAdmitted);
  EXPECT_EQ(next[0].phase, WorkloadPhase::kAdmitted);

  Pod bound = GangPod("team-a", "next", 0, 8, 1);
  bound.node_name = loop_->Check(bound).assigned_node;
  Add(bound);
  next = StatusesOf(sink_, "team-a/next");
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].phase, WorkloadPhase::kRunning);
  EXPECT_EQ(next[0].bound, 1);
}

TEST_F(AdmissionLoopTest, APreemptedWorkloadIsToldPreemptedThenWhyItWaits) {
  Start(TwoTeams(PreemptionPolicy{.within_cluster_queue =
                                      WithinClusterQueue::kLowerPriority}),
        1);
  Add(GangPod("team-a", "low", 0, 8, 1, /*priority=*/1));
  ASSERT_EQ(StatusesOf(sink_, "team-a/low").size(), 1u);  // Admitted
  Add(GangPod("team-a", "high", 0, 8, 1, /*priority=*/100));
  std::vector<WorkloadStatus> low = StatusesOf(sink_, "team-a/low");
  ASSERT_EQ(low.size(), 2u);
  EXPECT_EQ(low[0].code, ReasonCode::kPreempted);
  EXPECT_NE(low[0].message.find("preempted by team-a/high"), std::string::npos)
      << low[0].message;
  EXPECT_EQ(low[1].phase, WorkloadPhase::kWaiting);
  EXPECT_NE(low[1].code, ReasonCode::kNone);
}

// An indexed Job's gang (team-a/job, 2 x 4 GPUs, priority 1) bound on the
// one node, then evicted whole by a gang of priority 100: the state right
// after the evictions were decided.
class EvictedJobGangTest : public AdmissionLoopTest {
 protected:
  void SetUp() override {
    Start(TwoTeams(PreemptionPolicy{.within_cluster_queue =
                                        WithinClusterQueue::kLowerPriority}),
          1);
    for (int i = 0; i < 2; ++i) Add(Gated(Old(i)));
    for (int i = 0; i < 2; ++i) {
      Add(BoundTo(Old(i), "dgx-0", i == 0 ? "0,1,2,3" : "4,5,6,7"));
    }
    for (int i = 0; i < 2; ++i) Add(GangPod("team-a", "urgent", i, 4, 2, 100));
    std::vector<QueueDecision> decisions = sink_.Take();
    int evictions = 0;
    for (const QueueDecision& d : decisions) {
      const auto* revoke = std::get_if<RevokeMember>(&d);
      if (revoke != nullptr && revoke->workload == "team-a/job") {
        EXPECT_TRUE(revoke->evict);
        ++evictions;
      }
    }
    ASSERT_EQ(evictions, 2);
    sink_.TakeStatuses();
  }
  static Pod Old(int i) { return GangPod("team-a", "job", i, 4, 2, 1); }
  // The Eviction API marked it deleting; the Job's finalizer keeps it.
  static Pod Terminating(int i) {
    Pod pod = BoundTo(Old(i), "dgx-0", i == 0 ? "0,1,2,3" : "4,5,6,7");
    pod.meta.deleting = true;
    return pod;
  }
  // The job controller's replacement: same group, new name and UID.
  static Pod Replacement(int i) {
    Pod pod = Gated(Old(i));
    pod.meta.name = "job-" + std::to_string(i) + "-new";
    pod.meta.uid = "team-a-" + pod.meta.name;
    return pod;
  }
  std::vector<std::string> AdmittedPods() {
    std::vector<std::string> pods;
    for (const QueueDecision& d : sink_.Take()) {
      if (const auto* admit = std::get_if<AdmitMember>(&d)) {
        pods.push_back(admit->pod.pod_name);
      }
    }
    return pods;
  }
};

TEST_F(EvictedJobGangTest, ItsTerminatingPodsAreNotAdoptedAgain) {
  for (int i = 0; i < 2; ++i) Add(Terminating(i));
  EXPECT_EQ(loop_->Check(Old(0)).assigned_node, "");
  EXPECT_EQ(
      loop_->Check(GangPod("team-a", "urgent", 0, 4, 2, 100)).assigned_node,
      "dgx-0");
  EXPECT_TRUE(sink_.Take().empty());
  for (const WorkloadStatus& s : StatusesOf(sink_, "team-a/job")) {
    EXPECT_NE(s.phase, WorkloadPhase::kAdmitted) << s.message;
    EXPECT_NE(s.phase, WorkloadPhase::kRunning) << s.message;
  }
}

TEST_F(EvictedJobGangTest, ReplacementsAreAdmittedWholeWithoutTheOldPods) {
  for (int i = 0; i < 2; ++i) Add(Terminating(i));
  Add(Replacement(0));  // the old pods still linger, Failed not yet
  for (int i = 0; i < 2; ++i) {
    Pod done = GangPod("team-a", "urgent", i, 4, 2, 100);
    done.node_name = "dgx-0";
    done.phase = PodPhase::kSucceeded;
    Add(done);
  }
  EXPECT_TRUE(AdmittedPods().empty()) << "one replacement of two exists";
  Add(Replacement(1));
  EXPECT_THAT(AdmittedPods(),
              ::testing::UnorderedElementsAre("job-0-new", "job-1-new"));
  EXPECT_EQ(loop_->Check(Old(0)).assigned_node, "");
}

}  // namespace
}  // namespace gpusched
