#include "scheduler/scoring.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/base/strings.h"
#include "scheduler/fragmentation.h"
#include "scheduler/gpu_fit.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::kH100;
using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;

// Puts a running pod on `node` holding `ids` at `milli` each.
void Occupy(NodeState& node, std::string key, std::vector<int> ids,
            int milli = 1000) {
  ASSERT_TRUE(node.AddPod(PodAllocation{.pod_key = key,
                                        .uid = key,
                                        .gpus = {.gpu_ids = std::move(ids),
                                                 .milli_per_gpu = milli}})
                  .ok());
}

// Scores `pod` on `node` with `scorer`, on the devices PlanGpus picks.
int ScoreOf(int (*scorer)(const ScoreInput&), const Pod& pod,
            const NodeState& node) {
  const PodView view = PodView::Of(pod);
  const GpuPlan plan = PlanGpus(view.gpu, node.gpus());
  EXPECT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  return scorer(ScoreInput{view, node, plan.assignment});
}

// Scores `pod` on `node` on the given devices.
int ScoreOn(int (*scorer)(const ScoreInput&), const Pod& pod,
            const NodeState& node, GpuAssignment assignment) {
  const PodView view = PodView::Of(pod);
  return scorer(ScoreInput{view, node, assignment});
}

TEST(Binpack, PrefersThePartlyUsedNode) {
  NodeState busy(MakeNode("busy").Gpus(8));
  Occupy(busy, "ml/a", {0, 1, 2, 3});
  const NodeState idle(MakeNode("idle").Gpus(8));
  const Pod pod = MakePod("p").Gpus(1);
  EXPECT_EQ(ScoreOf(BinpackScore, pod, busy), 62);  // (4 + 1) / 8 = 62%
  EXPECT_EQ(ScoreOf(BinpackScore, pod, idle), 12);  // 1 / 8 = 12%
}

TEST(Spread, PrefersTheIdleNode) {
  NodeState busy(MakeNode("busy").Gpus(8));
  Occupy(busy, "ml/a", {0, 1, 2, 3});
  const NodeState idle(MakeNode("idle").Gpus(8));
  const Pod pod = MakePod("p").Gpus(1);
  EXPECT_EQ(ScoreOf(SpreadScore, pod, busy), 38);  // 100 - 62
  EXPECT_EQ(ScoreOf(SpreadScore, pod, idle), 88);  // 100 - 12
}

TEST(Binpack, CountsSharesByTheirMilli) {
  NodeState node(MakeNode("n").Gpus(2).Replicas(4));
  Occupy(node, "ml/a", {0}, 500);
  // (500 + 250) / 2000 = 37%
  EXPECT_EQ(ScoreOf(BinpackScore, MakePod("p").Milli(250), node), 37);
}

TEST(Binpack, UsesCpuAndMemoryForPodsWithoutGpus) {
  const NodeState node(MakeNode("n").Cpu("64").Memory("512Gi"));
  // cpu 32 / 64 = 50%, memory 128Gi / 512Gi = 25%, mean 37.
  EXPECT_EQ(ScoreOf(BinpackScore, MakePod("p").Cpu("32").Memory("128Gi"), node),
            37);
}

TEST(Binpack, UsesMigInstancesForMigPods) {
  const NodeState node(MakeNode("n")
                           .Mig("nvidia.com/mig-1g.10gb", 7)
                           .Mig("nvidia.com/mig-3g.40gb", 2));
  // 3 of 7 + 2 = 9 instances: 33%.
  EXPECT_EQ(ScoreOf(BinpackScore, MakePod("p").Mig("nvidia.com/mig-1g.10gb", 3),
                    node),
            33);
}

TEST(TopologyScore, PrefersNvLinkSetsOverPcieAcrossNuma) {
  const NodeState nvlink(MakeNode("h100").Gpus(8).Product(kH100));
  const NodeState pcie(MakeNode("l4").Gpus(8).Product("NVIDIA-L4"));
  const Pod pod = MakePod("p").Gpus(2);
  // NV18 + same NUMA is the best pair there is: absolute 100, relative 100.
  EXPECT_EQ(ScoreOn(TopologyScore, pod, nvlink,
                    {.gpu_ids = {0, 1}, .milli_per_gpu = 1000}),
            100);
  // SYS (10) of the best 1820 is 0 absolute; of this node's best NODE (20)
  // it is 50 relative: (0 + 50) / 2 = 25.
  EXPECT_EQ(ScoreOn(TopologyScore, pod, pcie,
                    {.gpu_ids = {0, 7}, .milli_per_gpu = 1000}),
            25);
  // NODE (20) is 1 absolute, 100 relative: (1 + 100) / 2 = 50.
  EXPECT_EQ(ScoreOn(TopologyScore, pod, pcie,
                    {.gpu_ids = {0, 1}, .milli_per_gpu = 1000}),
            50);
}

