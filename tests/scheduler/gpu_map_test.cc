// The GPU map snapshot: what a node's GPUs, MIG instances and holders look
// like in it, and that the builder shares what did not change.
#include "scheduler/gpu_map.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

void Place(ClusterModel& model, const Pod& pod, std::string ids = "") {
  Pod running = pod;
  if (!ids.empty()) running.meta.annotations[kGpuIdsAnnotation] = ids;
  ASSERT_TRUE(model.AddRunningPod(running).ok());
}

TEST(MapNodeTest, WholeGpusNameTheirHoldersByIndexIntoTheNodesPods) {
  ClusterModel model;
  model.UpsertNode(MakeNode("dgx").Gpus(4).UnhealthyGpus(1).Product(
      "NVIDIA-H100-80GB-HBM3"));
  Place(model, MakePod("team-b/y").Gpus(1).OnNode("dgx"), "0");
  Place(model, MakePod("team-a/x").Gpus(2).OnNode("dgx"), "1,2");
  const GpuMapNode node = MapNode(*model.FindNode("dgx"));
  EXPECT_EQ(node.product, "NVIDIA-H100-80GB-HBM3");
  EXPECT_THAT(node.pods, ElementsAre("team-a/x", "team-b/y"));  // sorted
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_THAT(node.gpus[0].holders, ElementsAre(GpuMapHold{1, 1000}));
  EXPECT_THAT(node.gpus[2].holders, ElementsAre(GpuMapHold{0, 1000}));
  EXPECT_EQ(node.gpus[2].used_milli, 1000);
  EXPECT_THAT(node.gpus[3].holders, IsEmpty());
  EXPECT_FALSE(node.gpus[3].healthy);  // the highest index is marked
  EXPECT_TRUE(node.gpus[0].healthy);
}

TEST(MapNodeTest, SharesOfATimeSlicedGpuAreHoldersWithTheirMilli) {
  ClusterModel model;
  model.UpsertNode(MakeNode("l4").Gpus(1).Replicas(4));
  Place(model, MakePod("ml/a").Gpus(1).OnNode("l4"), "0");
  Place(model, MakePod("ml/b").Gpus(1).OnNode("l4"), "0");
  const GpuMapNode node = MapNode(*model.FindNode("l4"));
  EXPECT_EQ(node.replicas, 4);
  // Two replicas of 1000 / 4 milli each.
  EXPECT_THAT(node.gpus[0].holders,
              ElementsAre(GpuMapHold{0, 250}, GpuMapHold{1, 250}));
  EXPECT_EQ(node.gpus[0].used_milli, 500);
}

TEST(MapNodeTest, MigPoolsCountTheInstancesEachPodHolds) {
  ClusterModel model;
  model.UpsertNode(MakeNode("a100")
                       .Mig("nvidia.com/mig-1g.5gb", 7)
                       .MigConfigState("success"));
  Place(model, MakePod("ml/a").Mig("nvidia.com/mig-1g.5gb", 2).OnNode("a100"));
  const GpuMapNode node = MapNode(*model.FindNode("a100"));
  ASSERT_EQ(node.mig.size(), 1u);
  EXPECT_EQ(node.mig[0].profile, "1g.5gb");
  EXPECT_EQ(node.mig[0].capacity, 7);
  EXPECT_EQ(node.mig[0].used, 2);
  EXPECT_THAT(node.mig[0].holders, ElementsAre(GpuMapHold{0, 2}));
  EXPECT_THAT(node.labels,
              ElementsAre(std::pair<std::string, std::string>(
                              "nvidia.com/mig.strategy", "mixed"),
                          std::pair<std::string, std::string>(
                              "nvidia.com/mig.config.state", "success")));
}

TEST(MapNodeTest, NotReadyTaintAndCordonAreMarked) {
  ClusterModel model;
  model.UpsertNode(MakeNode("gone").Gpus(1).Unschedulable().Taint(
      "node.kubernetes.io/unreachable", "", "NoExecute"));
  model.UpsertNode(
      MakeNode("fine").Gpus(1).Taint("dedicated", "x", "NoSchedule"));
  EXPECT_TRUE(MapNode(*model.FindNode("gone")).not_ready);
  EXPECT_TRUE(MapNode(*model.FindNode("gone")).unschedulable);
  EXPECT_FALSE(MapNode(*model.FindNode("fine")).not_ready);
}

TEST(GpuMapBuilderTest, SharesUnchangedNodesAndSnapshots) {
  ClusterModel model;
  model.UpsertNode(MakeNode("a").Gpus(2));
  model.UpsertNode(MakeNode("b").Gpus(2));
  GpuMapBuilder builder;
  std::shared_ptr<const GpuMap> first = builder.Build(model, 1000);
  ASSERT_EQ(first->nodes.size(), 2u);
  EXPECT_EQ(builder.Build(model, 2000), first);  // nothing changed
  Place(model, MakePod("ml/x").Gpus(1).OnNode("b"), "0");
  std::shared_ptr<const GpuMap> second = builder.Build(model, 3000);
  ASSERT_NE(second, first);
  EXPECT_EQ(second->generation, first->generation + 1);
  EXPECT_EQ(second->nodes[0], first->nodes[0]);  // a: the same object
  EXPECT_NE(second->nodes[1], first->nodes[1]);
  EXPECT_EQ(second->nodes[1]->gpus[0].used_milli, 1000);
}

TEST(GpuMapBuilderTest, ARemovedNodeLeavesTheMap) {
  ClusterModel model;
  model.UpsertNode(MakeNode("a").Gpus(1));
  model.UpsertNode(MakeNode("b").Gpus(1));
  GpuMapBuilder builder;
  builder.Build(model, 0);
  model.RemoveNode("a");
  std::shared_ptr<const GpuMap> map = builder.Build(model, 1);
  ASSERT_EQ(map->nodes.size(), 1u);
  EXPECT_EQ(map->nodes[0]->name, "b");
  model.UpsertNode(MakeNode("c").Gpus(1));
  EXPECT_EQ(builder.Build(model, 2)->nodes.size(), 2u);
}

}  // namespace
}  // namespace gpusched
