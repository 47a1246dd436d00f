// The queueing engine's per-node score memo: an entry holds only while its
// node is unchanged.
#include "queueing/node_score_memo.h"

#include "gtest/gtest.h"
#include "scheduler/cluster_model.h"

namespace gpusched {
namespace {

Node EightGpus(const std::string& name) {
  Node node;
  node.meta.name = name;
  node.meta.labels = {{"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"}};
  node.allocatable = {{"nvidia.com/gpu", 8}, {"cpu", 64000}, {"pods", 110}};
  node.capacity = node.allocatable;
  return node;
}

Pod OneGpu(const std::string& name) {
  Pod pod;
  pod.meta.name = name;
  pod.meta.namespace_name = "ns";
  pod.meta.uid = "uid-" + name;
  pod.containers.push_back(
      Container{.name = "main", .requests = {{"nvidia.com/gpu", 1}}});
  return pod;
}

class NodeScoreMemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.UpsertNode(EightGpus("a"));
    model_.UpsertNode(EightGpus("b"));
  }
  const NodeState& State(const std::string& name) {
    return *model_.FindNode(name);
  }
  ClusterModel model_;
  NodeScoreMemo memo_;
};

TEST_F(NodeScoreMemoTest, RemembersPerShapeAndNode) {
  NodeScoreMemo::Shape* one = memo_.ForShape("1 gpu");
  NodeScoreMemo::Shape* two = memo_.ForShape("2 gpus");
  EXPECT_EQ(one, memo_.ForShape("1 gpu"));
  one->Put(State("a"), NodeScore{.fits = true, .score = 70});
  ASSERT_NE(one->Find(State("a")), nullptr);
  EXPECT_EQ(one->Find(State("a"))->score, 70);
  EXPECT_EQ(one->Find(State("b")), nullptr);
  EXPECT_EQ(two->Find(State("a")), nullptr);
  EXPECT_EQ(memo_.size(), 1u);
}

TEST_F(NodeScoreMemoTest, AnEntryLapsesWhenItsNodeTakesOrLosesAPod) {
  NodeScoreMemo::Shape* shape = memo_.ForShape("1 gpu");
  shape->Put(State("a"), NodeScore{.fits = true, .score = 70});
  shape->Put(State("b"), NodeScore{.fits = true, .score = 60});
  Pod pod = OneGpu("p");
  ASSERT_TRUE(model_.Place(pod, "a", GpuAssignment{.gpu_ids = {0},
                                                   .milli_per_gpu = 1000},
                           /*bound=*/false)
                  .ok());
  EXPECT_EQ(shape->Find(State("a")), nullptr);  // a changed
  EXPECT_NE(shape->Find(State("b")), nullptr);  // b did not
  shape->Put(State("a"), NodeScore{.fits = true, .score = 80});
  ASSERT_NE(shape->Find(State("a")), nullptr);
  ASSERT_TRUE(model_.RemovePod("uid-p"));
  EXPECT_EQ(shape->Find(State("a")), nullptr);
}

TEST_F(NodeScoreMemoTest, ANewNodeObjectLapsesEntries) {
  NodeScoreMemo::Shape* shape = memo_.ForShape("1 gpu");
  shape->Put(State("a"), NodeScore{.fits = true});
  Node relabelled = EightGpus("a");
  relabelled.meta.labels["gpusched.io/rack"] = "r1";
  model_.UpsertNode(relabelled);
  EXPECT_EQ(shape->Find(State("a")), nullptr);
}

TEST_F(NodeScoreMemoTest, ClearForgetsEverything) {
  memo_.ForShape("1 gpu")->Put(State("a"), NodeScore{.fits = true});
  memo_.Clear();
  EXPECT_EQ(memo_.size(), 0u);
  EXPECT_EQ(memo_.ForShape("1 gpu")->Find(State("a")), nullptr);
}

}  // namespace
}  // namespace gpusched
