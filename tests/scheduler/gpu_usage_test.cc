#include "scheduler/gpu_usage.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::kH100;
using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;

// Only 4-GPU tasks: a node with fewer than 4 free GPUs strands them all.
constexpr TaskShape kFourGpus[] = {{.gpus = 4, .milli = 1000, .popularity = 1}};

TEST(GpuUsageByModel, AllocationAndStrandedFreeCapacityPerModel) {
  ClusterModel model;
  model.UpsertNode(MakeNode("busy").Gpus(8).Product(kH100));
  // GFD's -SHARED suffix is not another model.
  model.UpsertNode(
      MakeNode("idle").Gpus(8).Product(std::string(kH100) + "-SHARED"));
  model.UpsertNode(MakeNode("unlabelled").Gpus(4).UnhealthyGpus(1));
  model.UpsertNode(MakeNode("cpu-only"));
  std::string warning;
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/a").Gpus(6).OnNode("busy"), &warning)
          .ok());

  const std::vector<GpuModelUsage> usage =
      GpuUsageByModel(model, std::span<const TaskShape>(kFourGpus));
  ASSERT_EQ(usage.size(), 2u);
  EXPECT_EQ(usage[0].model, kH100);
  EXPECT_EQ(usage[0].total_milli, 16000);
  EXPECT_EQ(usage[0].free_milli, 10000);
  EXPECT_DOUBLE_EQ(usage[0].fragment_milli, 2000);  // busy's last two GPUs
  EXPECT_DOUBLE_EQ(usage[0].AllocationRatio(), 0.375);
  EXPECT_DOUBLE_EQ(usage[0].FragmentationRatio(), 0.2);
  EXPECT_EQ(usage[1].model, "unknown");
  EXPECT_EQ(usage[1].total_milli, 3000);  // the unhealthy GPU left out
  EXPECT_DOUBLE_EQ(usage[1].AllocationRatio(), 0);
}

TEST(GpuUsageByModel, RatiosOfNothingAreZero) {
  const GpuModelUsage none;
  EXPECT_EQ(none.AllocationRatio(), 0);
  EXPECT_EQ(none.FragmentationRatio(), 0);
  const GpuModelUsage full{.total_milli = 8000, .free_milli = 0};
  EXPECT_EQ(full.AllocationRatio(), 1);
  EXPECT_EQ(full.FragmentationRatio(), 0);
}

}  // namespace
}  // namespace gpusched
