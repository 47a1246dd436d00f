// After a restart the queueing core starts empty and relearns the cluster
// from a pod list: pods that run, or that it admitted on a node, are
// adopted there (their queues charged) and never admitted a second time.
#include <atomic>
#include <utility>

#include "api/controller/admission_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/restart_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

class RestartAdoptionTest : public RestartFixture {};

TEST_F(RestartAdoptionTest, PendingWorkloadWaitsForTheQuotaAdoptedPodsHold) {
  const auto [old0, old1, fresh] = StartWithTeamAFull();
  // The pending pod comes first in the list: adoption must not depend on it.
  List({fresh, old0, old1});
  EXPECT_EQ(Usage("team-a"), 8);  // 4 + 4 adopted = nominal 8
  const GateVerdict waiting = loop_->Check(fresh);
  EXPECT_EQ(waiting.assigned_node, "");
  EXPECT_THAT(waiting.waiting_reason,
              HasSubstr("queue team-a: needs 4 nvidia.com/gpu of flavor h100; "
                        "0 free of nominal 8"));
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(service_->CountGpus().free, 8);  // 16 - 8 running, none twice

  Finish(old0);
  EXPECT_NE(loop_->Check(fresh).assigned_node, "");  // 8 - 4 = 4 free
  std::vector<AdmitMember> admitted = Admissions(sink_.Take());
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].pod.pod_name, "fresh");
  EXPECT_EQ(Usage("team-a"), 8);  // 4 left running + 4 admitted
}

TEST_F(RestartAdoptionTest, QueueOverItsQuotaAdmitsNothingUntilBelowIt) {
  Start(TeamAWithoutCohort(), 2);
  const Pod a = BoundTo(QueuedPod("team-a", "a", 4), "dgx-0", "0,1,2,3");
  const Pod b = BoundTo(QueuedPod("team-a", "b", 4), "dgx-0", "4,5,6,7");
  const Pod c = BoundTo(QueuedPod("team-a", "c", 4), "dgx-1", "0,1,2,3");
  const Pod fresh = QueuedPod("team-a", "fresh", 4);
  List({fresh, a, b, c});
  EXPECT_EQ(Usage("team-a"), 12);  // the pods exist: charged past nominal 8
  EXPECT_EQ(loop_->Check(fresh).assigned_node, "");

  Finish(a);
  EXPECT_EQ(Usage("team-a"), 8);  // 12 - 4: at nominal, still none free
  EXPECT_EQ(loop_->Check(fresh).assigned_node, "");

  Finish(b);
  EXPECT_NE(loop_->Check(fresh).assigned_node, "");  // 8 - 4 = 4 free
  EXPECT_EQ(Admissions(sink_.Take()).size(), 1u);
}

TEST_F(RestartAdoptionTest, GangAdoptedWholeStaysAdmittedWithoutNewDecisions) {
  Start(TwoTeams(), 2);
  const Pod m0 =
      BoundTo(GangPod("team-a", "ring", 0, 8, 2), "dgx-0", "0,1,2,3,4,5,6,7");
  const Pod m1 =
      BoundTo(GangPod("team-a", "ring", 1, 8, 2), "dgx-1", "0,1,2,3,4,5,6,7");
  List({m0, m1});
  EXPECT_EQ(StateOf("team-a/ring"), Workload::State::kAdmitted);
  EXPECT_EQ(loop_->Check(m0).assigned_node, "dgx-0");
  EXPECT_EQ(loop_->Check(m1).assigned_node, "dgx-1");
  EXPECT_EQ(Usage("team-a"), 16);  // 8 nominal + 8 borrowed from team-b
  // Past the bind timeout and the stale-gang grace: nothing rolls back.
  now_ += 300'000 + 60'000 + 1;
  loop_->WaitIdle();
  EXPECT_EQ(StateOf("team-a/ring"), Workload::State::kAdmitted);
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(service_->CountGpus().free, 0);
}

// A gang adopted short of minMember keeps what runs, as a running gang
// that lost members does, and is evicted whole after the grace.
TEST_F(RestartAdoptionTest, GangAdoptedShortOfMinMemberIsEvictedAfterGrace) {
  Start(TwoTeams(), 2);
  const Pod m0 =
      BoundTo(GangPod("team-a", "ring", 0, 8, 2), "dgx-0", "0,1,2,3,4,5,6,7");
  List({m0});
  EXPECT_EQ(StateOf("team-a/ring"), Workload::State::kAdmitted);
  EXPECT_TRUE(sink_.Take().empty());

  now_ += 60'000;  // stale_gang_grace_ms
  loop_->WaitIdle();
  std::vector<QueueDecision> decisions = sink_.Take();
  ASSERT_EQ(decisions.size(), 1u);
  const auto* revoke = std::get_if<RevokeMember>(&decisions[0]);
  ASSERT_NE(revoke, nullptr);
  EXPECT_EQ(revoke->pod.pod_name, "ring-0");
  EXPECT_TRUE(revoke->evict);  // bound: only eviction frees it
  EXPECT_EQ(Usage("team-a"), 0);
}

