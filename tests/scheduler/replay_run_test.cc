#include <vector>

#include "gtest/gtest.h"
#include "scheduler/replay/replay.h"
#include "tests/scheduler/replay_builders.h"

namespace gpusched::replay {
namespace {

using ::gpusched::testing::TraceGpuNode;
using ::gpusched::testing::TracePodOf;

Trace SmallTrace() {
  Trace trace;
  for (int i = 0; i < 4; ++i) {
    trace.nodes.push_back(TraceGpuNode("n" + std::to_string(i), 8));
  }
  trace.pods = {TracePodOf("one").Gpus(1), TracePodOf("share").Share(300),
                TracePodOf("cpu").Cpu(4000), TracePodOf("eight").Gpus(8),
                TracePodOf("half").Share(500)};
  return trace;
}

TEST(RunReplay, RecordsTheCheckpointsUpToTheLoad) {
  const ReplayReport report =
      *RunReplay(SmallTrace(), {.load = 1.3, .seed = 1});
  ASSERT_EQ(report.checkpoints.size(), 4u);
  const double loads[] = {0.8, 0.9, 1.0, 1.3};
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(report.checkpoints[i].arrived_load, loads[i]);
    EXPECT_LE(report.checkpoints[i].allocation_ratio, 1.0);
    EXPECT_LE(report.checkpoints[i].allocation_ratio, loads[i] + 0.25);
  }
  EXPECT_EQ(report.gpus, 32);
  EXPECT_EQ(report.nodes, 4);
}

TEST(RunReplay, CountsEveryArrivalAsPlacedOrFailed) {
  const ReplayReport report =
      *RunReplay(SmallTrace(), {.load = 1.3, .seed = 2});
  EXPECT_EQ(report.arrived_pods, report.placed_pods + report.failed_pods);
  EXPECT_GT(report.failed_pods, 0);  // 130% of the GPUs cannot all fit
  EXPECT_GE(report.arrived_milli, 32000 * 13 / 10);
  EXPECT_EQ(report.arrived_milli - report.failed_milli, report.allocated_milli);
}

TEST(RunReplay, ReportsTheLinkQualityOfMultiGpuPlacements) {
  const ReplayReport report =
      *RunReplay(SmallTrace(), {.load = 1.3, .seed = 4});
  EXPECT_GT(report.multi_gpu_pods, 0);  // the 8-GPU pods that fit
  EXPECT_GT(report.multi_gpu_topology_score, 0);
  EXPECT_LE(report.multi_gpu_topology_score, 100);
}

TEST(RunReplay, BelowFullLoadOnlyTheLoadIsACheckpoint) {
  const ReplayReport report =
      *RunReplay(SmallTrace(), {.load = 0.5, .seed = 1});
  ASSERT_EQ(report.checkpoints.size(), 1u);
  EXPECT_DOUBLE_EQ(report.checkpoints[0].arrived_load, 0.5);
}

TEST(RunReplay, TheCurveRisesInSteps) {
  const ReplayReport report =
      *RunReplay(SmallTrace(), {.load = 1.0, .seed = 1, .curve_step = 0.25});
  ASSERT_EQ(report.curve.size(), 4u);
  EXPECT_DOUBLE_EQ(report.curve[0].arrived_load, 0.25);
  EXPECT_DOUBLE_EQ(report.curve[3].arrived_load, 1.0);
  for (size_t i = 1; i < report.curve.size(); ++i) {
    EXPECT_GE(report.curve[i].allocation_ratio,
              report.curve[i - 1].allocation_ratio);
  }
}

TEST(RunReplay, IsDeterministicForASeed) {
  for (const char* scorer :
       {"default", "random", "bestfit", "dotprod", "packing"}) {
    const ReplayOptions options{.load = 1.3, .seed = 9, .scorer = scorer};
    const ReplayReport a = *RunReplay(SmallTrace(), options);
    const ReplayReport b = *RunReplay(SmallTrace(), options);
    EXPECT_EQ(a.allocated_milli, b.allocated_milli) << scorer;
    EXPECT_EQ(a.failed_pods, b.failed_pods) << scorer;
  }
}

TEST(RunReplay, RejectsAnUnknownScorer) {
  EXPECT_FALSE(RunReplay(SmallTrace(), {.scorer = "fgd"}).ok());
}

}  // namespace
}  // namespace gpusched::replay