TEST(TopologyScore, SingleGpuPodsScoreTheSameEverywhere) {
  const NodeState nvlink(MakeNode("h100").Gpus(8).Product(kH100));
  const NodeState pcie(MakeNode("l4").Gpus(8).Product("NVIDIA-L4"));
  EXPECT_EQ(ScoreOf(TopologyScore, MakePod("p").Gpus(1), nvlink), 100);
  EXPECT_EQ(ScoreOf(TopologyScore, MakePod("p").Gpus(1), pcie), 100);
}

TEST(Fragmentation, PrefersFillingAPartlyUsedSharedGpu) {
  NodeState node(MakeNode("n").Gpus(2).Replicas(4));
  Occupy(node, "ml/a", {0}, 500);
  const Pod pod = MakePod("p").Milli(250);
  // Before: free {500, 1000}, fragment 650 (0.4 * 500 + 0.3 * 1500).
  // On GPU 0: free {250, 1000}, fragment 512.5: 100 / (1 + e^-0.1375) = 53.
  const int fill = ScoreOn(FragmentationScore, pod, node,
                           {.gpu_ids = {0}, .milli_per_gpu = 250});
  // On GPU 1: free {500, 750}, fragment 875: 100 / (1 + e^0.225) = 44.
  const int fresh = ScoreOn(FragmentationScore, pod, node,
                            {.gpu_ids = {1}, .milli_per_gpu = 250});
  EXPECT_EQ(fill, 53);
  EXPECT_EQ(fresh, 44);
}

TEST(Fragmentation, IsNeutralForPodsThatTakeNoGpu) {
  const NodeState node(MakeNode("n").Gpus(2));
  EXPECT_EQ(ScoreOf(FragmentationScore, MakePod("p").Cpu("1"), node), 50);
}

TEST(NodeFragmentation, CountsAllFreeMilliForShapesThatDoNotFit) {
  const TaskShape shapes[] = {{.gpus = 2, .milli = 1000, .popularity = 1.0}};
  const int free[] = {1000, 600};
  EXPECT_DOUBLE_EQ(NodeFragmentation(free, shapes), 1600);  // 1000 + 600
}

TEST(NodeFragmentation, CountsTooSmallGpusForShapesThatFit) {
  const TaskShape shapes[] = {{.gpus = 1, .milli = 500, .popularity = 0.5}};
  const int free[] = {1000, 300, 200};
  EXPECT_DOUBLE_EQ(NodeFragmentation(free, shapes), 250);  // 0.5 * (300+200)
}

TEST(Scorers, AreFoundByName) {
  ASSERT_NE(FindScorer("topology"), nullptr);
  EXPECT_EQ(FindScorer("topology")->score, &TopologyScore);
  EXPECT_EQ(FindScorer("nope"), nullptr);
}

TEST(ScoringWeights, DefaultsFavourFragmentationThenTopology) {
  EXPECT_EQ(ScoringWeights::Defaults().ToString(),
            "binpack=1,spread=0,topology=2,fragmentation=3");
}

TEST(ScoringWeights, ParsesNamedWeights) {
  absl::StatusOr<ScoringWeights> weights =
      ScoringWeights::Parse("binpack=1,,topology=2");
  ASSERT_TRUE(weights.ok()) << weights.status();
  EXPECT_EQ(weights->ToString(), "binpack=1,topology=2");
}

TEST(ScoringWeights, ParseRejectsBadInputWithAReason) {
  const struct {
    std::string_view text;
    std::string_view message;
  } kCases[] = {
      {"magic=1",
       "scoring: unknown scorer \"magic\" (known: binpack, spread, topology, "
       "fragmentation)"},
      {"binpack=x",
       "scoring: weight of binpack is \"x\"; must be an integer from 0 to 100"},
      {"binpack=101",
       "scoring: weight of binpack is \"101\"; must be an integer from 0 to "
       "100"},
      {"binpack=-1",
       "scoring: weight of binpack is \"-1\"; must be an integer from 0 to "
       "100"},
      {"binpack",
       "scoring: weight of binpack is \"\"; must be an integer from 0 to 100"},
      {"binpack=0,spread=0",
       "scoring: at least one scorer needs a positive weight"},
      {"", "scoring: at least one scorer needs a positive weight"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<ScoringWeights> weights = ScoringWeights::Parse(c.text);
    ASSERT_FALSE(weights.ok());
    EXPECT_EQ(Message(weights.status()), c.message);
  }
}

TEST(ScoringWeights, CombinedIsTheWeightedMean) {
  NodeState node(MakeNode("n").Gpus(8));
  Occupy(node, "ml/a", {0, 1, 2, 3});
  const PodView view = PodView::Of(MakePod("p").Gpus(1));
  const GpuAssignment assignment{.gpu_ids = {4}, .milli_per_gpu = 1000};
  const ScoreInput input{view, node, assignment};
  // binpack 62, spread 38.
  EXPECT_EQ(ScoringWeights::Parse("binpack=1")->Combined(input), 62);
  EXPECT_EQ(ScoringWeights::Parse("binpack=1,spread=1")->Combined(input),
            50);  // (62 + 38) / 2
  EXPECT_EQ(ScoringWeights::Parse("binpack=3,spread=1")->Combined(input),
            56);  // (3 * 62 + 38) / 4 = 56
}

}  // namespace
}  // namespace gpusched
