// Which node each replay policy picks, on clusters small enough to reason
// about by hand.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/replay/live_scoring_policy.h"
#include "scheduler/replay/placement_policy.h"
#include "scheduler/replay/replay_cluster.h"
#include "tests/scheduler/replay_builders.h"

namespace gpusched::replay {
namespace {

using ::gpusched::testing::TraceGpuNode;
using ::gpusched::testing::TracePodOf;

// A cluster, the trace pods it can place, and a helper to place one.
class PolicyFixture {
 public:
  PolicyFixture(std::vector<TraceNode> nodes, std::vector<TracePod> pods)
      : nodes_(std::move(nodes)),
        pods_(std::move(pods)),
        cluster_(nodes_),
        replay_pods_(pods_) {}

  void PlaceOn(int pod, int node) {
    const ReplayPod& p = replay_pods_.at(pod);
    ASSERT_TRUE(cluster_.Place(p, node, cluster_.PlanGpus(p, node)).ok());
  }
  std::optional<Choice> Choose(const std::string& policy, int pod) {
    auto made = MakePolicy(policy, replay_pods_.shape_count(), 1);
    EXPECT_TRUE(made.ok()) << made.status();
    (*made)->Observe(replay_pods_.at(pod));
    return (*made)->Choose(replay_pods_.at(pod), cluster_);
  }

