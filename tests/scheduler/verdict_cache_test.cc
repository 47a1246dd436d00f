// The filter's verdict cache: a remembered verdict is used only while the
// node is unchanged, and pods are told apart by everything a verdict reads.
#include "scheduler/verdict_cache.h"

#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/extender_service.h"
#include "scheduler/fit_signature.h"
#include "scheduler/node_fit.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::BindOf;
using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::gpusched::testing::Req;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::SizeIs;

std::vector<std::string> Names(std::initializer_list<const char*> names) {
  return {names.begin(), names.end()};
}

Pod Running(std::string key, std::string node, std::string ids) {
  const int count =
      static_cast<int>(std::count(ids.begin(), ids.end(), ',')) + 1;
  return MakePod(key)
      .Gpus(count)
      .OnNode(std::move(node))
      .Annotation(kGpuIdsAnnotation, std::move(ids));
}

TEST(NodeGeneration, ChangesWithEveryPodAndNodeUpdate) {
  NodeState node(MakeNode("n").Gpus(2));
  const uint64_t built = node.generation();
  ASSERT_TRUE(node.AddPod(PodAllocation{
                              .pod_key = "a/p",
                              .gpus = {.gpu_ids = {0}, .milli_per_gpu = 1000}})
                  .ok());
  const uint64_t added = node.generation();
  node.RemovePod("a/p");
  const uint64_t removed = node.generation();
  node.ReplaceNode(MakeNode("n").Gpus(4));
  EXPECT_NE(built, added);
  EXPECT_NE(added, removed);
  EXPECT_NE(removed, node.generation());
  EXPECT_NE(built, removed);  // same content as built, still a new value
}

TEST(NodeGeneration, IsNeverSharedBetweenTwoNodes) {
  NodeState a(MakeNode("a").Gpus(1));
  NodeState b(MakeNode("a").Gpus(1));
  EXPECT_NE(a.generation(), b.generation());
}

TEST(VerdictCacheTest, RecomputesOnlyWhenTheNodeChanges) {
  VerdictCache cache;
  NodeState node(MakeNode("n").Gpus(1));
  int checks = 0;
  auto check = [&] {
    ++checks;
    return node.pod_count() == 0 ? FitVerdict::Fits()
                                 : FitVerdict::Unavailable("busy");
  };
  VerdictCache::Shape shape = cache.Lookup("shape");
  EXPECT_EQ(shape.Get(node, check).code, FitVerdict::Code::kFits);
  EXPECT_EQ(shape.Get(node, check).code, FitVerdict::Code::kFits);
  EXPECT_EQ(checks, 1);
  ASSERT_TRUE(node.AddPod(PodAllocation{.pod_key = "a/p"}).ok());
  const VerdictCache::Verdict busy = shape.Get(node, check);
  EXPECT_EQ(busy.code, FitVerdict::Code::kUnavailable);
  EXPECT_EQ(busy.reason, "busy");
  EXPECT_EQ(checks, 2);
}

TEST(VerdictCacheTest, KeepsSignaturesApart) {
  VerdictCache cache;
  NodeState node(MakeNode("n").Gpus(1));
  cache.Lookup("small").Get(node, [] { return FitVerdict::Fits(); });
  const VerdictCache::Verdict big = cache.Lookup("big").Get(
      node, [] { return FitVerdict::Infeasible("too big"); });
  EXPECT_EQ(big.reason, "too big");
  int checks = 0;
  const VerdictCache::Verdict small = cache.Lookup("small").Get(node, [&] {
    ++checks;
    return FitVerdict::Fits();
  });
  EXPECT_EQ(small.code, FitVerdict::Code::kFits);
  EXPECT_EQ(checks, 0);
}

TEST(VerdictCacheTest, ForgetsEverythingPastItsBound) {
  VerdictCache cache(/*max_entries=*/4);
  std::vector<std::unique_ptr<NodeState>> nodes;
  VerdictCache::Shape shape = cache.Lookup("shape");
  for (int i = 0; i < 6; ++i) {
    nodes.push_back(std::make_unique<NodeState>(MakeNode("n").Gpus(1)));
    shape.Get(*nodes.back(), [] { return FitVerdict::Fits(); });
  }
  EXPECT_EQ(cache.entries(), 6u);  // the bound applies at the next Lookup
  EXPECT_EQ(cache.Lookup("shape").size(), 0u);
  EXPECT_EQ(cache.entries(), 0u);
}

