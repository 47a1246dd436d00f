// NodeMemo: a remembered value holds only while its node is unchanged, and
// the memo stays within its bound.
#include "scheduler/node_memo.h"

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

class NodeMemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    model_.UpsertNode(EightGpus("a"));
    model_.UpsertNode(EightGpus("b"));
  }
  const NodeState& State(const std::string& name) {
    return *model_.FindNode(name);
  }
  // The value for (key, node), counting how often it had to be computed.
  int Get(const std::string& key, const std::string& node, int value) {
    return memo_.Lookup(key).Get(State(node), [&] {
      ++computed_;
      return value;
    });
  }
  ClusterModel model_;
  NodeMemo<int> memo_{100};
  int computed_ = 0;
};

TEST_F(NodeMemoTest, RemembersPerKeyAndNode) {
  EXPECT_EQ(Get("1 gpu", "a", 70), 70);
  EXPECT_EQ(Get("1 gpu", "a", 0), 70);  // remembered
  EXPECT_EQ(Get("1 gpu", "b", 60), 60);
  EXPECT_EQ(Get("2 gpus", "a", 50), 50);
  EXPECT_EQ(computed_, 3);
  EXPECT_EQ(memo_.entries(), 3u);
}

TEST_F(NodeMemoTest, AValueLapsesWhenItsNodeTakesOrLosesAPod) {
  Get("1 gpu", "a", 70);
  Get("1 gpu", "b", 60);
  ASSERT_TRUE(model_
                  .Place(OneGpu("p"), "a",
                         GpuAssignment{.gpu_ids = {0}, .milli_per_gpu = 1000},
                         /*bound=*/false)
                  .ok());
  EXPECT_EQ(Get("1 gpu", "a", 80), 80);  // a changed
  EXPECT_EQ(Get("1 gpu", "b", 0), 60);   // b did not
  ASSERT_TRUE(model_.RemovePod("uid-p"));
  EXPECT_EQ(Get("1 gpu", "a", 90), 90);
}

TEST_F(NodeMemoTest, ANewNodeObjectLapsesValues) {
  Get("1 gpu", "a", 70);
  Node relabelled = EightGpus("a");
  relabelled.meta.labels["gpusched.io/rack"] = "r1";
  model_.UpsertNode(relabelled);
  EXPECT_EQ(Get("1 gpu", "a", 75), 75);
}

TEST_F(NodeMemoTest, ForgetsEverythingBeyondItsBound) {
  NodeMemo<int> small(2);
  auto get = [&](const std::string& key, int value) {
    return small.Lookup(key).Get(State("a"), [&] { return value; });
  };
  get("k1", 1);
  get("k2", 2);
  get("k3", 3);
  EXPECT_LE(small.entries(), 3u);
  get("k4", 4);  // over the bound: the lookup clears first
  EXPECT_EQ(small.entries(), 1u);
  EXPECT_EQ(get("k1", 10), 10);
}

}  // namespace
}  // namespace gpusched
