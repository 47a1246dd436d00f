// kube-scheduler's own preemption (the preempt verb) for a pod outside the
// queues, through the extender service with the admission loop as its gate:
// no gang is split, no queue loses what its nominal quota guarantees.
#include <algorithm>

#include "api/controller/admission_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A gang member outside the queues (gang key, no queue label).
Pod LooseGangPod(const std::string& group, int index, int gpus, int count) {
  Pod pod = GangPod("lab", group, index, gpus, count);
  pod.meta.labels.erase(kQueueNameLabel);
  ReadPodAdmissionState(pod);
  return pod;
}

// A pod of no queue nor gang, already running on `node`.
Pod Unmanaged(const std::string& name, const std::string& node, int gpus,
              const std::string& gpu_ids) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_name = "batch";
  pod.meta.uid = "batch-" + name;
  pod.node_name = node;
  pod.phase = PodPhase::kRunning;
  pod.meta.annotations[kGpuIdsAnnotation] = gpu_ids;
  pod.containers.push_back(
      Container{.name = "main", .requests = {{"nvidia.com/gpu", gpus}}});
  return pod;
}

// The high-priority pod kube-scheduler preempts for.
Pod Preemptor(int gpus) {
  Pod pod;
  pod.meta.name = "urgent";
  pod.meta.namespace_name = "ops";
  pod.meta.uid = "ops-urgent";
  pod.priority = 1000;
  pod.containers.push_back(
      Container{.name = "main", .requests = {{"nvidia.com/gpu", gpus}}});
  return pod;
}

class PreemptGuardTest : public ::testing::Test {
 protected:
  void Start(Policy policy, int nodes) {
    auto loop = AdmissionLoop::Create(std::move(policy),
                                      {.clock = [] { return int64_t{1000}; }});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(ServiceOptions{
        .gate = loop_.get(), .clock = [] { return int64_t{1000}; }});
    std::vector<Node> all;
    for (int i = 0; i < nodes; ++i) {
      all.push_back(Dgx("dgx-" + std::to_string(i)));
    }
    service_->UpsertNodes(std::move(all));
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override {
    if (loop_ != nullptr) loop_->Stop();
  }
  // Admits the pods (one pass) and says where each went.
  void Admit(const std::vector<Pod>& pods) {
    for (const Pod& pod : pods) loop_->PodUpserted(pod);
    loop_->WaitIdle();
    for (const Pod& pod : pods) {
      ASSERT_FALSE(loop_->Check(pod).assigned_node.empty()) << pod.Key();
    }
  }
  std::string NodeOf(const Pod& pod) { return loop_->Check(pod).assigned_node; }
  // What kube-scheduler would propose: every pod on the node.
  PreemptionCandidate EveryPodOn(const std::string& node) {
    return service_->Read([&](const ClusterModel& model) {
      PreemptionCandidate candidate{.node = node};
      for (const auto& [key, pod] : model.FindNode(node)->pods()) {
        candidate.victim_uids.push_back(pod.uid);
      }
      return candidate;
    });
  }
  std::vector<PreemptionCandidate> Preempt(
      int gpus, std::vector<PreemptionCandidate> candidates) {
    notes_.clear();
    return service_->Preempt(Preemptor(gpus), std::move(candidates), &notes_);
  }

  RecordingSink sink_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
  std::vector<std::string> notes_;
};

TEST_F(PreemptGuardTest, AGangSpreadOverNodesIsNoVictim) {
  Start(TwoTeams(), 2);
  Admit({LooseGangPod("ring", 0, 8, 2), LooseGangPod("ring", 1, 8, 2)});
  const std::string node = NodeOf(LooseGangPod("ring", 0, 8, 2));

  EXPECT_THAT(Preempt(8, {EveryPodOn(node)}), IsEmpty());
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0], HasSubstr("gang lab/ring is evicted whole"));
  EXPECT_THAT(notes_[0], HasSubstr("no victim is left"));
}

TEST_F(PreemptGuardTest, AGangOnOneNodeGoesOnlyWithAllItsMembers) {
  Start(TwoTeams(), 1);
  Admit({LooseGangPod("pair", 0, 4, 2), LooseGangPod("pair", 1, 4, 2)});

  // kube-scheduler's minimal set for 4 GPUs names one member: refused.
  EXPECT_THAT(Preempt(4, {{.node = "dgx-0", .victim_uids = {"lab-pair-0"}}}),
              IsEmpty());
  // Both named: both go, though 4 GPUs would do (no member is reprieved
  // alone).
  EXPECT_THAT(
      Preempt(4, {EveryPodOn("dgx-0")}),
      ElementsAre(PreemptionCandidate{
          .node = "dgx-0", .victim_uids = {"lab-pair-0", "lab-pair-1"}}));
}

