#include "scheduler/k8s_objects.h"

#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakePod;

Container Named(std::string name, ResourceList requests,
                ResourceList limits = {}) {
  return Container{.name = std::move(name),
                   .requests = std::move(requests),
                   .limits = std::move(limits)};
}

TEST(EffectiveRequests, SumsAppContainers) {
  Pod pod;
  pod.containers = {Named("a", {{"cpu", 500}, {"memory", 100}}),
                    Named("b", {{"cpu", 250}, {"nvidia.com/gpu", 1}})};
  EXPECT_EQ(EffectiveRequests(pod), (ResourceList{{"cpu", 750},  // 500 + 250
                                                  {"memory", 100},
                                                  {"nvidia.com/gpu", 1}}));
}

TEST(EffectiveRequests, TakesTheLargestInitContainerNotTheirSum) {
  Pod pod;
  pod.containers = {Named("app", {{"cpu", 100}})};
  pod.init_containers = {Named("init-a", {{"cpu", 2000}}),
                         Named("init-b", {{"cpu", 3000}})};
  // max(100, 2000, 3000); init containers run one at a time.
  EXPECT_EQ(EffectiveRequests(pod), (ResourceList{{"cpu", 3000}}));
}

TEST(EffectiveRequests, AppContainerSumWinsWhenLargerThanAnyInitContainer) {
  Pod pod;
  pod.containers = {Named("a", {{"cpu", 1500}}), Named("b", {{"cpu", 1500}})};
  pod.init_containers = {Named("init", {{"cpu", 2000}, {"memory", 64}})};
  // cpu: max(1500 + 1500, 2000) = 3000; memory: max(0, 64) = 64.
  EXPECT_EQ(EffectiveRequests(pod),
            (ResourceList{{"cpu", 3000}, {"memory", 64}}));
}

TEST(EffectiveRequests, AddsOverheadAfterTheInitContainerMaximum) {
  Pod pod;
  pod.containers = {Named("app", {{"cpu", 1000}})};
  pod.init_containers = {Named("init", {{"cpu", 2000}})};
  pod.overhead = ResourceList{{"cpu", 250}};
  EXPECT_EQ(EffectiveRequests(pod),
            (ResourceList{{"cpu", 2250}}));  // max(1000, 2000) + 250
}

TEST(EffectiveRequests, LimitStandsInForAMissingRequest) {
  Pod pod;
  pod.containers = {Named("app", {}, {{"nvidia.com/gpu", 2}, {"cpu", 4000}})};
  EXPECT_EQ(EffectiveRequests(pod),
            (ResourceList{{"cpu", 4000}, {"nvidia.com/gpu", 2}}));
}

TEST(EffectiveRequests, ExplicitRequestIsNotReplacedByTheLimit) {
  Pod pod;
  pod.containers = {Named("app", {{"cpu", 500}}, {{"cpu", 4000}})};
  EXPECT_EQ(EffectiveRequests(pod), (ResourceList{{"cpu", 500}}));
}

TEST(EffectiveRequests, InitContainerLimitCountsAsItsRequest) {
  Pod pod;
  pod.containers = {Named("app", {{"cpu", 100}})};
  pod.init_containers = {Named("init", {}, {{"cpu", 1000}})};
  EXPECT_EQ(EffectiveRequests(pod), (ResourceList{{"cpu", 1000}}));
}

TEST(PodKey, IsNamespaceSlashName) {
  EXPECT_EQ(MakePod("team/train").Build().Key(), "team/train");
}

TEST(PodKey, UsesTheDefaultNamespaceWhenNoneIsSet) {
  Pod pod;
  pod.meta.name = "lonely";
  EXPECT_EQ(pod.Key(), "default/lonely");
}

TEST(IsTerminal, HoldsOnlyForSucceededAndFailed) {
  EXPECT_TRUE(IsTerminal(MakePod("a").Phase(PodPhase::kSucceeded)));
  EXPECT_TRUE(IsTerminal(MakePod("a").Phase(PodPhase::kFailed)));
  EXPECT_FALSE(IsTerminal(MakePod("a").Phase(PodPhase::kRunning)));
  EXPECT_FALSE(IsTerminal(MakePod("a").Phase(PodPhase::kPending)));
  EXPECT_FALSE(IsTerminal(MakePod("a").Phase(PodPhase::kUnknown)));
}

TEST(PodPhaseFromName, ReadsKubernetesNamesAndAnythingElseAsUnknown) {
  for (PodPhase phase :
       {PodPhase::kPending, PodPhase::kRunning, PodPhase::kSucceeded,
        PodPhase::kFailed, PodPhase::kUnknown}) {
    EXPECT_EQ(PodPhaseFromName(PodPhaseName(phase)), phase);
  }
  EXPECT_EQ(PodPhaseName(PodPhase::kSucceeded), "Succeeded");
  EXPECT_EQ(PodPhaseFromName("Evicted"), PodPhase::kUnknown);
  EXPECT_EQ(PodPhaseFromName("running"), PodPhase::kUnknown);  // exact case
  EXPECT_EQ(PodPhaseFromName(""), PodPhase::kUnknown);
}

}  // namespace
}  // namespace gpusched