TEST_F(RestartAdoptionTest, AdoptionIsIdempotentAcrossARelistAndUpdates) {
  const auto [old0, old1, fresh] = StartWithTeamAFull();
  List({old0, old1, fresh});
  List({old0, old1, fresh});  // a relist (410 Gone)
  loop_->PodUpserted(old0);   // and a watch update
  loop_->WaitIdle();
  EXPECT_EQ(Usage("team-a"), 8);  // charged once: 4 + 4
  EXPECT_EQ(service_->CountGpus().free, 8);
  EXPECT_EQ(loop_->Check(fresh).assigned_node, "");
  EXPECT_TRUE(sink_.Take().empty());
}

TEST_F(RestartAdoptionTest, AdmittedButUnboundPodKeepsItsNode) {
  Start(TwoTeams(), 2);
  const Pod kept = AdmittedOn(QueuedPod("team-a", "kept", 4), "dgx-1");
  List({kept});
  EXPECT_EQ(loop_->Check(kept).assigned_node, "dgx-1");
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(Usage("team-a"), 4);
  EXPECT_EQ(service_->CountGpus().free, 12);  // its 4 held on dgx-1

  // kube-scheduler binds it there: still one charge, one hold.
  Pod bound = BoundTo(kept, "dgx-1", "0,1,2,3");
  service_->ObserveBound(bound);
  loop_->PodUpserted(bound);
  loop_->WaitIdle();
  EXPECT_EQ(Usage("team-a"), 4);
  EXPECT_EQ(service_->CountGpus().free, 12);
  EXPECT_TRUE(sink_.Take().empty());
}

// A label naming a node that is gone is cleared, and the pod is queued
// afresh: the revocation reaches the writer before the new admission.
TEST_F(RestartAdoptionTest, AdmissionOnAVanishedNodeIsClearedAndQueuedAgain) {
  Start(TwoTeams(), 1, /*await_lists=*/true);
  ListPods({AdmittedOn(QueuedPod("team-a", "moved", 4), "dgx-9")});
  ListNodesAndGroups();  // complete, without dgx-9: it is gone
  loop_->WaitIdle();
  std::vector<QueueDecision> decisions = sink_.Take();
  ASSERT_EQ(decisions.size(), 2u);
  const auto* revoke = std::get_if<RevokeMember>(&decisions[0]);
  ASSERT_NE(revoke, nullptr);
  EXPECT_EQ(revoke->node, "dgx-9");
  EXPECT_FALSE(revoke->evict);  // ungated and unbound: only the label goes
  const auto* admit = std::get_if<AdmitMember>(&decisions[1]);
  ASSERT_NE(admit, nullptr);
  EXPECT_EQ(admit->node, "dgx-0");
}

// Pinned by affinity to a node that is gone, a pod can run nowhere: it is
// evicted (once) and not queued.
TEST_F(RestartAdoptionTest, PodPinnedToAVanishedNodeIsEvictedOnce) {
  Start(TwoTeams(), 1, /*await_lists=*/true);
  const Pod pinned = PinnedTo(QueuedPod("team-a", "pinned", 4), "dgx-9");
  ListPods({pinned});
  ListNodesAndGroups();
  loop_->WaitIdle();
  std::vector<QueueDecision> decisions = sink_.Take();
  ASSERT_EQ(decisions.size(), 1u);
  const auto* revoke = std::get_if<RevokeMember>(&decisions[0]);
  ASSERT_NE(revoke, nullptr);
  EXPECT_TRUE(revoke->evict);
  EXPECT_THAT(revoke->reason,
              HasSubstr("node dgx-9 is no longer in the cluster"));
  List({pinned});
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(Usage("team-a"), 0);
}

// The node list comes on its own watch: a bound pod whose node the model
// does not have yet is neither queued nor admitted elsewhere, and is
// adopted once the node is there.
TEST_F(RestartAdoptionTest, BoundPodIsAdoptedWhenItsNodeArrives) {
  Start(TwoTeams(), 1);
  const Pod early =
      BoundTo(QueuedPod("team-a", "early", 8), "dgx-5", "0,1,2,3,4,5,6,7");
  List({early});
  EXPECT_EQ(Usage("team-a"), 0);
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(service_->CountGpus().free, 8);  // dgx-0 untouched

  service_->UpsertNodes({Dgx("dgx-5")});
  service_->AddRunningPods({early});  // the sync's orphan, placed
  loop_->WaitIdle();
  EXPECT_EQ(Usage("team-a"), 8);
  EXPECT_EQ(loop_->Check(early).assigned_node, "dgx-5");
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(service_->CountGpus().free, 8);  // dgx-0's: dgx-5 is full
}

