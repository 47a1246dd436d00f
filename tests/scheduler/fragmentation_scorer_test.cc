// The fragmentation scorer as the extender runs it: GPUs, CPU and the
// workload the weights have learned.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/fragmentation.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"
#include "scheduler/scoring.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;

TEST(FragmentationScore, PenalisesACpuPodThatStrandsWholeGpus) {
  const NodeState node(MakeNode("n").Gpus(2).Cpu("16"));
  const Pod pod = MakePod("p").Cpu("12");
  const PodView view = PodView::Of(pod);
  const GpuAssignment none;
  const TaskShape needs_8_cpus[] = {
      {.gpus = 1, .milli = 1000, .popularity = 1.0, .cpu_milli = 8000}};
  // Before: 16 CPUs reach both GPUs at 8 each, fragment 0. After: 4 CPUs,
  // the shape lacks CPU (FGD: 2000) and reach 500 milli (1500 stranded, x
  // kHostStrandWeight 8): +14000 milli, 100 / (1 + e^14) = 0.00008.
  const double score =
      FragmentationScorePrecise(ScoreInput{view, node, none, needs_8_cpus});
  EXPECT_NEAR(score, 100 / (1 + std::exp(14.0)), 1e-9);
}

TEST(FragmentationScore, IsNeutralForACpuPodThatLeavesEnoughCpu) {
  const NodeState node(MakeNode("n").Gpus(2).Cpu("64"));
  const Pod pod = MakePod("p").Cpu("12");
  const PodView view = PodView::Of(pod);
  const GpuAssignment none;
  const TaskShape needs_8_cpus[] = {
      {.gpus = 1, .milli = 1000, .popularity = 1.0, .cpu_milli = 8000}};
  EXPECT_DOUBLE_EQ(
      FragmentationScorePrecise(ScoreInput{view, node, none, needs_8_cpus}),
      50);
}

TEST(FragmentationScore, RoundsThePreciseScore) {
  NodeState node(MakeNode("n").Gpus(2).Replicas(4));
  const Pod pod = MakePod("p").Milli(250);
  const PodView view = PodView::Of(pod);
  const GpuAssignment on_gpu_1{.gpu_ids = {1}, .milli_per_gpu = 250};
  const ScoreInput input{view, node, on_gpu_1};
  EXPECT_EQ(FragmentationScore(input),
            static_cast<int>(std::lround(FragmentationScorePrecise(input))));
}

TEST(ScoringWeights, ScoreKeepsWhatCombinedRoundsAway) {
  const ScoringWeights weights = *ScoringWeights::Parse("fragmentation=1");
  NodeState node(MakeNode("n").Gpus(2).Replicas(4));
  const Pod pod = MakePod("p").Milli(250);
  const PodView view = PodView::Of(pod);
  const GpuAssignment gpus{.gpu_ids = {0}, .milli_per_gpu = 250};
  const ScoreInput input{view, node, gpus};
  const double precise = weights.Score(input);
  EXPECT_EQ(weights.Combined(input), static_cast<int>(std::floor(precise)));
  EXPECT_NE(precise, std::floor(precise));
}

TEST(ScoringWeights, LearnsTheWorkloadFromObservedPods) {
  const ScoringWeights weights = ScoringWeights::Defaults();
  const Pod pod = MakePod("p").Gpus(8).Cpu("64");
  for (int i = 0; i < 64; ++i) weights.ObservePod(PodView::Of(pod));
  ASSERT_EQ(weights.workload().version(), 1u);
  const std::vector<TaskShape>& shapes = *weights.workload().Shapes();
  ASSERT_EQ(shapes.size(), 1u);
  EXPECT_EQ(shapes[0].gpus, 8);
  EXPECT_EQ(shapes[0].cpu_milli, 64000);
}

TEST(ScoringWeights, CopiesShareOneWorkloadModel) {
  const ScoringWeights weights = ScoringWeights::Defaults();
  const ScoringWeights copy = weights;
  const Pod pod = MakePod("p").Milli(500);
  for (int i = 0; i < 64; ++i) weights.ObservePod(PodView::Of(pod));
  EXPECT_EQ(copy.workload().version(), 1u);
}

TEST(ScoringWeights, IgnoresPodsWithoutGpusWhenLearning) {
  const ScoringWeights weights = ScoringWeights::Defaults();
  const Pod pod = MakePod("p").Cpu("4");
  for (int i = 0; i < 100; ++i) weights.ObservePod(PodView::Of(pod));
  EXPECT_EQ(weights.workload().version(), 0u);
}

}  // namespace
}  // namespace gpusched
