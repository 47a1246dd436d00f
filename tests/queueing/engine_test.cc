// The queueing engine's admission semantics on small clusters.
#include "queueing/engine.h"

#include "gtest/gtest.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

class EngineTest : public EngineFixture {
 protected:
  const Workload& W(const std::string& key) {
    return engine_->workloads().at(key);
  }
};

TEST_F(EngineTest, GangThatCannotBePlacedWholeTakesNothing) {
  Start(TwoTeams());
  // 3 pods x 8 GPUs on 2 nodes of 8: quota allows 16 (8 + 8 borrowed) but
  // the quota for 24 is not there either; a gang of 2x8 + 1x8 never half-fits.
  SubmitGang("team-a", "big", 3, 8, 0);
  engine_->Schedule(0);
  EXPECT_EQ(W("team-a/big").state, Workload::State::kPending);
  EXPECT_EQ(model_.pod_count(), 0u);
  EXPECT_NE(W("team-a/big").reason.find("needs 24 nvidia.com/gpu"),
            std::string::npos)
      << W("team-a/big").reason;
}

TEST_F(EngineTest, GangIsAdmittedWithEveryMemberPlaced) {
  Start(TwoTeams());
  SubmitGang("team-a", "train", 2, 8, 0);
  engine_->Schedule(0);
  const Workload& w = W("team-a/train");
  ASSERT_EQ(w.state, Workload::State::kAdmitted);
  ASSERT_EQ(w.placements.size(), 2u);
  EXPECT_NE(w.placements.at("team-a/train-0").node,
            w.placements.at("team-a/train-1").node);
  EXPECT_TRUE(engine_->quota().IsBorrowing("team-a"));  // 16 > nominal 8
}

TEST_F(EngineTest, GangWaitsUntilMinMemberPodsExist) {
  Start(TwoTeams());
  engine_->AddPod(GangPod("team-a", "g", 0, 1, 3), 0);
  engine_->AddPod(GangPod("team-a", "g", 1, 1, 3), 0);
  engine_->Schedule(0);
  EXPECT_EQ(W("team-a/g").state, Workload::State::kPending);
  EXPECT_EQ(engine_->PendingReason(W("team-a/g")),
            "waiting for pods: 2 of minMember 3 exist; position 1 of 1");
  engine_->AddPod(GangPod("team-a", "g", 2, 1, 3), 5000);
  engine_->Schedule(5000);
  EXPECT_EQ(W("team-a/g").state, Workload::State::kAdmitted);
}