// The engine on its own: devices and flavors.
class EngineAdoptionTest : public ::testing::Test {
 protected:
  void Start(Policy policy) {
    model_.UpsertNode(Dgx("dgx-0"));
    Node a100 = Dgx("a100-0");
    a100.meta.labels["nvidia.com/gpu.product"] = "NVIDIA-A100-80GB";
    model_.UpsertNode(a100);
    auto engine = QueueingEngine::Create(std::move(policy), &model_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }
  const Workload& W(const std::string& key) {
    return engine_->workloads().at(key);
  }

  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
};

TEST_F(EngineAdoptionTest, BoundPodKeepsTheDevicesTheSyncRecorded) {
  Start(TwoTeams());
  const Pod pod = BoundTo(QueuedPod("team-a", "p", 2), "dgx-0", "4,5");
  ASSERT_TRUE(model_.AddRunningPod(pod).ok());
  EXPECT_EQ(engine_->Adopt(pod, "dgx-0", true, 0).outcome,
            Adoption::Outcome::kAdopted);
  const Placement& placed = W("team-a/p").placements.at("team-a/p");
  EXPECT_EQ(placed.gpus.gpu_ids, (std::vector<int>{4, 5}));
  EXPECT_EQ(model_.pod_count(), 1u);
  EXPECT_EQ(engine_->Adopt(pod, "dgx-0", true, 0).outcome,
            Adoption::Outcome::kAlreadyPlaced);
  EXPECT_EQ(engine_->quota().Usage("team-a", kH100Gpus), 2);  // once
}

TEST_F(EngineAdoptionTest, BoundPodTheModelLacksIsPlacedOnItsRecordedGpus) {
  Start(TwoTeams());
  const Pod pod = BoundTo(QueuedPod("team-a", "p", 2), "dgx-0", "6,7");
  ASSERT_EQ(engine_->Adopt(pod, "dgx-0", true, 0).outcome,
            Adoption::Outcome::kAdopted);
  EXPECT_EQ(W("team-a/p").placements.at("team-a/p").gpus.gpu_ids,
            (std::vector<int>{6, 7}));
  EXPECT_EQ(model_.FindPodByUid(PodUid(pod))->node, "dgx-0");
  EXPECT_TRUE(W("team-a/p").bound.contains("team-a/p"));
}

TEST_F(EngineAdoptionTest, UnboundPodOnAFullNodeIsNotAdopted) {
  Start(TwoTeams());
  ASSERT_TRUE(model_
                  .AddRunningPod(BoundTo(QueuedPod("other", "big", 8), "dgx-0",
                                         "0,1,2,3,4,5,6,7"))
                  .ok());
  const Pod pod = AdmittedOn(QueuedPod("team-a", "late", 2), "dgx-0");
  const Adoption adoption = engine_->Adopt(pod, "dgx-0", false, 0);
  EXPECT_EQ(adoption.outcome, Adoption::Outcome::kDoesNotFit);
  EXPECT_THAT(adoption.reason, HasSubstr("node dgx-0"));
  EXPECT_EQ(engine_->FindWorkloadOfPod("team-a/late"), nullptr);
  EXPECT_EQ(engine_->quota().Usage("team-a", kH100Gpus), 0);
}

TEST_F(EngineAdoptionTest, PodIsChargedToTheFlavorOfItsNode) {
  Policy policy = TwoTeams();
  policy.flavors.push_back(ResourceFlavor{
      .name = "a100",
      .node_labels = {{"nvidia.com/gpu.product", "NVIDIA-A100-80GB"}}});
  policy.cluster_queues[0].resource_groups[0].flavors.push_back(FlavorQuotas{
      .flavor = "a100",
      .resources = {ResourceQuota{.name = "nvidia.com/gpu", .nominal = 8}}});
  Start(std::move(policy));
  const Pod pod = BoundTo(QueuedPod("team-a", "p", 2), "a100-0", "0,1");
  ASSERT_EQ(engine_->Adopt(pod, "a100-0", true, 0).outcome,
            Adoption::Outcome::kAdopted);
  EXPECT_EQ(engine_->quota().Usage("team-a", {"a100", "nvidia.com/gpu"}), 2);
  EXPECT_EQ(engine_->quota().Usage("team-a", kH100Gpus), 0);
}

// The PodGroup may arrive after the pod list: a gang adopted before it
// learns its minMember then, and short of it is evicted after the grace.
TEST_F(EngineAdoptionTest, GangShortOfALateMinMemberIsEvictedAfterGrace) {
  Start(TwoTeams());
  Pod member = BoundTo(QueuedPod("team-a", "vc-0", 2), "dgx-0", "0,1");
  member.meta.annotations[kVolcanoGroupAnnotation] = "vc";
  ReadPodAdmissionState(member);
  ASSERT_EQ(engine_->Adopt(member, "dgx-0", true, 0).outcome,
            Adoption::Outcome::kAdopted);
  PodGroup group;
  group.meta.name = "vc";
  group.meta.namespace_name = "team-a";
  group.min_member = 2;
  engine_->AddPodGroup(group, 0);
  engine_->Schedule(59'999);
  EXPECT_EQ(W("team-a/vc").state, Workload::State::kAdmitted);
  engine_->Schedule(60'000);  // stale_gang_grace_ms
  EXPECT_EQ(W("team-a/vc").state, Workload::State::kPending);
  EXPECT_EQ(engine_->quota().Usage("team-a", kH100Gpus), 0);
}

}  // namespace
}  // namespace gpusched