TEST(FitSignatureTest, IgnoresTheNameAndTellsEveryFitFieldApart) {
  auto signature = [](const Pod& pod) {
    return FitSignature(PodView::Of(pod));
  };
  const Pod base = MakePod("ml/a").Gpus(2).Cpu("4");
  EXPECT_EQ(signature(base), signature(MakePod("ml/b").Gpus(2).Cpu("4")));
  const std::vector<Pod> different = {
      MakePod("ml/a").Gpus(1).Cpu("4"),
      MakePod("ml/a").Gpus(2).Cpu("5"),
      MakePod("ml/a").Gpus(2).Cpu("4").RequireNvLink(),
      MakePod("ml/a").Gpus(2).Cpu("4").NodeSelector("zone", "a"),
      MakePod("ml/a").Gpus(2).Cpu("4").Affinity({Req("zone", "In", {"a"})}),
      MakePod("ml/a").Gpus(2).Cpu("4").Toleration("gpu", "Exists", "",
                                                  "NoSchedule"),
      MakePod("ml/a").Gpus(2).Cpu("4").Mig("nvidia.com/mig-1g.5gb", 1),
      MakePod("ml/a").Gpus(2).Cpu("4").Annotation(kGpuMilliAnnotation, "x"),
  };
  for (const Pod& pod : different) {
    EXPECT_NE(signature(base), signature(pod)) << signature(pod);
  }
}

class CachedFilterTest : public ::testing::Test {
 protected:
  CachedFilterTest() {
    EXPECT_THAT(
        service_.UpsertNodes({MakeNode("n1").Gpus(8), MakeNode("n2").Gpus(8)}),
        IsEmpty());
  }
  ExtenderService service_;
};

TEST_F(CachedFilterTest, ABindChangesTheNextVerdict) {
  const Pod whole = MakePod("ml/whole").Gpus(8);
  ASSERT_THAT(service_.Filter(whole, Names({"n1"})).passed, ElementsAre("n1"));
  const Pod one = MakePod("ml/one").Gpus(1);
  ASSERT_THAT(service_.Filter(one, Names({"n1"})).passed, ElementsAre("n1"));
  ASSERT_EQ(service_.Bind(BindOf(one, "n1")).error, "");
  const FilterOutcome after = service_.Filter(whole, Names({"n1", "n2"}));
  ASSERT_THAT(after.failed, SizeIs(1));
  EXPECT_EQ(after.failed[0].first, "n1");
  EXPECT_THAT(after.failed[0].second, HasSubstr("7 free"));  // 8 - 1
  EXPECT_THAT(after.passed, ElementsAre("n2"));
}

TEST_F(CachedFilterTest, APodCompletingFreesItsNodeForTheNextFilter) {
  EXPECT_THAT(
      service_.AddRunningPods({Running("ml/big", "n1", "0,1,2,3,4,5,6,7")}),
      IsEmpty());
  const Pod pod = MakePod("ml/p").Gpus(1);
  ASSERT_THAT(service_.Filter(pod, Names({"n1"})).failed, SizeIs(1));
  ASSERT_TRUE(service_.RemovePod("uid-ml-big"));
  EXPECT_THAT(service_.Filter(pod, Names({"n1"})).passed, ElementsAre("n1"));
}

TEST_F(CachedFilterTest, ANodeUpdateChangesTheNextVerdict) {
  const Pod pod = MakePod("ml/p").Gpus(1).NodeSelector("zone", "a");
  ASSERT_THAT(service_.Filter(pod, Names({"n1"})).unresolvable, SizeIs(1));
  service_.UpsertNodes({MakeNode("n1").Gpus(8).Label("zone", "a")});
  EXPECT_THAT(service_.Filter(pod, Names({"n1"})).passed, ElementsAre("n1"));
  service_.UpsertNodes({MakeNode("n1").Gpus(8).Label("zone", "b")});
  EXPECT_THAT(service_.Filter(pod, Names({"n1"})).unresolvable, SizeIs(1));
}

TEST_F(CachedFilterTest, ARemovedNodeIsUnknownAndItsReturnIsCheckedAfresh) {
  const Pod pod = MakePod("ml/p").Gpus(4);
  ASSERT_THAT(service_.Filter(pod, Names({"n1"})).passed, ElementsAre("n1"));
  ASSERT_TRUE(service_.RemoveNode("n1"));
  EXPECT_THAT(service_.Filter(pod, Names({"n1"})).failed,
              ElementsAre(Pair("n1", kUnknownNodeReason)));
  service_.UpsertNodes({MakeNode("n1").Gpus(2)});
  EXPECT_THAT(service_.Filter(pod, Names({"n1"})).unresolvable,
              ElementsAre(Pair("n1", HasSubstr("node has 2"))));
}

TEST_F(CachedFilterTest, PodsThatDifferOnlyInTolerationsAreNotConfused) {
  service_.UpsertNodes(
      {MakeNode("tainted").Gpus(8).Taint("gpu", "true", "NoSchedule")});
  const Pod plain = MakePod("ml/plain").Gpus(1);
  const Pod tolerant =
      MakePod("ml/tolerant").Gpus(1).Toleration("gpu", "Exists", "", "");
  for (int round = 0; round < 2; ++round) {
    EXPECT_THAT(service_.Filter(plain, Names({"tainted"})).unresolvable,
                SizeIs(1));
    EXPECT_THAT(service_.Filter(tolerant, Names({"tainted"})).passed,
                ElementsAre("tainted"));
  }
}

