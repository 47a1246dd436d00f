// Issue K §3 and §4 at the admission loop: a refused admission is taken
// back without a word to the pod it never reached; the first pass waits for
// the DRA lists; a PodGroup API that keeps failing holds only its own
// gangs; a node listed but not readable is not gone.
#include <chrono>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "api/codec/pod_admission_state.h"
#include "api/controller/admission_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/restart_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

Pod GatedBy(Pod pod) {
  pod.scheduling_gates.push_back(kAdmissionGate);
  ReadPodAdmissionState(pod);
  return pod;
}

class FirstPassTest : public RestartFixture {
 protected:
  static void Settle() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<RevokeMember> Revocations(const std::vector<QueueDecision>& all) {
    std::vector<RevokeMember> out;
    for (const QueueDecision& d : all) {
      if (const auto* r = std::get_if<RevokeMember>(&d)) out.push_back(*r);
    }
    return out;
  }
  void Refuse(const AdmitMember& admit, const std::string& message) {
    loop_->AdmissionRefused({.pod = admit.pod,
                             .node = admit.node,
                             .workload = admit.workload,
                             .message = message});
    loop_->WaitIdle();
  }
};

TEST_F(FirstPassTest, ARefusedAdmissionIsTakenBackWithoutTouchingThePod) {
  Start(TwoTeams(), 1);
  const Pod refused = GatedBy(QueuedPod("team-a", "refused", 8));
  loop_->PodUpserted(refused);
  loop_->WaitIdle();
  std::vector<AdmitMember> admitted = Admissions(sink_.Take());
  ASSERT_EQ(admitted.size(), 1u);
  sink_.TakeStatuses();
  Refuse(admitted[0], "denied by ValidatingAdmissionPolicy 'keep-gated'");
  // Never evicted, nor cleared: its gate never lifted.
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(StateOf("team-a/refused"), Workload::State::kPending);
  EXPECT_EQ(Usage("team-a"), 0);
  bool told = false;
  for (const WorkloadStatus& status : sink_.TakeStatuses()) {
    if (status.code != ReasonCode::kAdmissionRefused) continue;
    told = status.code_changed;
    EXPECT_THAT(status.message, HasSubstr("keep-gated"));
  }
  EXPECT_TRUE(told);
  // The queue's room goes to the next pod at once.
  const Pod next = GatedBy(QueuedPod("team-a", "next", 8));
  loop_->PodUpserted(next);
  loop_->WaitIdle();
  admitted = Admissions(sink_.Take());
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].pod.pod_name, "next");
}

// One member refused: the members whose gate lifted are evicted (they can
// never be gated again), the refused one is not.
TEST_F(FirstPassTest, ARefusedGangMemberTakesTheGangBackButIsNotEvicted) {
  Start(TwoTeams(), 1);
  for (int i = 0; i < 2; ++i) {
    loop_->PodUpserted(GatedBy(GangPod("team-a", "ring", i, 2, 2)));
  }
  loop_->WaitIdle();
  std::vector<AdmitMember> admitted = Admissions(sink_.Take());
  ASSERT_EQ(admitted.size(), 2u);
  Refuse(admitted[1], "denied");
  const std::vector<RevokeMember> revoked = Revocations(sink_.Take());
  ASSERT_EQ(revoked.size(), 1u);
  EXPECT_EQ(revoked[0].pod.pod_name, admitted[0].pod.pod_name);
  EXPECT_TRUE(revoked[0].evict);  // the writer evicts it if its gate lifted
  EXPECT_EQ(StateOf("team-a/ring"), Workload::State::kPending);
}

TEST_F(FirstPassTest, AStaleRefusalChangesNothing) {
  Start(TwoTeams(), 1);
  loop_->PodUpserted(GatedBy(QueuedPod("team-a", "p", 4)));
  loop_->WaitIdle();
  std::vector<AdmitMember> admitted = Admissions(sink_.Take());
  ASSERT_EQ(admitted.size(), 1u);
  AdmitMember other_node = admitted[0];
  other_node.node = "dgx-7";
  Refuse(other_node, "denied");
  EXPECT_EQ(StateOf("team-a/p"), Workload::State::kAdmitted);
}

