// A ClusterModel kept as a replica of another (the admission loop's): the
// sync copies only the nodes whose version changed, and the replica records
// which pods its owner changed.
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_model.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

ClusterModel ThreeNodes() {
  ClusterModel model;
  for (const char* name : {"n1", "n2", "n3"}) {
    model.UpsertNode(MakeNode(name).Gpus(8));
  }
  return model;
}

std::vector<int> GpusOf(const ClusterModel& model, std::string_view uid) {
  const PlacedPod* placed = model.FindPodByUid(uid);
  if (placed == nullptr) return {};
  return model.FindNode(placed->node)->FindPod(placed->pod_key)->gpus.gpu_ids;
}

TEST(ClusterModelReplica, FirstSyncCopiesEverythingThenOnlyWhatChanged) {
  ClusterModel source = ThreeNodes();
  ASSERT_TRUE(source.AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n1")).ok());
  ClusterModel replica;
  EXPECT_EQ(replica.SyncFrom(source), 3u);
  EXPECT_EQ(replica.node_count(), 3u);
  EXPECT_THAT(GpusOf(replica, "uid-ml-a"), ElementsAre(0, 1));
  EXPECT_EQ(replica.SyncFrom(source), 0u);

  ASSERT_TRUE(source.AddRunningPod(MakePod("ml/b").Gpus(1).OnNode("n2")).ok());
  EXPECT_EQ(replica.SyncFrom(source), 1u);
  EXPECT_EQ(replica.FindPodByUid("uid-ml-b")->node, "n2");
  EXPECT_EQ(replica.pod_count(), 2u);
}

TEST(ClusterModelReplica, BoundFlagAndRemovedNodesFollow) {
  ClusterModel source = ThreeNodes();
  const Pod pod = MakePod("ml/a").Gpus(2);
  ASSERT_TRUE(source
                  .Place(pod, "n1",
                         {.gpu_ids = {0, 1}, .milli_per_gpu = kMilliPerGpu},
                         false)
                  .ok());
  ClusterModel replica;
  replica.SyncFrom(source);
  EXPECT_FALSE(replica.FindPodByUid("uid-ml-a")->bound);

  source.MarkBound("uid-ml-a");
  EXPECT_EQ(replica.SyncFrom(source), 1u);
  EXPECT_TRUE(replica.FindPodByUid("uid-ml-a")->bound);

  const uint64_t generation = replica.node_set_generation();
  source.RemoveNode("n1");
  EXPECT_EQ(replica.SyncFrom(source), 1u);
  EXPECT_EQ(replica.FindNode("n1"), nullptr);
  EXPECT_EQ(replica.FindPodByUid("uid-ml-a"), nullptr);
  EXPECT_NE(replica.node_set_generation(), generation);
}

TEST(ClusterModelReplica, APodThatMovedIsIndexedWhereItIsNow) {
  ClusterModel source = ThreeNodes();
  ASSERT_TRUE(source.AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n3")).ok());
  ClusterModel replica;
  replica.SyncFrom(source);
  source.RemovePod("uid-ml-a");
  ASSERT_TRUE(source.AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n1")).ok());
  EXPECT_EQ(replica.SyncFrom(source), 2u);
  EXPECT_EQ(replica.FindPodByUid("uid-ml-a")->node, "n1");
  EXPECT_EQ(replica.FindNode("n3")->pod_count(), 0);
  EXPECT_EQ(replica.pod_count(), 1u);
}

// What the owner did to the replica is recorded and undone by the next
// sync; a trial placed and taken off again is listed but changes nothing.
TEST(ClusterModelReplica, RecordsTheOwnersChangesAndSyncUndoesThem) {
  ClusterModel source = ThreeNodes();
  ClusterModel replica;
  replica.SyncFrom(source);
  replica.RecordPodChanges(true);
  ASSERT_TRUE(replica
                  .Place(MakePod("ml/t").Gpus(1), "n2",
                         {.gpu_ids = {3}, .milli_per_gpu = kMilliPerGpu}, false)
                  .ok());
  replica.RemovePod("uid-ml-t");
  ASSERT_TRUE(replica
                  .Place(MakePod("ml/k").Gpus(1), "n1",
                         {.gpu_ids = {0}, .milli_per_gpu = kMilliPerGpu}, false)
                  .ok());
  EXPECT_THAT(replica.TakeChangedPods(),
              ElementsAre(Pair("uid-ml-k", ChangedPod{"ml/k", false}),
                          Pair("uid-ml-t", ChangedPod{"ml/t", false})));
  EXPECT_THAT(replica.TakeChangedPods(), IsEmpty());

  EXPECT_EQ(replica.SyncFrom(source), 2u);  // n1 and n2 changed here
  EXPECT_EQ(replica.pod_count(), 0u);
  EXPECT_THAT(replica.TakeChangedPods(), IsEmpty());
}

// A commit must know whether a pod it took off was bound when the pass
// began: only then may it take the pod off the extender's model, where
// kube-scheduler may have bound it meanwhile.
TEST(ClusterModelReplicaTest, ChangedPodKeepsWhetherItWasBoundBeforeThePass) {
  ClusterModel source = ThreeNodes();
  ASSERT_TRUE(source
                  .Place(MakePod("ml/run").Gpus(1), "n1",
                         {.gpu_ids = {0}, .milli_per_gpu = kMilliPerGpu}, true)
                  .ok());
  ASSERT_TRUE(source
                  .Place(MakePod("ml/wait").Gpus(1), "n1",
                         {.gpu_ids = {1}, .milli_per_gpu = kMilliPerGpu}, false)
                  .ok());
  ClusterModel replica;
  replica.SyncFrom(source);
  replica.RecordPodChanges(true);
  replica.RemovePod("uid-ml-run");
  ASSERT_TRUE(replica.MarkBound("uid-ml-wait"));
  replica.RemovePod("uid-ml-wait");  // the first change says what it was
  EXPECT_THAT(replica.TakeChangedPods(),
              ElementsAre(Pair("uid-ml-run", ChangedPod{"ml/run", true}),
                          Pair("uid-ml-wait", ChangedPod{"ml/wait", false})));
}

// Every node alike in version, and the same pods indexed.
void ExpectSameAs(const ClusterModel& replica, const ClusterModel& source) {
  ASSERT_EQ(replica.node_count(), source.node_count());
  EXPECT_EQ(replica.pod_count(), source.pod_count());
  for (const NodeState* theirs : source.SortedNodes()) {
    const NodeState* mine = replica.FindNode(theirs->name());
    ASSERT_NE(mine, nullptr) << theirs->name();
    EXPECT_EQ(replica.VersionOf(*mine), source.VersionOf(*theirs))
        << theirs->name();
    for (const auto& [key, allocation] : theirs->pods()) {
      const PlacedPod* placed = replica.FindPodByUid(allocation.uid);
      ASSERT_NE(placed, nullptr) << allocation.uid;
      EXPECT_EQ(placed->node, theirs->name());
    }
  }
}

// Synced again from the same source, the replica looks only at the nodes
// either side touched: a seeded run of changes on both sides (the source's
// watches, the owner's trial placements) must leave it equal to the source
// after every sync, as a sync of every node would.
TEST(ClusterModelReplica, SyncByTouchedNodesMatchesTheSourceAfterEveryChange) {
  ClusterModel source;
  for (int i = 0; i < 12; ++i) {
    source.UpsertNode(MakeNode("n" + std::to_string(i)).Gpus(8));
  }
  ClusterModel replica;
  replica.SyncFrom(source);
  std::mt19937 random(7);
  int pods = 0;
  for (int round = 0; round < 200; ++round) {
    const std::string node = "n" + std::to_string(random() % 14);
    const std::string uid = "uid-ml-p" + std::to_string(random() % (pods + 1));
    switch (random() % 7) {
      case 0:
        source.UpsertNode(MakeNode(node).Gpus(8));
        break;
      case 1:
        source.RemoveNode(node);
        break;
      case 2:  // assumed, not bound yet: MarkBound has work to do
        (void)source.Place(MakePod("ml/p" + std::to_string(pods++)).Gpus(1),
                           node,
                           {.gpu_ids = {static_cast<int>(random() % 8)},
                            .milli_per_gpu = kMilliPerGpu},
                           false);
        break;
      case 3:
        source.MarkBound(uid);
        break;
      case 4:
        source.RemovePod(uid);
        break;
      default:  // the owner's trials, undone by the next sync
        (void)replica.AddRunningPod(
            MakePod("ml/t" + std::to_string(round)).Gpus(2).OnNode(node));
        replica.RemovePod(uid);
        break;
    }
    if (random() % 3 == 0) {
      replica.SyncFrom(source);
      ExpectSameAs(replica, source);
    }
  }
  replica.SyncFrom(source);
  ExpectSameAs(replica, source);
}

// Another model, or another one moved into the same address, has other
// journal stamps: the replica compares every node then.
TEST(ClusterModelReplica, SyncFromAnotherModelComparesEveryNode) {
  ClusterModel first = ThreeNodes();
  ClusterModel replica;
  replica.SyncFrom(first);
  ClusterModel other;
  other.UpsertNode(MakeNode("n9").Gpus(4));
  EXPECT_EQ(replica.SyncFrom(other), 4u);  // three dropped, one added
  ExpectSameAs(replica, other);

  ClusterModel moved = ThreeNodes();
  ASSERT_TRUE(moved.AddRunningPod(MakePod("ml/a").Gpus(1).OnNode("n2")).ok());
  replica.SyncFrom(first);
  first = std::move(moved);  // same address, other stamps
  // Its three nodes are other objects (other versions); its journal's
  // last stamp alone names only n2.
  EXPECT_EQ(replica.SyncFrom(first), 3u);
  ExpectSameAs(replica, first);
}

}  // namespace
}  // namespace gpusched