// A Volcano gang's size is its PodGroup's minMember: members that arrive
// before the PodGroup (the two watches race) wait for it, rather than be
// admitted as a gang of one.
TEST_F(EngineTest, VolcanoGangWaitsForItsPodGroup) {
  Start(TwoTeams());
  for (int i = 0; i < 2; ++i) {
    Pod pod = GangPod("team-a", "v", i, 1, 0);
    pod.meta.labels.erase("kueue.x-k8s.io/pod-group-name");
    pod.meta.annotations = {{"scheduling.k8s.io/group-name", "v"}};
    ReadPodAdmissionState(pod);
    engine_->AddPod(pod, 0);
  }
  engine_->Schedule(0);
  EXPECT_EQ(W("team-a/v").state, Workload::State::kPending);
  EXPECT_EQ(model_.pod_count(), 0u);
  EXPECT_NE(W("team-a/v").reason.find("waiting for PodGroup team-a/v"),
            std::string::npos)
      << W("team-a/v").reason;
  PodGroup group;
  group.meta.namespace_name = "team-a";
  group.meta.name = "v";
  group.min_member = 3;
  engine_->AddPodGroup(group, 1000);
  engine_->Schedule(1000);
  EXPECT_EQ(W("team-a/v").state, Workload::State::kPending);  // 2 of 3
  group.min_member = 2;
  engine_->AddPodGroup(group, 2000);
  engine_->Schedule(2000);
  EXPECT_EQ(W("team-a/v").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/v").placements.size(), 2u);
}

// A member of a native PodGroup (scheduling.k8s.io): it names the group in
// spec.schedulingGroup, and carries queue label `queue` unless empty.
Pod NativeMember(const std::string& group, int index, int gpus,
                 const std::string& queue) {
  Pod pod = QueuedPod("team-a", group + "-" + std::to_string(index), gpus);
  pod.meta.labels.clear();
  if (!queue.empty()) pod.meta.labels[kQueueNameLabel] = queue;
  pod.pod_group_name = group;
  ReadPodAdmissionState(pod);
  return pod;
}

PodGroup NativeGroup(const std::string& name, int min_count,
                     const std::string& queue) {
  PodGroup group{.flavor = PodGroup::Flavor::kNative,
                 .min_member = min_count,
                 .queue = queue};
  group.meta.namespace_name = "team-a";
  group.meta.name = name;
  return group;
}

// Members of a native gang wait for their PodGroup, whose minCount makes
// the gang and whose queue label is the queue of pods that carry none.
TEST_F(EngineTest, NativeGangWaitsForItsPodGroupAndTakesItsQueue) {
  Start(TwoTeams());
  for (int i = 0; i < 2; ++i)
    engine_->AddPod(NativeMember("ring", i, 4, ""), 0);
  engine_->Schedule(0);
  EXPECT_EQ(W("team-a/ring").state, Workload::State::kPending);
  EXPECT_NE(W("team-a/ring").reason.find("waiting for PodGroup team-a/ring"),
            std::string::npos)
      << W("team-a/ring").reason;
  engine_->AddPodGroup(NativeGroup("ring", 3, "q"), 1000);
  engine_->Schedule(1000);
  EXPECT_EQ(W("team-a/ring").state, Workload::State::kPending);  // 2 of 3
  EXPECT_EQ(W("team-a/ring").cluster_queue, "team-a");
  engine_->AddPod(NativeMember("ring", 2, 4, ""), 2000);
  engine_->Schedule(2000);
  // 3 x 4 = 12 GPUs: team-a's 8 and 4 borrowed from team-b, all at once.
  EXPECT_EQ(W("team-a/ring").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/ring").placements.size(), 3u);
}

// The native PodGroup's queue label names the queue of the whole gang,
// before its pods' own labels.
TEST_F(EngineTest, NativePodGroupsQueueLabelGoesBeforeThePods) {
  Start(TwoTeams());
  engine_->AddPodGroup(NativeGroup("ring", 2, "q"), 0);
  for (int i = 0; i < 2; ++i) {
    engine_->AddPod(NativeMember("ring", i, 1, "no-such-queue"), 0);
  }
  engine_->Schedule(0);
  EXPECT_EQ(W("team-a/ring").local_queue, "q");
  EXPECT_EQ(W("team-a/ring").state, Workload::State::kAdmitted);
}

TEST_F(EngineTest, ReclaimEvictsTheWholeBorrowingGang) {
  Start(TwoTeams({}, PreemptionPolicy{.reclaim_within_cohort =
                                          ReclaimWithinCohort::kAny}));
  SubmitGang("team-a", "borrower", 2, 8, 0);  // uses team-b's 8 too
  engine_->Schedule(0);
  ASSERT_EQ(W("team-a/borrower").state, Workload::State::kAdmitted);
  SubmitGang("team-b", "owner", 1, 8, 1000);
  engine_->Schedule(1000);
  EXPECT_EQ(W("team-b/owner").state, Workload::State::kAdmitted);
  const Workload& victim = W("team-a/borrower");
  EXPECT_EQ(victim.state, Workload::State::kPending);  // requeued whole
  EXPECT_EQ(victim.preemptions, 1);
  EXPECT_TRUE(victim.placements.empty());
  EXPECT_EQ(model_.pod_count(), 1u);  // only the owner's pod runs
}

TEST_F(EngineTest, LowerPriorityIsPreemptedWithinTheQueueOnlyWhenAllowed) {
  Start(TwoTeams(PreemptionPolicy{.within_cluster_queue =
                                      WithinClusterQueue::kLowerPriority}),
        1);
  SubmitGang("team-a", "low", 1, 8, 0, 10);
  engine_->Schedule(0);
  SubmitGang("team-a", "high", 1, 8, 1000, 100);
  engine_->Schedule(1000);
  EXPECT_EQ(W("team-a/high").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/low").state, Workload::State::kPending);
  ASSERT_FALSE(engine_->events().empty());
  EXPECT_EQ(engine_->events().back().type, EngineEvent::Type::kAdmitted);
  EXPECT_EQ(engine_->events()[1].type, EngineEvent::Type::kPreempted);
  EXPECT_EQ(engine_->events()[1].by, "team-a/high");
}

TEST_F(EngineTest, MinimalVictimSetSparesWhatIsNotNeeded) {
  Start(TwoTeams(PreemptionPolicy{.within_cluster_queue =
                                      WithinClusterQueue::kLowerPriority}),
        1);
  // Four 2-GPU workloads fill the node; a 4-GPU high-priority one needs
  // only two of them gone: the two most recently admitted.
  for (int i = 0; i < 4; ++i) {
    SubmitGang("team-a", "small-" + std::to_string(i), 1, 2, i * 1000, 10);
    engine_->Schedule(i * 1000);
  }
  SubmitGang("team-a", "big", 1, 4, 10000, 100);
  engine_->Schedule(10000);
  EXPECT_EQ(W("team-a/big").state, Workload::State::kAdmitted);
  int preempted = 0;
  for (const auto& [key, w] : engine_->workloads()) preempted += w.preemptions;
  EXPECT_EQ(preempted, 2);
  EXPECT_EQ(W("team-a/small-0").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/small-3").state, Workload::State::kPending);
}

TEST_F(EngineTest, StrictFifoBlocksBehindItsHeadBestEffortDoesNot) {
  Policy policy = TwoTeams();
  policy.cluster_queues[0].queueing_strategy = QueueingStrategy::kStrictFifo;
  policy.cluster_queues[0].cohort = "";  // no borrowing: 8 GPUs only
  policy.cluster_queues[1].cohort = "";
  Start(policy, 2);
  SubmitGang("team-a", "head", 2, 8, 0);  // 16 > 8: never fits
  SubmitGang("team-a", "small", 1, 1, 1000);
  SubmitGang("team-b", "head", 2, 8, 0);
  SubmitGang("team-b", "small", 1, 1, 1000);
  engine_->Schedule(2000);
  EXPECT_EQ(W("team-a/small").state, Workload::State::kPending);
  EXPECT_NE(W("team-a/small").reason.find("StrictFIFO"), std::string::npos);
  EXPECT_EQ(W("team-b/small").state, Workload::State::kAdmitted);
}

TEST_F(EngineTest, TopologyRequiredKeepsTheGangInOneRack) {
  Policy policy = TwoTeams();
  policy.cluster_queues[0].resource_groups[0].flavors[0].resources[0].nominal =
      32;
  for (int i = 0; i < 4; ++i) {
    model_.UpsertNode(
        Dgx("dgx-" + std::to_string(i), i < 2 ? "rack-1" : "rack-2"));
  }
  auto engine = QueueingEngine::Create(policy, &model_);
  ASSERT_TRUE(engine.ok());
  engine_ = *std::move(engine);
  // Take 4 GPUs on dgx-0 so rack-1 cannot hold 2 x 8.
  SubmitGang("team-a", "filler", 1, 4, 0);
  engine_->Schedule(0);
  for (int i = 0; i < 2; ++i) {
    Pod pod = GangPod("team-a", "ring", i, 8, 2);
    pod.meta.annotations["gpusched.io/topology-required"] = "gpusched.io/rack";
    ReadPodAdmissionState(pod);
    engine_->AddPod(pod, 1000);
  }
  engine_->Schedule(1000);
  const Workload& w = W("team-a/ring");
  ASSERT_EQ(w.state, Workload::State::kAdmitted) << w.reason;
  for (const auto& [pod, placement] : w.placements) {
    EXPECT_TRUE(placement.node == "dgx-2" || placement.node == "dgx-3")
        << placement.node;
  }
}

}  // namespace
}  // namespace gpusched

namespace gpusched {
namespace {

TEST_F(EngineTest, GangWhoseAssumedNodeVanishesIsReplannedWhole) {
  Start(TwoTeams(), 3);
  SubmitGang("team-a", "ring", 2, 8, 0);
  engine_->Schedule(0);
  ASSERT_EQ(W("team-a/ring").state, Workload::State::kAdmitted);
  const std::string lost = W("team-a/ring").placements.at("team-a/ring-0").node;
  model_.RemoveNode(lost);  // deleted under the unbound member
  engine_->Schedule(1000);
  const Workload& w = W("team-a/ring");
  ASSERT_EQ(w.state, Workload::State::kAdmitted) << w.reason;
  for (const auto& [pod, placement] : w.placements)
    EXPECT_NE(placement.node, lost);
  EXPECT_EQ(model_.pod_count(), 2u);  // nothing left behind from the first plan
  EXPECT_EQ(engine_->events()[1].type, EngineEvent::Type::kEvicted);
}

}  // namespace
}  // namespace gpusched

namespace gpusched {
namespace {

// team-a may use the whole cluster of 2 x 8 GPUs and preempts its own
// lower priorities.
Policy OneBigQueue() {
  Policy policy = TwoTeams();
  policy.cluster_queues[0] =
      Queue("team-a", 16,
            PreemptionPolicy{.within_cluster_queue =
                                 WithinClusterQueue::kLowerPriority});
  return policy;
}

class OneBigQueueTest : public EngineTest {
 protected:
  struct Single {
    std::string ns, name;
    int gpus;
  };
  // Admits each single-pod workload at priority 10, then submits team-a's
  // 2 x 8-GPU gang "high" at priority 100 and schedules once more.
  void AdmitLowThenAskHigh(const std::vector<Single>& low) {
    Start(OneBigQueue());
    for (const Single& s : low) SubmitGang(s.ns, s.name, 1, s.gpus, 0, 10);
    engine_->Schedule(0);
    for (const Single& s : low) {
      ASSERT_EQ(W(s.ns + "/" + s.name).state, Workload::State::kAdmitted);
    }
    SubmitGang("team-a", "high", 2, 8, 1000, 100);
    engine_->Schedule(1000);
  }
};

TEST_F(OneBigQueueTest, PreemptionCountsTheCapacityItsVictimsFree) {
  // 8 on one node, 4 on the other: 4 free, no node with 8 free; only the
  // victims' GPUs can make room for a 2 x 8 gang.
  AdmitLowThenAskHigh({{"team-a", "low-8", 8}, {"team-a", "low-4", 4}});
  EXPECT_EQ(W("team-a/high").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/low-8").preemptions, 1);
  EXPECT_EQ(W("team-a/low-4").preemptions, 1);
}

TEST_F(OneBigQueueTest, PreemptionThatCannotMakeRoomEvictsNobody) {
  // team-b's 8 GPUs are not team-a's to take: even with its own 1-GPU
  // workload gone, team-a has 8 GPUs of room, not the 16 it asks for.
  AdmitLowThenAskHigh({{"team-b", "other", 8}, {"team-a", "low", 1}});
  EXPECT_EQ(W("team-a/high").state, Workload::State::kPending);
  EXPECT_EQ(W("team-a/low").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/low").preemptions, 0);
}

TEST_F(EngineTest, ALiftedReservationFreesItsNodeForOthersInTheSamePass) {
  Policy policy = TwoTeams();
  policy.config.starvation_timeout_ms = 10'000;
  Start(std::move(policy), 1);
  SubmitGang("team-a", "fill-6", 1, 6, 0);
  SubmitGang("team-a", "fill-2", 1, 2, 0);
  engine_->Schedule(0);
  SubmitGang("team-b", "starving", 1, 1, 0);
  SubmitGang("team-a", "urgent", 1, 1, 1000, 100);
  engine_->Schedule(1000);
  ASSERT_EQ(W("team-b/starving").state, Workload::State::kPending);
  // 2 GPUs come free; the node is reserved for the starving workload, so
  // the urgent one fails first, then may use the rest once the starving
  // one is admitted and the reservation is lifted.
  ASSERT_NE(engine_->Finish("team-a/fill-2", 20'000),
            FinishOutcome::kUnknownKey);
  engine_->Schedule(20'000);
  EXPECT_EQ(W("team-b/starving").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/urgent").state, Workload::State::kAdmitted)
      << W("team-a/urgent").reason;
}

TEST_F(EngineTest, NodeRelabelledIntoTheFlavorIsUsedAtOnce) {
  Node other = Dgx("dgx-0");
  other.meta.labels["nvidia.com/gpu.product"] = "NVIDIA-A100-SXM4-80GB";
  model_.UpsertNode(other);
  auto engine = QueueingEngine::Create(TwoTeams(), &model_);
  ASSERT_TRUE(engine.ok()) << engine.status();
  engine_ = *std::move(engine);
  SubmitGang("team-a", "train", 1, 8, 0);
  engine_->Schedule(0);
  ASSERT_EQ(W("team-a/train").state, Workload::State::kPending);
  EXPECT_NE(W("team-a/train").reason.find("no node matches"), std::string::npos)
      << W("team-a/train").reason;
  // The engine keeps the flavor's node list between calls; a label change
  // must reach it.
  model_.UpsertNode(Dgx("dgx-0"));
  engine_->Schedule(1000);
  EXPECT_EQ(W("team-a/train").state, Workload::State::kAdmitted);
}

// A pending workload whose pods are all deleted (a Job deleted before it
// ran) is over and forgotten, not kept for ever as "0 of 3"; a pod of the
// same group made later starts a new workload. One a PodGroup declares
// waits on for its pods.
TEST_F(EngineTest, PendingWorkloadWhosePodsAreAllDeletedIsForgotten) {
  Start(TwoTeams());
  SubmitGang("team-a", "big", 3, 8, 0);  // 24 GPUs: never fits
  engine_->Schedule(0);
  ASSERT_EQ(W("team-a/big").state, Workload::State::kPending);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NE(engine_->Delete("team-a/big-" + std::to_string(i), 1000),
              DeleteOutcome::kUnknownKey);
  }
  EXPECT_EQ(W("team-a/big").state, Workload::State::kFinished);
  EXPECT_EQ(engine_->ForgetFinished(0), 1u);
  EXPECT_FALSE(engine_->workloads().contains("team-a/big"));
  EXPECT_EQ(engine_->FindWorkloadOfPod("team-a/big-0"), nullptr);

  engine_->AddPod(GangPod("team-a", "big", 0, 8, 1), 2000);
  engine_->Schedule(2000);
  EXPECT_EQ(W("team-a/big").state, Workload::State::kAdmitted);

  Pod declared = GangPod("team-a", "v", 0, 1, 0);
  declared.meta.labels.erase("kueue.x-k8s.io/pod-group-name");
  declared.meta.annotations = {{"scheduling.k8s.io/group-name", "v"}};
  ReadPodAdmissionState(declared);
  engine_->AddPod(declared, 3000);
  PodGroup group;
  group.meta.namespace_name = "team-a";
  group.meta.name = "v";
  group.min_member = 2;
  engine_->AddPodGroup(group, 3000);
  EXPECT_NE(engine_->Delete("team-a/v-0", 4000), DeleteOutcome::kUnknownKey);
  EXPECT_EQ(engine_->ForgetFinished(0), 0u);
  EXPECT_EQ(W("team-a/v").state, Workload::State::kPending);
}

// Finish and Delete say what they made of the key: a member that left, the
// workload over, or a key they do not know.
TEST_F(EngineTest, FinishAndDeleteSayWhatTheyDid) {
  Start(TwoTeams());
  SubmitGang("team-a", "train", 2, 8, 0);
  SubmitGang("team-a", "tune", 2, 1, 0);
  engine_->Schedule(0);
  EXPECT_EQ(engine_->Finish("team-a/train-0", 10),
            FinishOutcome::kMemberFinished);
  EXPECT_EQ(engine_->Finish("team-a/train-1", 10),
            FinishOutcome::kWorkloadFinished);
  EXPECT_EQ(engine_->Finish("team-a/ghost", 10), FinishOutcome::kUnknownKey);
  EXPECT_EQ(engine_->Delete("team-a/tune-0", 20),
            DeleteOutcome::kMemberDeleted);
  EXPECT_EQ(engine_->Delete("team-a/tune", 20),
            DeleteOutcome::kWorkloadDeleted);  // by its key: the rest go
  EXPECT_EQ(engine_->Delete("team-a/tune-1", 20), DeleteOutcome::kUnknownKey);
}

}  // namespace
}  // namespace gpusched
