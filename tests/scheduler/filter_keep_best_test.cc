// ServiceOptions::filter_keep_best: filter answers with only the best
// fitting nodes by the prioritize scorers, so that kube-scheduler scores
// few nodes (one: none) and the placement is gpusched's.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/extender_service.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

// busy (4 of 8 GPUs taken) outscores idle for a 1-GPU pod under the
// default weights (7 against 5 of 10, see extender_service_test.cc), and
// half-busy (2 taken) lies between them; full has no GPU left.
std::unique_ptr<ExtenderService> ServiceKeeping(size_t keep) {
  auto service = std::make_unique<ExtenderService>(
      ServiceOptions{.filter_keep_best = keep});
  service->UpsertNodes({MakeNode("idle").Gpus(8), MakeNode("busy").Gpus(8),
                        MakeNode("half").Gpus(8), MakeNode("full").Gpus(1)});
  EXPECT_THAT(service->AddRunningPods(
                  {MakePod("ml/a").Gpus(4).OnNode("busy").Annotation(
                       kGpuIdsAnnotation, "0,1,2,3"),
                   MakePod("ml/b").Gpus(2).OnNode("half").Annotation(
                       kGpuIdsAnnotation, "0,1"),
                   MakePod("ml/c").Gpus(1).OnNode("full").Annotation(
                       kGpuIdsAnnotation, "0")}),
              IsEmpty());
  return service;
}

const std::vector<std::string> kAsked = {"idle", "full", "half", "busy"};

TEST(FilterKeepBest, OneKeepsTheBestScoredFittingNode) {
  auto owned = ServiceKeeping(1);
  ExtenderService& service = *owned;
  const FilterOutcome outcome = service.Filter(MakePod("ml/p").Gpus(1), kAsked);
  EXPECT_THAT(outcome.passed, ElementsAre("busy"));
  EXPECT_THAT(outcome.not_chosen, ElementsAre("idle", "half"));
  // Nodes that do not fit keep their reasons.
  EXPECT_THAT(outcome.failed,
              ElementsAre(Pair("full", "needs 1 nvidia.com/gpu; 0 free")));
}

TEST(FilterKeepBest, TwoKeepsTheTwoBestInTheAskedOrder) {
  auto owned = ServiceKeeping(2);
  ExtenderService& service = *owned;
  const FilterOutcome outcome = service.Filter(MakePod("ml/p").Gpus(1), kAsked);
  EXPECT_THAT(outcome.passed, ElementsAre("half", "busy"));
  EXPECT_THAT(outcome.not_chosen, ElementsAre("idle"));
}

TEST(FilterKeepBest, FewerFittingNodesThanKeptAreAllPassed) {
  auto owned = ServiceKeeping(3);
  ExtenderService& service = *owned;
  const FilterOutcome outcome = service.Filter(MakePod("ml/p").Gpus(1), kAsked);
  EXPECT_THAT(outcome.passed, ElementsAre("idle", "half", "busy"));
  EXPECT_THAT(outcome.not_chosen, IsEmpty());
}

TEST(FilterKeepBest, ZeroPassesEveryFittingNode) {
  auto owned = ServiceKeeping(0);
  ExtenderService& service = *owned;
  const FilterOutcome outcome = service.Filter(MakePod("ml/p").Gpus(1), kAsked);
  EXPECT_THAT(outcome.passed, ElementsAre("idle", "half", "busy"));
}

TEST(FilterKeepBest, EqualScoresGoToTheFirstAsked) {
  ExtenderService service({.filter_keep_best = 1});
  service.UpsertNodes({MakeNode("x").Gpus(8), MakeNode("y").Gpus(8)});
  const std::vector<std::string> yx = {"y", "x"}, xy = {"x", "y"};
  EXPECT_THAT(service.Filter(MakePod("ml/p").Gpus(1), yx).passed,
              ElementsAre("y"));
  EXPECT_THAT(service.Filter(MakePod("ml/p").Gpus(1), xy).passed,
              ElementsAre("x"));
}

// The choice follows the model: once the best node fills up, the next
// best is chosen.
TEST(FilterKeepBest, ChoiceFollowsTheModel) {
  auto owned = ServiceKeeping(1);
  ExtenderService& service = *owned;
  EXPECT_THAT(
      service.AddRunningPods({MakePod("ml/d").Gpus(4).OnNode("busy").Annotation(
          kGpuIdsAnnotation, "4,5,6,7")}),
      IsEmpty());
  EXPECT_THAT(service.Filter(MakePod("ml/p").Gpus(1), kAsked).passed,
              ElementsAre("half"));
}

}  // namespace
}  // namespace gpusched
