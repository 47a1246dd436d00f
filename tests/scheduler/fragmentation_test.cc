// The FGD fragment measure with host resources, and the learned workload.
#include "scheduler/fragmentation.h"

#include <vector>

#include "gtest/gtest.h"

namespace gpusched {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

TEST(NodeFragmentation, CountsAllFreeMilliForAShapeThatLacksCpu) {
  const TaskShape shapes[] = {
      {.gpus = 1, .milli = 1000, .popularity = 0.5, .cpu_milli = 8000},
      {.gpus = 1, .milli = 1000, .popularity = 0.5}};
  const int gpus[] = {1000};
  // The workload needs 0.5 * 8000 / 1000 = 4 milli-CPU per milli-GPU: 4000
  // CPU reach the whole GPU, nothing strands. The first shape lacks CPU:
  // 0.5 * 1000.
  EXPECT_DOUBLE_EQ(
      NodeFragmentation(NodeFree{.gpu_milli = gpus, .cpu_milli = 4000}, shapes),
      500);
}

TEST(NodeFragmentation, CountsAllFreeMilliForAShapeThatLacksMemory) {
  const TaskShape shapes[] = {
      {.gpus = 1, .milli = 500, .popularity = 0.5, .memory_bytes = 32 * kGi},
      {.gpus = 8, .milli = 1000, .popularity = 0.5}};
  const int gpus[] = {1000, 300};
  // 24Gi reach all 1300 milli (the mix needs 16Gi per 4250 milli), but the
  // first shape lacks memory and the second GPUs: 0.5 * 1300 + 0.5 * 1300.
  const NodeFree free{.gpu_milli = gpus, .memory_bytes = 24 * kGi};
  EXPECT_DOUBLE_EQ(NodeFragmentation(free, shapes), 1300);
}

TEST(NodeFragmentation, WeighsGpusTheNodesCpuCannotReach) {
  const TaskShape shapes[] = {
      {.gpus = 1, .milli = 1000, .popularity = 1.0, .cpu_milli = 8000}};
  const int gpus[] = {1000, 1000, 1000, 1000};
  // 16 CPUs at 8 per GPU reach 2 of the 4 free GPUs: 2000 milli strand,
  // weighted kHostStrandWeight; the shape itself still fits (FGD: 0).
  EXPECT_DOUBLE_EQ(NodeFragmentation(
                       NodeFree{.gpu_milli = gpus, .cpu_milli = 16000}, shapes),
                   2000 * kHostStrandWeight);
  EXPECT_DOUBLE_EQ(NodeFragmentation(
                       NodeFree{.gpu_milli = gpus, .cpu_milli = 32000}, shapes),
                   0);
}

TEST(NodeFragmentation, IgnoresShapesWithoutGpus) {
  const TaskShape shapes[] = {
      {.gpus = 0, .milli = 0, .popularity = 1.0, .cpu_milli = 1000}};
  const int gpus[] = {1000};
  EXPECT_DOUBLE_EQ(
      NodeFragmentation(NodeFree{.gpu_milli = gpus, .cpu_milli = 0}, shapes),
      0);
}

TEST(NodeFragmentation, IsZeroWhenNoGpuMilliIsLeft) {
  const int gpus[] = {0, 0};
  EXPECT_DOUBLE_EQ(NodeFragmentation(gpus, DefaultTaskShapes()), 0);
}

TEST(NodeFragmentation, WholeGpuShapesNeedWholeFreeGpus) {
  const TaskShape shapes[] = {{.gpus = 2, .milli = 1000, .popularity = 1.0}};
  const int gpus[] = {1000, 999, 1000};
  EXPECT_DOUBLE_EQ(NodeFragmentation(gpus, shapes), 999);  // GPU 1 strands
}

TaskShapeModel::Options SmallModel() {
  return {.min_observations = 4,
          .coverage = 0.75,
          .max_shapes = 8,
          .half_life = 1000,
          .max_republish_interval = 1000};
}

TEST(TaskShapeModel, UsesDefaultShapesUntilEnoughPodsWereSeen) {
  TaskShapeModel model(SmallModel());
  for (int i = 0; i < 3; ++i) model.Observe({.gpus = 8, .milli = 1000});
  EXPECT_EQ(model.version(), 0u);
  EXPECT_EQ(model.Shapes()->size(), DefaultTaskShapes().size());
}

TEST(TaskShapeModel, KeepsTheShapesWithMostGpuDemand) {
  TaskShapeModel model(SmallModel());
  for (int i = 0; i < 6; ++i) {
    model.Observe({.gpus = 1, .milli = 500, .cpu_milli = 4000});
  }
  model.Observe({.gpus = 8, .milli = 1000, .cpu_milli = 88000});
  // Demand: 6 x 0.5 = 3 GPUs of shares, 8 of the one large job. The job
  // alone covers 8 / 11 = 73% < 75%, so the shares are kept too.
  const std::vector<TaskShape>& shapes = *model.Shapes();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[0].gpus, 8);
  EXPECT_EQ(shapes[0].cpu_milli, 88000);
  EXPECT_NEAR(shapes[0].popularity, 8.0 / 11.0, 1e-9);
  EXPECT_EQ(shapes[1].milli, 500);
}

