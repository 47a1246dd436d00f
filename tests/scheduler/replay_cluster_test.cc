#include "scheduler/replay/replay_cluster.h"

#include <vector>

#include "gtest/gtest.h"
#include "tests/scheduler/replay_builders.h"

namespace gpusched::replay {
namespace {

using ::gpusched::testing::TraceGpuNode;
using ::gpusched::testing::TracePodOf;

TEST(ReplayCluster, CountsTheGpuCapacityInMilli) {
  const std::vector<TraceNode> nodes = {TraceGpuNode("a", 8),
                                        TraceGpuNode("b", 2)};
  const ReplayCluster cluster(nodes);
  EXPECT_EQ(cluster.total_milli(), 10000);
  EXPECT_EQ(cluster.allocated_milli(), 0);
  EXPECT_EQ(cluster.max_gpu_milli(), 8000);
}

TEST(ReplayCluster, APodMustFitCpuMemoryModelAndGpus) {
  const std::vector<TraceNode> nodes = {
      TraceGpuNode("a", 2).Cpu(8000).MemoryMib(4096).Model("T4")};
  const ReplayCluster cluster(nodes);
  const std::vector<TracePod> trace = {
      TracePodOf("fits").Gpus(2).Cpu(8000).MemoryMib(4096),
      TracePodOf("cpu").Gpus(1).Cpu(8001),
      TracePodOf("memory").Gpus(1).MemoryMib(4097),
      TracePodOf("model").Gpus(1).Models({"V100M16", "V100M32"}),
      TracePodOf("right-model").Gpus(1).Models({"A10", "T4"}),
      TracePodOf("gpus").Gpus(3),
  };
  const ReplayPods pods(trace);
  EXPECT_TRUE(cluster.Fits(pods.at(0), 0));
  EXPECT_FALSE(cluster.Fits(pods.at(1), 0));
  EXPECT_FALSE(cluster.Fits(pods.at(2), 0));
  EXPECT_FALSE(cluster.Fits(pods.at(3), 0));
  EXPECT_TRUE(cluster.Fits(pods.at(4), 0));
  EXPECT_FALSE(cluster.Fits(pods.at(5), 0));
}

TEST(ReplayCluster, ASharePlansOnTheTightestGpuThatHoldsIt) {
  const std::vector<TraceNode> nodes = {TraceGpuNode("a", 4)};
  ReplayCluster cluster(nodes);
  const std::vector<TracePod> trace = {TracePodOf("a").Share(700),
                                       TracePodOf("b").Share(200),
                                       TracePodOf("c").Share(300)};
  const ReplayPods pods(trace);
  ASSERT_TRUE(
      cluster.Place(pods.at(0), 0, cluster.PlanGpus(pods.at(0), 0)).ok());
  // GPU 0 has 300 left: the 200 share goes there, not to a whole GPU.
  EXPECT_EQ(cluster.PlanGpus(pods.at(1), 0).gpu_ids, std::vector<int>{0});
  ASSERT_TRUE(
      cluster.Place(pods.at(1), 0, cluster.PlanGpus(pods.at(1), 0)).ok());
  // 100 left on GPU 0: the 300 share takes GPU 1.
  EXPECT_EQ(cluster.PlanGpus(pods.at(2), 0).gpu_ids, std::vector<int>{1});
}

TEST(ReplayCluster, WholeGpusAvoidSharedOnes) {
  const std::vector<TraceNode> nodes = {TraceGpuNode("a", 4)};
  ReplayCluster cluster(nodes);
  const std::vector<TracePod> trace = {TracePodOf("s").Share(100),
                                       TracePodOf("w").Gpus(2)};
  const ReplayPods pods(trace);
  ASSERT_TRUE(
      cluster.Place(pods.at(0), 0, cluster.PlanGpus(pods.at(0), 0)).ok());
  const GpuAssignment whole = cluster.PlanGpus(pods.at(1), 0);
  EXPECT_EQ(whole.gpu_ids, (std::vector<int>{2, 3}));  // same NUMA half
  EXPECT_EQ(whole.milli_per_gpu, 1000);
}

TEST(ReplayCluster, PlacingUpdatesTheMirrorAndTheNodeState) {
  const std::vector<TraceNode> nodes = {TraceGpuNode("a", 2)};
  ReplayCluster cluster(nodes);
  const std::vector<TracePod> trace = {
      TracePodOf("p").Share(400).Cpu(6000).MemoryMib(2048)};
  const ReplayPods pods(trace);
  const uint64_t version = cluster.node(0).version;
  ASSERT_TRUE(
      cluster.Place(pods.at(0), 0, cluster.PlanGpus(pods.at(0), 0)).ok());
  const ReplayNode& node = cluster.node(0);
  EXPECT_EQ(node.free_cpu, 90000);
  EXPECT_EQ(node.free_memory, 393216 - 2048);
  EXPECT_EQ(node.free_milli, (std::vector<int>{600, 1000}));
  EXPECT_EQ(node.whole_free_gpus, 1);
  EXPECT_GT(node.version, version);
  EXPECT_EQ(node.state.gpus().devices()[0].free_milli, 600);
  EXPECT_EQ(node.state.requested().Get(kCpu), 6000);
  EXPECT_EQ(cluster.allocated_milli(), 400);
}

TEST(ReplayCluster, RefusesAPlacementThatDoesNotFit) {
  const std::vector<TraceNode> nodes = {TraceGpuNode("a", 1)};
  ReplayCluster cluster(nodes);
  const std::vector<TracePod> trace = {TracePodOf("p").Gpus(2)};
  const ReplayPods pods(trace);
  EXPECT_FALSE(
      cluster.Place(pods.at(0), 0, GpuAssignment{.gpu_ids = {0, 1}}).ok());
}

TEST(ReplayPods, EqualRequestsShareAShapeId) {
  const std::vector<TracePod> trace = {TracePodOf("a").Share(500),
                                       TracePodOf("b").Share(500),
                                       TracePodOf("c").Share(500).Cpu(2000)};
  const ReplayPods pods(trace);
  EXPECT_EQ(pods.shape_count(), 2);
  EXPECT_EQ(pods.at(0).shape_id, pods.at(1).shape_id);
  EXPECT_NE(pods.at(0).shape_id, pods.at(2).shape_id);
}

TEST(ReplayPods, ASharePodAsksTheLiveScorersForItsMilli) {
  const std::vector<TracePod> trace = {TracePodOf("a").Share(300).Cpu(4000)};
  const ReplayPods pods(trace);
  EXPECT_EQ(pods.at(0).view.gpu.gpus, 1);
  EXPECT_EQ(pods.at(0).view.gpu.milli, 300);
  EXPECT_EQ(pods.at(0).view.requests.Get(kCpu), 4000);
  EXPECT_TRUE(pods.at(0).view.invalid_reason.empty());
}

}  // namespace
}  // namespace gpusched::replay
