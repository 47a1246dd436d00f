// A switch from Kueue: pods Kueue admitted that no node has bound yet (it
// lifted their gate; the default scheduler binds them) hold their queue's
// quota from gpusched's first pass on, so nothing is admitted into it
// meanwhile, and nothing is written for them.
#include <utility>

#include "api/codec/pod_admission_state.h"
#include "gtest/gtest.h"
#include "tests/controller/restart_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

class KueueAdoptionTest : public RestartFixture {};

// As Kueue's webhook and admission leave it: managed, ungated, unbound.
Pod AdmittedByKueue(Pod pod) {
  pod.meta.labels[kKueueManagedLabel] = "true";
  ReadPodAdmissionState(pod);
  return pod;
}

Pod HeldByKueue(Pod pod) {
  pod.meta.labels[kKueueManagedLabel] = "true";
  pod.scheduling_gates = {kKueueAdmissionGate};
  ReadPodAdmissionState(pod);
  return pod;
}

TEST_F(KueueAdoptionTest, AdmittedUnboundPodHoldsItsQuotaAndWritesNothing) {
  Start(TeamAWithoutCohort(), 2);
  const Pod admitted = AdmittedByKueue(QueuedPod("team-a", "admitted", 8));
  const Pod fresh = QueuedPod("team-a", "fresh", 4);
  List({fresh, admitted});
  EXPECT_EQ(Usage("team-a"), 8);
  EXPECT_EQ(StateOf("team-a/admitted"), Workload::State::kAdmitted);
  EXPECT_EQ(loop_->Check(fresh).assigned_node, "");
  EXPECT_TRUE(sink_.Take().empty());  // no label, no nomination: Kueue's pod

  // The default scheduler binds it, wherever it chose: still charged once.
  loop_->PodUpserted(
      BoundTo(AdmittedByKueue(QueuedPod("team-a", "admitted", 8)), "dgx-1",
              "0,1,2,3,4,5,6,7"));
  loop_->WaitIdle();
  EXPECT_EQ(Usage("team-a"), 8);
  EXPECT_EQ(loop_->Check(fresh).assigned_node, "");
}

// A pod behind Kueue's gate was never admitted: it waits its turn.
TEST_F(KueueAdoptionTest, HeldPodIsQueuedNotAdopted) {
  Start(TeamAWithoutCohort(), 2);
  const Pod held = HeldByKueue(QueuedPod("team-a", "held", 4));
  List({held});
  EXPECT_EQ(StateOf("team-a/held"), Workload::State::kAdmitted);
  std::vector<AdmitMember> admitted = Admissions(sink_.Take());
  ASSERT_EQ(admitted.size(), 1u);  // admitted by gpusched, gate lifted
  EXPECT_TRUE(admitted[0].gated);
}

// Its selectors name a node the cluster does not have: queued as an
// unbound pod gpusched knows nothing of, holding nothing.
TEST_F(KueueAdoptionTest, AdmittedPodNoNodeCanHoldIsQueued) {
  Start(TeamAWithoutCohort(), 2);
  Pod nowhere = QueuedPod("team-a", "nowhere", 4);
  nowhere.node_selector = {{"example.com/pool", "gone"}};
  List({AdmittedByKueue(std::move(nowhere))});
  EXPECT_EQ(Usage("team-a"), 0);
  EXPECT_EQ(StateOf("team-a/nowhere"), Workload::State::kPending);
}

TEST(IsAdmittedByKueueTest, ManagedUngatedUnboundPendingOnly) {
  EXPECT_TRUE(IsAdmittedByKueue(AdmittedByKueue(QueuedPod("a", "p", 1))));
  EXPECT_FALSE(IsAdmittedByKueue(QueuedPod("a", "p", 1)));  // not Kueue's
  EXPECT_FALSE(IsAdmittedByKueue(HeldByKueue(QueuedPod("a", "p", 1))));
  EXPECT_FALSE(IsAdmittedByKueue(
      BoundTo(AdmittedByKueue(QueuedPod("a", "p", 1)), "n", "0")));
  Pod done = AdmittedByKueue(QueuedPod("a", "p", 1));
  done.phase = PodPhase::kSucceeded;
  EXPECT_FALSE(IsAdmittedByKueue(done));
}

}  // namespace
}  // namespace gpusched