TEST(TaskShapeModel, CutsTheRareTailAndRenormalises) {
  TaskShapeModel model(SmallModel());
  for (int i = 0; i < 7; ++i) model.Observe({.gpus = 1, .milli = 1000});
  model.Observe({.gpus = 1, .milli = 100});
  // 7 of 7.1 GPUs already cover 75%: the 100-milli shape is cut.
  const std::vector<TaskShape>& shapes = *model.Shapes();
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_DOUBLE_EQ(shapes[0].popularity, 1.0);
}

TEST(TaskShapeModel, IgnoresPodsWithoutGpus) {
  TaskShapeModel model(SmallModel());
  for (int i = 0; i < 10; ++i) model.Observe({.gpus = 0, .milli = 0});
  EXPECT_EQ(model.version(), 0u);
}

TEST(TaskShapeModel, RepublishesOnlyAfterAQuarterMoreObservations) {
  TaskShapeModel model(SmallModel());
  for (int i = 0; i < 4; ++i) model.Observe({.gpus = 1, .milli = 1000});
  EXPECT_EQ(model.version(), 1u);  // first published at 4
  model.Observe({.gpus = 2, .milli = 1000});
  EXPECT_EQ(model.version(), 2u);  // 1 more of 4 is a quarter
  model.Observe({.gpus = 2, .milli = 1000});
  EXPECT_EQ(model.version(), 2u);  // 1 more of 5 is not
  model.Observe({.gpus = 2, .milli = 1000});
  EXPECT_EQ(model.version(), 3u);  // 2 more of 5 is
}

TEST(TaskShapeModel, OrdersEquallyPopularShapesByTheirKey) {
  TaskShapeModel model({.min_observations = 5, .coverage = 1.0});
  model.Observe({.gpus = 1, .milli = 1000, .cpu_milli = 3000});
  model.Observe({.gpus = 1, .milli = 1000, .cpu_milli = 1000});
  model.Observe({.gpus = 1, .milli = 500});
  model.Observe({.gpus = 1, .milli = 500});
  model.Observe({.gpus = 1, .milli = 1000, .cpu_milli = 2000});
  // Each has one GPU of demand.
  const std::vector<TaskShape>& shapes = *model.Shapes();
  ASSERT_EQ(shapes.size(), 4u);
  EXPECT_EQ(shapes[0].milli, 500);
  EXPECT_EQ(shapes[1].cpu_milli, 1000);
  EXPECT_EQ(shapes[2].cpu_milli, 2000);
  EXPECT_EQ(shapes[3].cpu_milli, 3000);
}

TEST(TaskShapeModel, OldShapesFadeWithTheHalfLife) {
  TaskShapeModel model({.min_observations = 2,
                        .coverage = 1.0,
                        .half_life = 4,
                        .max_republish_interval = 1});
  for (int i = 0; i < 4; ++i) model.Observe({.gpus = 8, .milli = 1000});
  for (int i = 0; i < 4; ++i) model.Observe({.gpus = 1, .milli = 1000});
  // 8-GPU demand 32, halved at the 4th and 8th observation: 8. 1-GPU
  // demand 4, halved at the 8th: 2. Without fading: 4 / 36.
  const std::vector<TaskShape>& shapes = *model.Shapes();
  ASSERT_EQ(shapes.size(), 2u);
  EXPECT_EQ(shapes[1].gpus, 1);
  EXPECT_NEAR(shapes[1].popularity, 2.0 / 10.0, 1e-9);
}

}  // namespace
}  // namespace gpusched
