// A ClusterModel kept as a replica of another (the admission loop's): the
// sync copies only the nodes whose version changed, and the replica records
// which pods its owner changed.
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

}  // namespace
}  // namespace gpusched
