// Issue J: after a restart the loop decides nothing on half a picture. Pods
// may be listed before the nodes they were admitted on; an admission is
// taken back only when its node is really gone, never because the node
// list had not arrived yet.
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "api/controller/admission_loop.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/controller/restart_fixture.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

class RestartListsTest : public RestartFixture {
 protected:
  // Long enough for a pass that should not run to show up.
  static void Settle() {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::vector<RevokeMember> Revocations(const std::vector<QueueDecision>& all) {
    std::vector<RevokeMember> out;
    for (const QueueDecision& d : all) {
      if (const auto* revoke = std::get_if<RevokeMember>(&d)) {
        out.push_back(*revoke);
      }
    }
    return out;
  }
  // Admitted before the restart, pinned, not bound yet: kube-scheduler's
  // binds failed while gpusched was down.
  std::vector<Pod> AdmittedUnbound(int count) {
    std::vector<Pod> pods;
    for (int i = 0; i < count; ++i) {
      pods.push_back(PinnedTo(QueuedPod("team-a", "p" + std::to_string(i), 1),
                              "dgx-" + std::to_string(i % 2)));
    }
    return pods;
  }
};

// The bug report's order: pods listed, then nodes. Nothing is decided
// before every list is in; then everything is adopted, nothing revoked.
TEST_F(RestartListsTest, PodsListedBeforeNodesAreAdoptedOnceTheNodesArrive) {
  Start(TwoTeams(), 0, /*await_lists=*/true);
  const std::vector<Pod> pods = AdmittedUnbound(8);
  ListPods(pods);
  ListGroupsAndDra();
  Settle();
  EXPECT_EQ(loop_->passes(), 0u);  // no node list yet: no pass at all
  EXPECT_TRUE(sink_.Take().empty());

  service_->UpsertNodes({Dgx("dgx-0"), Dgx("dgx-1")});
  loop_->NodesListed();
  loop_->WaitIdle();
  EXPECT_TRUE(sink_.Take().empty());  // no revocation, no new admission
  for (size_t i = 0; i < pods.size(); ++i) {
    EXPECT_EQ(loop_->Check(pods[i]).assigned_node,
              "dgx-" + std::to_string(i % 2))
        << pods[i].Key();
  }
  EXPECT_EQ(Usage("team-a"), 8);
  EXPECT_EQ(service_->CountGpus().free, 8);  // 16 - the 8 held, none twice
}

// Without await_lists (nothing says the node list is complete), an admitted
// pod whose node the model lacks waits as an orphan, as a bound one does,
// and is adopted when the node arrives.
TEST_F(RestartListsTest, AdmittedPodWaitsForAnUnknownNodeWithoutRevocation) {
  Start(TwoTeams(), 1);
  const Pod pinned = PinnedTo(QueuedPod("team-a", "late", 4), "dgx-5");
  List({pinned});
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(Usage("team-a"), 0);
  EXPECT_EQ(loop_->Check(pinned).assigned_node, "");

  service_->UpsertNodes({Dgx("dgx-5")});
  loop_->NodeAdded("dgx-5");
  loop_->WaitIdle();
  EXPECT_TRUE(sink_.Take().empty());
  EXPECT_EQ(loop_->Check(pinned).assigned_node, "dgx-5");
  EXPECT_EQ(Usage("team-a"), 4);
}

// The node's deletion seen on the watch ends the wait: a pod pinned there
// can run nowhere else and is evicted; an unpinned one is queued afresh.
TEST_F(RestartListsTest, OrphanIsTakenBackWhenItsNodeIsDeleted) {
  Start(TwoTeams(), 1);
  const Pod pinned = PinnedTo(QueuedPod("team-a", "pinned", 4), "dgx-5");
  const Pod labelled = AdmittedOn(QueuedPod("team-a", "labelled", 4), "dgx-5");
  List({pinned, labelled});
  EXPECT_TRUE(sink_.Take().empty());

  loop_->NodeRemoved("dgx-5");
  loop_->WaitIdle();
  const std::vector<QueueDecision> decisions = sink_.Take();
  const std::vector<RevokeMember> revoked = Revocations(decisions);
  ASSERT_EQ(revoked.size(), 2u);
  for (const RevokeMember& r : revoked) {
    EXPECT_EQ(r.evict, r.pod.pod_name == "pinned") << r.pod.pod_name;
    EXPECT_THAT(r.reason, HasSubstr("node dgx-5 was deleted"));
  }
  EXPECT_EQ(loop_->Check(labelled).assigned_node, "dgx-0");  // queued again
}

// A watch that lost its history relists: no pass until the new list is in,
// then the pass sees it whole.
TEST_F(RestartListsTest, RelistingHoldsEveryPassUntilTheListArrives) {
  Start(TwoTeams(), 2, /*await_lists=*/true);
  ListPods({});
  ListNodesAndGroups();
  loop_->WaitIdle();
  const uint64_t passes = loop_->passes();

  loop_->Relisting(ListKind::kPods);
  const Pod fresh = QueuedPod("team-a", "fresh", 4);
  loop_->PodUpserted(fresh);
  Settle();
  EXPECT_EQ(loop_->passes(), passes);
  EXPECT_TRUE(sink_.Take().empty());

  ListPods({fresh});
  loop_->WaitIdle();
  EXPECT_EQ(Admissions(sink_.Take()).size(), 1u);
}

// Nothing could bind while the loop waited for a relist (the API server was
// away): that time does not count towards the bind timeout, which still
// takes back an admission that stays unbound once the loop runs again.
TEST_F(RestartListsTest, WaitForARelistDoesNotCountTowardsTheBindTimeout) {
  Start(TwoTeams(), 2, /*await_lists=*/true);
  const Pod kept = PinnedTo(QueuedPod("team-a", "kept", 4), "dgx-1");
  ListPods({kept});
  ListNodesAndGroups();
  loop_->WaitIdle();
  ASSERT_EQ(loop_->Check(kept).assigned_node, "dgx-1");

  loop_->Relisting(ListKind::kPods);
  now_ += 400'000;  // past gang_admission_timeout_ms (300 s)
  ListPods({kept});
  loop_->WaitIdle();
  EXPECT_TRUE(Revocations(sink_.Take()).empty());
  EXPECT_EQ(loop_->Check(kept).assigned_node, "dgx-1");

  now_ += 300'000;  // unbound 300 s of running time: rolled back
  loop_->WaitIdle();
  const std::vector<RevokeMember> revoked = Revocations(sink_.Take());
  ASSERT_EQ(revoked.size(), 1u);
  EXPECT_TRUE(revoked[0].evict);  // pinned: as before this change
}

// A node deleted while the node watch was cut off is missing from the next
// complete list: members placed there lose their placement, as when the
// deletion is seen.
TEST_F(RestartListsTest, NodeMissingFromARelistTakesItsMembersBack) {
  Start(TwoTeams(), 2, /*await_lists=*/true);
  const Pod kept = PinnedTo(QueuedPod("team-a", "kept", 4), "dgx-1");
  ListPods({kept});
  ListNodesAndGroups();
  loop_->WaitIdle();
  ASSERT_EQ(Usage("team-a"), 4);
  EXPECT_TRUE(sink_.Take().empty());

  loop_->Relisting(ListKind::kNodes);
  service_->RemoveNode("dgx-1");  // what ReplaceNodes does to the model
  loop_->NodesListed();
  loop_->WaitIdle();
  const std::vector<RevokeMember> revoked = Revocations(sink_.Take());
  ASSERT_EQ(revoked.size(), 1u);
  EXPECT_EQ(revoked[0].pod.pod_name, "kept");
  EXPECT_TRUE(revoked[0].evict);  // pinned to dgx-1: runs nowhere else
}

// A gang member that succeeded before the restart counts towards its
// gang: the members still running are not "short" and never evicted.
TEST_F(RestartListsTest, MemberThatSucceededBeforeARestartCountsForItsGang) {
  Start(TwoTeams(), 2);
  std::vector<Pod> pods;
  for (int i = 0; i < 3; ++i) {
    pods.push_back(BoundTo(GangPod("team-a", "ring", i, 4, 4),
                           i < 2 ? "dgx-0" : "dgx-1",
                           i % 2 == 0 ? "0,1,2,3" : "4,5,6,7"));
  }
  pods.push_back(Succeeded(
      BoundTo(GangPod("team-a", "ring", 3, 4, 4), "dgx-1", "4,5,6,7")));
  service_->AddRunningPods({pods[0], pods[1], pods[2]});
  loop_->PodsListed(pods);
  loop_->WaitIdle();
  EXPECT_EQ(StateOf("team-a/ring"), Workload::State::kAdmitted);

  now_ += 61'000;  // past stale_gang_grace_ms
  loop_->WaitIdle();
  EXPECT_TRUE(Revocations(sink_.Take()).empty());
  EXPECT_EQ(StateOf("team-a/ring"), Workload::State::kAdmitted);
  EXPECT_EQ(Usage("team-a"), 12);
}

}  // namespace
}  // namespace gpusched