TEST_F(PreemptGuardTest, AQueuedPodWithinItsNominalQuotaIsNoVictim) {
  Start(TwoTeams(), 1);
  Admit({QueuedPod("team-a", "train", 8)});  // uses 8 of nominal 8

  EXPECT_THAT(Preempt(8, {EveryPodOn("dgx-0")}), IsEmpty());
  ASSERT_EQ(notes_.size(), 1u);
  EXPECT_THAT(notes_[0],
              HasSubstr("ClusterQueue team-a would fall below its nominal "
                        "quota of nvidia.com/gpu (flavor h100)"));
}

TEST_F(PreemptGuardTest, AnUnmanagedPodIsStillAVictim) {
  Start(TwoTeams(), 1);
  service_->AddRunningPods({Unmanaged("old", "dgx-0", 8, "0,1,2,3,4,5,6,7")});

  EXPECT_THAT(Preempt(8, {EveryPodOn("dgx-0")}),
              ElementsAre(PreemptionCandidate{.node = "dgx-0",
                                              .victim_uids = {"batch-old"}}));
  EXPECT_THAT(notes_, IsEmpty());
}

TEST_F(PreemptGuardTest, KeptVictimsLeaveTheNodeOnlyIfThePodStillFits) {
  Start(TwoTeams(), 1);
  Admit({QueuedPod("team-a", "train", 4)});  // within nominal: kept
  service_->AddRunningPods({Unmanaged("old", "dgx-0", 4, "0,1,2,3")});

  // 4 GPUs: the unmanaged pod's alone are enough.
  const PreemptionCandidate both = EveryPodOn("dgx-0");
  ASSERT_EQ(both.victim_uids.size(), 2u);
  EXPECT_THAT(Preempt(4, {both}),
              ElementsAre(PreemptionCandidate{.node = "dgx-0",
                                              .victim_uids = {"batch-old"}}));
  EXPECT_THAT(notes_, ElementsAre(HasSubstr("the pod fits without them")));
  // 8 GPUs: they are not.
  EXPECT_THAT(Preempt(8, {both}), IsEmpty());
  EXPECT_THAT(notes_, ElementsAre(HasSubstr("the pod does not fit")));
}

TEST_F(PreemptGuardTest, ABorrowingQueueLosesAtMostWhatItBorrows) {
  Start(TwoTeams(), 2);
  // team-a: 12 of nominal 8, 4 borrowed from team-b's unused quota.
  const std::vector<Pod> pods = {QueuedPod("team-a", "a1", 4),
                                 QueuedPod("team-a", "a2", 4),
                                 QueuedPod("team-a", "a3", 4)};
  Admit(pods);

  // One 4-GPU pod is borrowed capacity: it may go, the second may not.
  const VictimReview review =
      loop_->ReviewVictims(std::vector<std::string>{"team-a-a1", "team-a-a2"});
  EXPECT_THAT(review.together, ElementsAre(ElementsAre("team-a-a1")));
  ASSERT_EQ(review.kept.size(), 1u);
  EXPECT_EQ(review.kept[0].uid, "team-a-a2");
  EXPECT_THAT(review.kept[0].reason,
              HasSubstr("holds 4 and the queue borrows only 0"));

  // Through preempt, on the node two of them fill: 4 GPUs can be had ...
  PreemptionCandidate full = EveryPodOn("dgx-0");
  if (full.victim_uids.size() != 2) full = EveryPodOn("dgx-1");
  ASSERT_EQ(full.victim_uids.size(), 2u);
  std::vector<PreemptionCandidate> kept = Preempt(4, {full});
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].victim_uids.size(), 1u);
  // ... 8 cannot: that would take 8 of team-a's 12 (4 borrowed).
  EXPECT_THAT(Preempt(8, {full}), IsEmpty());
}

TEST_F(PreemptGuardTest, AQueueThatBorrowsEnoughLosesAWholeNode) {
  Start(TwoTeams(), 2);
  // team-a: 16 of nominal 8; evicting one 8-GPU pod leaves it at 8.
  Admit({QueuedPod("team-a", "a1", 8), QueuedPod("team-a", "a2", 8)});

  std::vector<PreemptionCandidate> kept =
      Preempt(8, {EveryPodOn("dgx-0"), EveryPodOn("dgx-1")});
  ASSERT_EQ(kept.size(), 2u);  // either node will do; kube-scheduler picks
  EXPECT_EQ(kept[0].victim_uids.size() + kept[1].victim_uids.size(), 2u);
  // Both at once would take its guarantee.
  const VictimReview both =
      loop_->ReviewVictims(std::vector<std::string>{"team-a-a1", "team-a-a2"});
  EXPECT_EQ(both.kept.size(), 1u);
}

}  // namespace
}  // namespace gpusched