TEST(CachedPrioritize, ScoresFollowBindsAndCompletions) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8), MakeNode("n2").Gpus(8)});
  const Pod pod = MakePod("ml/p").Gpus(1);
  const std::vector<std::string> names = Names({"n1", "n2"});
  const std::vector<HostScore> idle = service.Prioritize(pod, names);
  const Pod other = MakePod("ml/other").Gpus(4);
  ASSERT_THAT(service.Filter(other, Names({"n1"})).passed, SizeIs(1));
  const BindOutcome bound = service.Bind(BindOf(other, "n1"));
  ASSERT_EQ(bound.error, "");
  const std::vector<HostScore> busy = service.Prioritize(pod, names);
  // A service that never scored anything, holding the same pod.
  ExtenderService fresh;
  fresh.UpsertNodes({MakeNode("n1").Gpus(8), MakeNode("n2").Gpus(8)});
  EXPECT_THAT(fresh.AddRunningPods({Running(
                  "ml/other", "n1", FormatGpuIds(bound.assignment.gpu_ids))}),
              IsEmpty());
  EXPECT_EQ(busy, fresh.Prioritize(pod, names));
  EXPECT_NE(busy, idle);  // packing prefers the busy node now
  ASSERT_TRUE(service.RemovePod(other.meta.uid));
  EXPECT_EQ(service.Prioritize(pod, names), idle);
}

// What Prioritize must answer, computed without any memo.
std::vector<HostScore> UncachedScores(const ExtenderService& service,
                                      const Pod& pod,
                                      const std::vector<std::string>& names) {
  const PodView view = PodView::Of(pod);
  std::vector<HostScore> scores;
  service.Read([&](const ClusterModel& model) {
    for (const std::string& name : names) {
      const NodeState& node = *model.FindNode(name);
      NodeFit fit = FitPodOnNode(view, node);
      const int combined = fit.verdict.fits()
                               ? service.weights().Combined(
                                     ScoreInput{view, node, fit.assignment})
                               : 0;
      scores.push_back(
          HostScore{name, fit.verdict.fits() ? (combined + 5) / 10 : 0});
    }
  });
  return scores;
}

TEST(CachedPrioritize, ScoresFollowTheLearnedWorkloadShapes) {
  ExtenderService service;
  service.UpsertNodes(
      {MakeNode("n1").Gpus(8), MakeNode("n2").Gpus(4), MakeNode("n3").Gpus(2)});
  EXPECT_THAT(service.AddRunningPods({Running("ml/r", "n1", "0,1,2")}),
              IsEmpty());
  const std::vector<std::string> names = Names({"n1", "n2", "n3"});
  const Pod pod = MakePod("ml/p").Gpus(2);
  EXPECT_EQ(service.Prioritize(pod, names),
            UncachedScores(service, pod, names));
  const uint64_t version = service.weights().workload().version();
  // Filter calls teach the workload model; enough of one shape changes it.
  for (int i = 0; i < 500 && service.weights().workload().version() == version;
       ++i) {
    service.Filter(MakePod("ml/seven-" + std::to_string(i)).Gpus(7), names);
  }
  ASSERT_NE(service.weights().workload().version(), version);
  EXPECT_EQ(service.Prioritize(pod, names),
            UncachedScores(service, pod, names));
}

// Binds and completions in a seeded random order: after every step the
// cached filter says exactly what an uncached check of every node says.
TEST(CachedFilter, AgreesWithAFreshCheckThroughBindsAndCompletions) {
  ExtenderService service;
  std::vector<std::string> names;
  for (int i = 0; i < 6; ++i) {
    names.push_back("n" + std::to_string(i));
    service.UpsertNodes({MakeNode(names.back()).Gpus(4)});
  }
  std::mt19937 random(7);
  std::vector<Pod> bound;
  for (int step = 0; step < 200; ++step) {
    const int gpus = 1 + static_cast<int>(random() % 4);
    const Pod pod = MakePod("ml/p" + std::to_string(step)).Gpus(gpus);
    const FilterOutcome outcome = service.Filter(pod, names);
    const PodView view = PodView::Of(pod);
    service.Read([&](const ClusterModel& model) {
      std::vector<std::string> passed;
      for (const std::string& name : names) {
        if (FitPodOnNode(view, *model.FindNode(name)).verdict.fits()) {
          passed.push_back(name);
        }
      }
      EXPECT_EQ(outcome.passed, passed) << "step " << step;
    });
    if (!outcome.passed.empty() && random() % 3 != 0) {
      const std::string& node =
          outcome.passed[random() % outcome.passed.size()];
      ASSERT_EQ(service.Bind(BindOf(pod, node)).error, "");
      bound.push_back(pod);
    } else if (!bound.empty()) {
      const size_t victim = random() % bound.size();
      ASSERT_TRUE(service.RemovePod(bound[victim].meta.uid));
      bound.erase(bound.begin() + victim);
    }
  }
}

}  // namespace
}  // namespace gpusched