 private:
  std::vector<TraceNode> nodes_;
  std::vector<TracePod> pods_;
  ReplayCluster cluster_;
  ReplayPods replay_pods_;
};

TEST(ReplayPolicies, EveryPolicyFailsAPodThatFitsNowhere) {
  PolicyFixture f({TraceGpuNode("a", 2)}, {TracePodOf("p").Gpus(4)});
  for (std::string_view name : PolicyNames()) {
    EXPECT_FALSE(f.Choose(std::string(name), 0).has_value()) << name;
  }
}

TEST(ReplayPolicies, EveryPolicyPlacesOnlyWhereThePodFits) {
  PolicyFixture f({TraceGpuNode("small", 1), TraceGpuNode("big", 8)},
                  {TracePodOf("p").Gpus(4)});
  for (std::string_view name : PolicyNames()) {
    std::optional<Choice> choice = f.Choose(std::string(name), 0);
    ASSERT_TRUE(choice.has_value()) << name;
    EXPECT_EQ(choice->node, 1) << name;
    EXPECT_EQ(choice->gpus.gpu_ids.size(), 4u) << name;
  }
}

TEST(ReplayPolicies, PackingAndBestFitPreferTheSharedGpu) {
  PolicyFixture f(
      {TraceGpuNode("idle", 8), TraceGpuNode("used", 8)},
      {TracePodOf("first").Share(500), TracePodOf("next").Share(300)});
  f.PlaceOn(0, 1);
  for (std::string name : {"packing", "bestfit", "default"}) {
    std::optional<Choice> choice = f.Choose(name, 1);
    ASSERT_TRUE(choice.has_value()) << name;
    EXPECT_EQ(choice->node, 1) << name;
    EXPECT_EQ(choice->gpus.gpu_ids, std::vector<int>{0}) << name;
  }
}

TEST(ReplayPolicies, DotProductPrefersTheNodeWithLessFree) {
  // Tetris as the FGD simulator scores it: a larger dot product of free and
  // requested scores lower, so the fuller node wins.
  PolicyFixture f({TraceGpuNode("idle", 2), TraceGpuNode("used", 2)},
                  {TracePodOf("first").Gpus(1), TracePodOf("next").Gpus(1)});
  f.PlaceOn(0, 1);
  std::optional<Choice> choice = f.Choose("dotprod", 1);
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->node, 1);
}

TEST(ReplayPolicies, DefaultKeepsCpuBesideFreeGpus) {
  // Once the default has learned that GPU pods need 8 CPUs per GPU, a
  // CPU-only pod that would leave "tight" 4 CPUs beside 8 free GPUs (all
  // stranded: fragmentation 0) goes to "roomy" (50), though binpack alone
  // would prefer the fuller CPU of "tight".
  std::vector<TracePod> trace(100, TracePodOf("gpu").Gpus(1).Cpu(8000));
  trace.push_back(TracePodOf("cpu").Cpu(12000));
  const std::vector<TraceNode> nodes = {TraceGpuNode("tight", 8).Cpu(16000),
                                        TraceGpuNode("roomy", 8).Cpu(128000)};
  const ReplayCluster cluster(nodes);
  const ReplayPods pods(trace);
  auto policy = MakePolicy("default", pods.shape_count(), 1);
  ASSERT_TRUE(policy.ok());
  for (int i = 0; i < 100; ++i) (*policy)->Observe(pods.at(i));
  std::optional<Choice> choice = (*policy)->Choose(pods.at(100), cluster);
  ASSERT_TRUE(choice.has_value());
  EXPECT_EQ(choice->node, 1);
}

TEST(ReplayPolicies, RandomSpreadsOverTheNodesThatFit) {
  std::vector<TraceNode> nodes;
  for (int i = 0; i < 8; ++i) nodes.push_back(TraceGpuNode("n", 8));
  for (int i = 0; i < 8; ++i) nodes[i].name += std::to_string(i);
  const std::vector<TracePod> trace = {TracePodOf("p").Gpus(1)};
  const ReplayCluster cluster(nodes);
  const ReplayPods pods(trace);
  auto policy = MakePolicy("random", pods.shape_count(), 5);
  ASSERT_TRUE(policy.ok());
  std::vector<int> picked(8, 0);
  for (int i = 0; i < 400; ++i) {
    ++picked[(*policy)->Choose(pods.at(0), cluster)->node];
  }
  for (int count : picked) EXPECT_GT(count, 20);  // about 50 each
}

// The cache must never change a choice: every pick scores as high as the
// best node scored afresh by weights that saw the same pods.
TEST(ReplayPolicies, DefaultCachedScoresMatchFreshScores) {
  std::vector<TraceNode> nodes;
  for (int i = 0; i < 6; ++i) {
    nodes.push_back(TraceGpuNode("n" + std::to_string(i), i % 2 ? 2 : 8)
                        .Cpu(i % 2 ? 104000 : 96000));
  }
  const std::vector<TracePod> trace = {
      TracePodOf("a").Share(810).Cpu(3152), TracePodOf("b").Gpus(1).Cpu(11300),
      TracePodOf("c").Share(470).Cpu(11908), TracePodOf("d").Cpu(12500),
      TracePodOf("e").Gpus(2).Cpu(16000)};
  ReplayCluster cluster(nodes);
  const ReplayPods pods(trace);
  const char kWeights[] = "binpack=1,topology=2,fragmentation=3";
  LiveScoringPolicy policy(*ScoringWeights::Parse(kWeights), pods.shape_count(),
                           3);
  const ScoringWeights fresh = *ScoringWeights::Parse(kWeights);
  for (int step = 0; step < 60; ++step) {
    const ReplayPod& pod = pods.at(step % trace.size());
    policy.Observe(pod);
    fresh.ObservePod(pod.view);
    std::optional<Choice> choice = policy.Choose(pod, cluster);
    double best = -1;
    for (int node = 0; node < cluster.size(); ++node) {
      if (!cluster.Fits(pod, node)) continue;
      best = std::max(best,
                      fresh.Score(ScoreInput{pod.view, cluster.node(node).state,
                                             cluster.PlanGpus(pod, node)}));
    }
    if (!choice) {
      EXPECT_EQ(best, -1) << "step " << step;
      continue;
    }
    EXPECT_DOUBLE_EQ(
        fresh.Score(ScoreInput{pod.view, cluster.node(choice->node).state,
                               choice->gpus}),
        best)
        << "step " << step;
    ASSERT_TRUE(cluster.Place(pod, choice->node, choice->gpus).ok());
  }
}

TEST(ReplayPolicies, LiveWeightsAreAcceptedAsAScorerName) {
  EXPECT_TRUE(MakePolicy("fragmentation=1", 1, 0).ok());
  EXPECT_TRUE(MakePolicy("binpack=1,topology=2", 1, 0).ok());
}

TEST(ReplayPolicies, AnUnknownNameListsTheKnownOnes) {
  absl::StatusOr<std::unique_ptr<PlacementPolicy>> policy =
      MakePolicy("fgd", 1, 0);
  ASSERT_FALSE(policy.ok());
  EXPECT_NE(policy.status().message().find("default, random, bestfit"),
            std::string::npos);
}

}  // namespace
}  // namespace gpusched::replay