TEST_F(FirstPassTest, NoPassRunsBeforeTheDraListsArrive) {
  Start(TwoTeams(), 1, /*await_lists=*/true);
  ListPods({QueuedPod("team-a", "p", 4)});
  loop_->NodesListed();
  for (PodGroup::Flavor flavor :
       {PodGroup::Flavor::kVolcano, PodGroup::Flavor::kCoscheduling,
        PodGroup::Flavor::kNative}) {
    loop_->PodGroupsListed(flavor, {});
  }
  Settle();
  EXPECT_EQ(loop_->passes(), 0u);
  loop_->DraListed();
  loop_->WaitIdle();
  EXPECT_EQ(Admissions(sink_.Take()).size(), 1u);
}

TEST_F(FirstPassTest, AFailingPodGroupApiHoldsOnlyItsOwnGangs) {
  Start(TwoTeams(), 1, /*await_lists=*/true);
  Pod member = GangPod("team-a", "vc", 0, 2, 1);
  member.meta.labels.erase("kueue.x-k8s.io/pod-group-name");
  member.meta.annotations[kVolcanoGroupAnnotation] = "vc";
  ReadPodAdmissionState(member);
  const Pod solo = QueuedPod("team-a", "solo", 2);
  ListPods({member, solo});
  loop_->NodesListed();
  loop_->PodGroupsListed(PodGroup::Flavor::kCoscheduling, {});
  loop_->PodGroupsListed(PodGroup::Flavor::kNative, {});
  loop_->DraListed();
  Settle();
  EXPECT_EQ(loop_->passes(), 0u);  // Volcano's list has not come yet
  loop_->PodGroupApiFailing(PodGroup::Flavor::kVolcano,
                            "conversion webhook unavailable");
  loop_->WaitIdle();
  const std::vector<AdmitMember> admitted = Admissions(sink_.Take());
  ASSERT_EQ(admitted.size(), 1u);
  EXPECT_EQ(admitted[0].pod.pod_name, "solo");
  EXPECT_THAT(loop_->Check(member).waiting_reason,
              HasSubstr("PodGroupAPIUnavailable"));
  EXPECT_THAT(loop_->Check(member).waiting_reason,
              HasSubstr("conversion webhook unavailable"));
}

TEST_F(FirstPassTest, APodGroupRelistHoldsEveryPassUntilItsListArrives) {
  Start(TwoTeams(), 1, /*await_lists=*/true);
  ListPods({});
  ListNodesAndGroups();
  loop_->WaitIdle();
  const uint64_t passes = loop_->passes();
  loop_->Relisting(ListKind::kNativeGroups);
  loop_->PodUpserted(QueuedPod("team-a", "p", 4));
  Settle();
  EXPECT_EQ(loop_->passes(), passes);
  loop_->PodGroupsListed(PodGroup::Flavor::kNative, {});
  loop_->WaitIdle();
  EXPECT_EQ(Admissions(sink_.Take()).size(), 1u);
}

// A node the list named but that did not decode is still there: the pods
// admitted on it keep their admission.
TEST_F(FirstPassTest, ANodeThatDoesNotDecodeIsNotGone) {
  Start(TwoTeams(), 1, /*await_lists=*/true);
  const Pod pinned = PinnedTo(QueuedPod("team-a", "pinned", 4), "dgx-9");
  ListPods({pinned});
  loop_->NodesListed({"dgx-9"});
  ListGroupsAndDra();
  loop_->WaitIdle();
  EXPECT_TRUE(Revocations(sink_.Take()).empty());
  // As a node not listed at all is: taken back (and evicted, pinned).
  loop_->NodesListed({});
  loop_->WaitIdle();
  EXPECT_EQ(Revocations(sink_.Take()).size(), 1u);
}

TEST_F(FirstPassTest, APodThatDoesNotDecodeIsNotForgotten) {
  Start(TwoTeams(), 1, /*await_lists=*/true);
  const Pod running =
      BoundTo(QueuedPod("team-a", "run", 4), "dgx-0", "0,1,2,3");
  ListPods({running});
  ListNodesAndGroups();
  loop_->WaitIdle();
  ASSERT_EQ(Usage("team-a"), 4);
  // The relist cannot read it: its quota stays charged.
  loop_->PodsListed({}, {"team-a/run"});
  loop_->WaitIdle();
  EXPECT_EQ(Usage("team-a"), 4);
}

}  // namespace
}  // namespace gpusched
