#include "scheduler/extender_service.h"

#include <atomic>
#include <latch>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::BindOf;
using ::gpusched::testing::kH100;
using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::gpusched::testing::TwoIslandTopology;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;

std::vector<std::string> Names(std::initializer_list<const char*> names) {
  return {names.begin(), names.end()};
}

// A running pod holding `ids` (whole GPUs) on `node`.
Pod Running(std::string key, std::string node, std::string ids,
            int32_t priority = 0) {
  const int count =
      static_cast<int>(std::count(ids.begin(), ids.end(), ',')) + 1;
  return MakePod(key)
      .Gpus(count)
      .Priority(priority)
      .OnNode(std::move(node))
      .Annotation(kGpuIdsAnnotation, std::move(ids));
}

void AddRunning(ExtenderService& service, std::vector<Pod> pods) {
  EXPECT_THAT(service.AddRunningPods(pods), IsEmpty());
}

// Whole free GPUs of `node`, read under the service's lock.
int64_t FreeGpus(const ExtenderService& service, std::string_view node) {
  return service.Read([&](const ClusterModel& model) {
    return model.FindNode(node)->gpus().free_milli() / kMilliPerGpu;
  });
}

class ExtenderServiceTest : public ::testing::Test {
 protected:
  ExtenderServiceTest() {
    EXPECT_THAT(service_.UpsertNodes({MakeNode("n1").Gpus(8).Product(kH100),
                                      MakeNode("n2").Gpus(8).Product(kH100)}),
                IsEmpty());
  }
  ExtenderService service_;
};

TEST(Filter, SortsNodesIntoPassedFailedAndUnresolvableInTheAskedOrder) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("idle").Gpus(8), MakeNode("full").Gpus(2),
                       MakeNode("cpu-only")});
  AddRunning(service, {Running("ml/a", "full", "0,1")});
  const FilterOutcome outcome = service.Filter(
      MakePod("ml/p").Gpus(1), Names({"ghost", "full", "cpu-only", "idle"}));
  EXPECT_THAT(outcome.passed, ElementsAre("idle"));
  // An unknown node may be a watch event away: retryable.
  EXPECT_THAT(outcome.failed,
              ElementsAre(Pair("ghost", "node not known to gpusched"),
                          Pair("full", "needs 1 nvidia.com/gpu; 0 free")));
  EXPECT_THAT(
      outcome.unresolvable,
      ElementsAre(Pair("cpu-only", "needs 1 nvidia.com/gpu; node has none")));
}

TEST(Prioritize, ScoresFittingNodesZeroToTenAndTheRestZero) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("busy").Gpus(8), MakeNode("idle").Gpus(8),
                       MakeNode("full").Gpus(1)});
  AddRunning(service, {Running("ml/a", "busy", "0,1,2,3"),
                       Running("ml/b", "full", "0")});
  const std::vector<HostScore> scores = service.Prioritize(
      MakePod("ml/p").Gpus(1), Names({"busy", "idle", "full", "ghost"}));
  // Default weights binpack 1, topology 2, fragmentation 3; one GPU:
  //  busy: binpack 62, topology 100, fragmentation 45 (8-GPU shape: 400 ->
  //        600 fragment): (62 + 200 + 135) / 6 = 66 -> 7 of 10;
  //  idle: binpack 12, topology 100, fragmentation 33 (0 -> 700):
  //        (12 + 200 + 99) / 6 = 51 -> 5 of 10.
  EXPECT_THAT(scores, ElementsAre(HostScore{"busy", 7}, HostScore{"idle", 5},
                                  HostScore{"full", 0}, HostScore{"ghost", 0}));
}

TEST(Prioritize, GivesZeroEverywhereToAMalformedPod) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8).Replicas(2)});
  const std::vector<HostScore> scores = service.Prioritize(
      MakePod("ml/p").Milli(0), Names({"n1"}));  // gpu-milli=0 is invalid
  EXPECT_THAT(scores, ElementsAre(HostScore{"n1", 0}));
}

TEST_F(ExtenderServiceTest, BindOfAPodNeverFilteredIsAnError) {
  const BindOutcome outcome = service_.Bind({.pod_name = "x",
                                             .pod_namespace = "ml",
                                             .pod_uid = "nope",
                                             .node = "n1"});
  EXPECT_EQ(outcome.error,
            "pod ml/x (uid nope) is unknown to gpusched: it was never sent to "
            "filter");
}

TEST_F(ExtenderServiceTest, BindRecordsTheGpusAndTheNextFilterSeesLess) {
  const Pod pod = MakePod("ml/a").Gpus(1);
  ASSERT_THAT(service_.Filter(pod, Names({"n1"})).passed, ElementsAre("n1"));
  const BindOutcome outcome = service_.Bind(BindOf(pod, "n1"));
  ASSERT_EQ(outcome.error, "");
  EXPECT_FALSE(outcome.already_bound);
  ASSERT_EQ(outcome.assignment.gpu_ids.size(), 1u);
  service_.Read([&](const ClusterModel& model) {
    const PlacedPod* placed = model.FindPodByUid(pod.meta.uid);
    ASSERT_NE(placed, nullptr);
    EXPECT_EQ(placed->node, "n1");
    EXPECT_EQ(model.FindNode("n1")->FindPod("ml/a")->gpus, outcome.assignment);
  });
  const FilterOutcome next =
      service_.Filter(MakePod("ml/big").Gpus(8), Names({"n1"}));
  ASSERT_THAT(next.failed, ::testing::SizeIs(1));
  EXPECT_THAT(next.failed[0].second,
              HasSubstr("needs 8 nvidia.com/gpu; 7 free"));  // 8 - 1
}

TEST_F(ExtenderServiceTest, BindTwiceToTheSameNodeSucceedsAndRecordsOnce) {
  const Pod pod = MakePod("ml/a").Gpus(2);
  service_.Filter(pod, Names({"n1"}));
  const BindOutcome first = service_.Bind(BindOf(pod, "n1"));
  const BindOutcome second = service_.Bind(BindOf(pod, "n1"));
  EXPECT_EQ(first.error, "");
  EXPECT_EQ(second.error, "");
  EXPECT_TRUE(second.already_bound);
  EXPECT_EQ(second.assignment, first.assignment);
  EXPECT_EQ(service_.Read([](const ClusterModel& m) { return m.pod_count(); }),
            1u);
  EXPECT_EQ(FreeGpus(service_, "n1"), 6);  // 8 - 2, taken once
}

TEST_F(ExtenderServiceTest, BindToASecondNodeIsRefused) {
  const Pod pod = MakePod("ml/a").Uid("u1").Gpus(1);
  service_.Filter(pod, Names({"n1", "n2"}));
  ASSERT_EQ(service_.Bind(BindOf(pod, "n1")).error, "");
  EXPECT_EQ(service_.Bind(BindOf(pod, "n2")).error,
            "pod ml/a (uid u1) is already bound to node n1; refusing to bind "
            "it to n2");
  EXPECT_EQ(FreeGpus(service_, "n2"), 8);
}

TEST_F(ExtenderServiceTest, BindToAnUnknownNodeIsAnError) {
  const Pod pod = MakePod("ml/a").Gpus(1);
  service_.Filter(pod, Names({"n1"}));
  EXPECT_EQ(service_.Bind(BindOf(pod, "ghost")).error,
            "cannot bind ml/a to ghost: node not known to gpusched");
}

TEST_F(ExtenderServiceTest, BindRechecksTheFit) {
  const Pod pod = MakePod("ml/a").Gpus(1);
  service_.Filter(pod, Names({"n1"}));
  AddRunning(service_, {Running("ml/hog", "n1", "0,1,2,3,4,5,6,7")});
  EXPECT_EQ(service_.Bind(BindOf(pod, "n1")).error,
            "cannot bind ml/a to n1: needs 1 nvidia.com/gpu; 0 free");
}

TEST_F(ExtenderServiceTest, SuccessfulBindForgetsThePendingPod) {
  const Pod pod = MakePod("ml/a").Gpus(1);
  service_.Filter(pod, Names({"n1"}));
  ASSERT_EQ(service_.Bind(BindOf(pod, "n1")).error, "");
  ASSERT_TRUE(service_.RemovePod(pod.meta.uid));
  EXPECT_THAT(service_.Bind(BindOf(pod, "n1")).error,
              HasSubstr("never sent to filter"));
}

class FakeSink : public BindSink {
 public:
  absl::Status Bind(const Pod& pod, const std::string& node,
                    const GpuAssignment& assignment) override {
    calls.push_back(absl::StrCat(pod.Key(), "->", node, ":",
                                 FormatGpuIds(assignment.gpu_ids)));
    return result;
  }
  absl::Status result = absl::OkStatus();
  std::vector<std::string> calls;
};

TEST(BindSinkTest, ReceivesTheChosenGpus) {
  FakeSink sink;
  ExtenderService service({.bind_sink = &sink});
  service.UpsertNodes({MakeNode("n1").Gpus(1)});
  const Pod pod = MakePod("ml/a").Gpus(1);
  service.Filter(pod, Names({"n1"}));
  EXPECT_EQ(service.Bind(BindOf(pod, "n1")).error, "");
  EXPECT_THAT(sink.calls, ElementsAre("ml/a->n1:0"));
}

TEST(BindSinkTest, RefusalReleasesTheGpusAndAllowsARetry) {
  FakeSink sink;
  sink.result = absl::PermissionDeniedError("forbidden");
  ExtenderService service({.bind_sink = &sink});
  service.UpsertNodes({MakeNode("n1").Gpus(2)});
  const Pod pod = MakePod("ml/a").Gpus(2);
  service.Filter(pod, Names({"n1"}));
  EXPECT_EQ(service.Bind(BindOf(pod, "n1")).error,
            "binding ml/a to n1 failed: forbidden");
  EXPECT_EQ(FreeGpus(service, "n1"), 2);
  sink.result = absl::OkStatus();
  EXPECT_EQ(service.Bind(BindOf(pod, "n1")).error, "");
  EXPECT_EQ(FreeGpus(service, "n1"), 0);
}

TEST(BindRace, ThirtyTwoPodsForEightGpusGiveEightBindsAndNoSharedGpu) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(4), MakeNode("n2").Gpus(4)});
  const std::vector<std::string> nodes = Names({"n1", "n2"});
  constexpr int kThreads = 32;
  std::atomic<int> successes = 0;
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const Pod pod = MakePod(absl::StrCat("ml/p", i)).Gpus(1);
      start.arrive_and_wait();
      const FilterOutcome outcome = service.Filter(pod, nodes);
      for (const std::string& node : outcome.passed) {
        if (service.Bind(BindOf(pod, node)).error.empty()) {
          ++successes;
          break;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(successes.load(), 8);  // 2 nodes * 4 GPUs
  service.Read([](const ClusterModel& model) {
    EXPECT_EQ(model.pod_count(), 8u);
    for (const NodeState* node : model.SortedNodes()) {
      for (const GpuDevice& d : node->gpus().devices()) {
        EXPECT_EQ(d.free_milli, 0) << node->name() << " GPU " << d.index;
        EXPECT_THAT(d.holders, ::testing::SizeIs(1))
            << node->name() << " GPU " << d.index;
      }
    }
  });
}

TEST(BindRace, UpdatesScoringAndBindsTogetherDoNotCrash) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8), MakeNode("n2").Gpus(8)});
  const std::vector<std::string> nodes = Names({"n1", "n2"});
  constexpr int kRounds = 100;
  std::vector<std::thread> threads;
  for (int u = 0; u < 2; ++u) {
    threads.emplace_back([&, u] {
      for (int r = 0; r < kRounds; ++r) {
        const int gpus = r % 2 == 0 ? 8 : 4;  // devices vanish and come back
        service.UpsertNodes({MakeNode(absl::StrCat("n", u + 1))
                                 .Gpus(gpus)
                                 .ResourceVersion(absl::StrCat(r))});
      }
    });
  }
  for (int p = 0; p < 2; ++p) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        service.Prioritize(MakePod("ml/score").Gpus(2), nodes);
        service.CountGpus();
      }
    });
  }
  for (int b = 0; b < 3; ++b) {
    threads.emplace_back([&, b] {
      for (int r = 0; r < kRounds; ++r) {
        const Pod pod = MakePod(absl::StrCat("ml/b", b, "-", r)).Gpus(1);
        const FilterOutcome outcome = service.Filter(pod, nodes);
        if (!outcome.passed.empty()) {
          service.Bind(BindOf(pod, outcome.passed.front()));
        }
        if (r % 3 == 0) service.RemovePod(pod.meta.uid);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  service.Read([](const ClusterModel& model) {
    for (const NodeState* node : model.SortedNodes()) {
      for (const GpuDevice& d : node->gpus().devices()) {
        EXPECT_LE(d.holders.size(), 1u) << node->name() << " GPU " << d.index;
        EXPECT_EQ(d.free_milli, d.holders.empty() ? 1000 : 0);
      }
    }
  });
}

// Preempt: n1 and n2 are 8-GPU nodes; running pods are the victims.
TEST_F(ExtenderServiceTest,
       PreemptReprievesUnneededVictimsHighestPriorityFirst) {
  AddRunning(
      service_,
      {Running("ml/a", "n1", "0,1", 1), Running("ml/b", "n1", "2,3", 5),
       Running("ml/c", "n1", "4,5", 3), Running("ml/d", "n1", "6,7", 2)});
  const Pod preemptor = MakePod("ml/p").Gpus(2).Priority(100);
  const std::vector<PreemptionCandidate> kept = service_.Preempt(
      preemptor,
      {{.node = "n1",
        .victim_uids = {"uid-ml-a", "uid-ml-b", "uid-ml-c", "uid-ml-d"}}});
  // b, c and d go back in that order; a alone frees the 2 GPUs needed.
  EXPECT_THAT(kept, ElementsAre(PreemptionCandidate{
                        .node = "n1", .victim_uids = {"uid-ml-a"}}));
}

TEST_F(ExtenderServiceTest, PreemptKeepsVictimsThatAreNeeded) {
  AddRunning(
      service_,
      {Running("ml/a", "n1", "0,1", 1), Running("ml/b", "n1", "2,3", 5),
       Running("ml/c", "n1", "4,5", 3), Running("ml/d", "n1", "6,7", 2)});
  const Pod preemptor = MakePod("ml/p").Gpus(4).Priority(100);
  const std::vector<PreemptionCandidate> kept = service_.Preempt(
      preemptor,
      {{.node = "n1",
        .victim_uids = {"uid-ml-a", "uid-ml-b", "uid-ml-c", "uid-ml-d"}}});
  // b and c go back (4 GPUs stay free); with d too only 2 would be free.
  EXPECT_THAT(kept,
              ElementsAre(PreemptionCandidate{
                  .node = "n1", .victim_uids = {"uid-ml-a", "uid-ml-d"}}));
}

TEST_F(ExtenderServiceTest, PreemptKeepsAtLeastOneVictim) {
  AddRunning(service_, {Running("ml/a", "n1", "0,1", 1),
                        Running("ml/b", "n1", "2,3", 2)});
  // 4 GPUs are free already: no victim is needed, yet one stays.
  const std::vector<PreemptionCandidate> kept = service_.Preempt(
      MakePod("ml/p").Gpus(2),
      {{.node = "n1", .victim_uids = {"uid-ml-a", "uid-ml-b"}}});
  EXPECT_THAT(kept, ElementsAre(PreemptionCandidate{
                        .node = "n1", .victim_uids = {"uid-ml-a"}}));
}

TEST(Preempt, DropsNodesWhereTheVictimsDoNotFreeAFittingGpuSet) {
  ExtenderService service;
  std::vector<Node> nodes;
  for (const char* name : {"n1", "n2"}) {
    nodes.push_back(
        MakeNode(name).Gpus(8).Product(kH100).Topology(TwoIslandTopology()));
  }
  EXPECT_THAT(service.UpsertNodes(std::move(nodes)), IsEmpty());
  for (const char* node : {"n1", "n2"}) {
    AddRunning(service, {Running(absl::StrCat("ml/w-", node), node, "0,1"),
                         Running(absl::StrCat("ml/x-", node), node, "2,3"),
                         Running(absl::StrCat("ml/y-", node), node, "4,5"),
                         Running(absl::StrCat("ml/z-", node), node, "6,7")});
  }
  const Pod preemptor = MakePod("ml/p").Gpus(4).RequireNvLink();
  const std::vector<PreemptionCandidate> kept = service.Preempt(
      preemptor,
      {// 4 GPUs, but 0,1 and 4,5 lie on different NVLink islands.
       {.node = "n1", .victim_uids = {"uid-ml-w-n1", "uid-ml-y-n1"}},
       // 0-3: one island.
       {.node = "n2", .victim_uids = {"uid-ml-w-n2", "uid-ml-x-n2"}}});
  ASSERT_THAT(kept, ::testing::SizeIs(1));
  EXPECT_EQ(kept[0].node, "n2");
  EXPECT_THAT(kept[0].victim_uids, ElementsAre("uid-ml-w-n2", "uid-ml-x-n2"));
}

TEST_F(ExtenderServiceTest, PreemptDropsUnknownNodesAndEmptyCandidates) {
  AddRunning(service_, {Running("ml/a", "n1", "0,1,2,3,4,5,6,7")});
  const std::vector<PreemptionCandidate> kept = service_.Preempt(
      MakePod("ml/p").Gpus(1), {{.node = "ghost", .victim_uids = {"uid-ml-a"}},
                                {.node = "n1", .victim_uids = {}}});
  EXPECT_THAT(kept, IsEmpty());
}

TEST_F(ExtenderServiceTest, PreemptSortsTheOutputByNode) {
  AddRunning(service_, {Running("ml/a", "n1", "0,1,2,3,4,5,6,7"),
                        Running("ml/b", "n2", "0,1,2,3,4,5,6,7")});
  const std::vector<PreemptionCandidate> kept = service_.Preempt(
      MakePod("ml/p").Gpus(1), {{.node = "n2", .victim_uids = {"uid-ml-b"}},
                                {.node = "n1", .victim_uids = {"uid-ml-a"}}});
  ASSERT_THAT(kept, ::testing::SizeIs(2));
  EXPECT_EQ(kept[0].node, "n1");
  EXPECT_EQ(kept[1].node, "n2");
}

TEST(UpsertNodes, SkipsANodeWhoseResourceVersionIsUnchanged) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Label("zone", "a").ResourceVersion("7")});
  service.UpsertNodes({MakeNode("n1").Label("zone", "b").ResourceVersion("7")});
  auto zone = [&] {
    return service.Read([](const ClusterModel& model) {
      return model.FindNode("n1")->node().meta.labels.at("zone");
    });
  };
  EXPECT_EQ(zone(), "a");
  service.UpsertNodes({MakeNode("n1").Label("zone", "b").ResourceVersion("8")});
  EXPECT_EQ(zone(), "b");
}

TEST(UpsertNodes, WarnsAboutARejectedTopologyAnnotation) {
  ExtenderService service;
  const std::vector<std::string> warnings = service.UpsertNodes(
      {MakeNode("n1").Gpus(4).Product(kH100).Topology(TwoIslandTopology())});
  EXPECT_THAT(
      warnings,
      ElementsAre("node n1: topology default for NVIDIA-H100-80GB-HBM3 "
                  "(annotation gpusched.io/gpu-topology rejected: "
                  "describes 8 GPUs but the node offers 4 whole GPUs)"));
}

TEST(UpsertNodes, WarnsAboutPodsWhoseGpusVanished) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8)});
  AddRunning(service, {Running("ml/a", "n1", "6,7")});
  EXPECT_THAT(service.UpsertNodes({MakeNode("n1").Gpus(4)}),
              ElementsAre("node n1: GPUs vanished under pods ml/a"));
}

TEST(AddRunningPods, SkipsUnboundAndFinishedPodsAndWarnsAboutUnknownNodes) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8)});
  const std::vector<std::string> warnings = service.AddRunningPods(
      {MakePod("ml/pending").Gpus(1),
       MakePod("ml/done").Gpus(1).OnNode("n1").Phase(PodPhase::kSucceeded),
       MakePod("ml/lost").Gpus(1).OnNode("ghost"),
       MakePod("ml/ok").Gpus(1).OnNode("n1")});
  EXPECT_THAT(warnings,
              ElementsAre("pod ml/lost runs on node ghost, not known to "
                          "gpusched"));
  EXPECT_EQ(service.Read([](const ClusterModel& m) { return m.pod_count(); }),
            1u);
}

// A Node deleted and created again (a kubelet re-registering) brings no
// pod events: its running pods must come back with what they held.
TEST(RemoveNode, ANodeRegisteredAgainGetsItsPodsBack) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8)});
  AddRunning(service, {Running("ml/a", "n1", "0,1")});
  ASSERT_TRUE(service.RemoveNode("n1"));
  EXPECT_THAT(service.DetachedPodUids(), ElementsAre("uid-ml-a"));
  EXPECT_THAT(service.UpsertNodes({MakeNode("n1").Gpus(8)}), IsEmpty());
  EXPECT_EQ(FreeGpus(service, "n1"), 6);
  EXPECT_THAT(service.DetachedPodUids(), IsEmpty());
  const Pod six = MakePod("ml/six").Gpus(6);
  EXPECT_THAT(service.Filter(six, Names({"n1"})).passed, ElementsAre("n1"));
  EXPECT_EQ(service.Bind(BindOf(six, "n1")).assignment.gpu_ids,
            (std::vector<int>{2, 3, 4, 5, 6, 7}));
}

// A kubelet creates its Node, then reports the devices in its status.
TEST(RemoveNode, PodsComeBackOnceTheNodeOffersTheirDevicesAgain) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8)});
  AddRunning(service, {Running("ml/a", "n1", "6,7")});
  ASSERT_TRUE(service.RemoveNode("n1"));
  service.UpsertNodes({MakeNode("n1").Gpus(0)});
  EXPECT_THAT(service.DetachedPodUids(), ElementsAre("uid-ml-a"));
  service.UpsertNodes({MakeNode("n1").Gpus(8).ResourceVersion("2")});
  EXPECT_THAT(service.DetachedPodUids(), IsEmpty());
  EXPECT_EQ(FreeGpus(service, "n1"), 6);
}

TEST(RemoveNode, APodDeletedWhileItsNodeIsGoneStaysGone) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("n1").Gpus(8)});
  AddRunning(service, {Running("ml/a", "n1", "0,1")});
  ASSERT_TRUE(service.RemoveNode("n1"));
  EXPECT_TRUE(service.RemovePod("uid-ml-a"));
  service.UpsertNodes({MakeNode("n1").Gpus(8)});
  EXPECT_EQ(FreeGpus(service, "n1"), 8);
}

TEST(CountGpus, ClassifiesEveryDeviceAndMigInstance) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("whole").Gpus(4).UnhealthyGpus(1),
                       MakeNode("shared").Gpus(2).Replicas(4),
                       MakeNode("mig").Mig("nvidia.com/mig-1g.10gb", 7)});
  AddRunning(service,
             {Running("ml/a", "whole", "0"),
              MakePod("ml/s").Milli(250).OnNode("shared").Annotation(
                  kGpuIdsAnnotation, "0"),
              MakePod("ml/m").Mig("nvidia.com/mig-1g.10gb", 2).OnNode("mig")});
  const GpuCounts counts = service.CountGpus();
  EXPECT_EQ(counts.nodes, 3);
  EXPECT_EQ(counts.free, 3);  // whole: GPUs 1, 2; shared: GPU 1
  EXPECT_EQ(counts.used, 1);
  EXPECT_EQ(counts.shared, 1);
  EXPECT_EQ(counts.unhealthy, 1);
  EXPECT_EQ(counts.mig_used, 2);
  EXPECT_EQ(counts.mig_free, 5);  // 7 - 2
}

// A node joins with no devices yet, and a pod bound to it: kube-scheduler's
// informer already has the node's devices when it proposes that pod as a
// victim, gpusched's watch delivers them a moment later. The preempt verb
// waits for that change instead of dropping the node for good.
TEST(PreemptCatchingUp, WaitsForAFreshNodeToCatchUp) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("joining").Product(kH100)});
  std::jthread watch([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    Node with_devices = MakeNode("joining").Gpus(8).Product(kH100);
    with_devices.meta.resource_version = "2";
    service.UpsertNodes({with_devices});
  });
  const std::vector<PreemptionCandidate> kept = service.PreemptCatchingUp(
      MakePod("ml/p").Gpus(8),
      {{.node = "joining", .victim_uids = {"uid-ml-low"}}}, nullptr,
      /*fresh_ms=*/5000, std::chrono::milliseconds(10'000));
  EXPECT_THAT(kept, ElementsAre(PreemptionCandidate{
                        .node = "joining", .victim_uids = {"uid-ml-low"}}));
}

// Another node's change (a status heartbeat) arrives first: the verb goes
// on waiting for the dropped node's own change, instead of deciding again
// on the state that dropped it.
TEST(PreemptCatchingUp, AnotherNodesChangeDoesNotEndTheWait) {
  ExtenderService service;
  service.UpsertNodes({MakeNode("joining").Product(kH100),
                       MakeNode("other").Gpus(8).Product(kH100)});
  std::jthread watch([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    Node heartbeat = MakeNode("other").Gpus(8).Product(kH100);
    heartbeat.meta.resource_version = "2";
    service.UpsertNodes({heartbeat});
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    Node with_devices = MakeNode("joining").Gpus(8).Product(kH100);
    with_devices.meta.resource_version = "2";
    service.UpsertNodes({with_devices});
  });
  const std::vector<PreemptionCandidate> kept = service.PreemptCatchingUp(
      MakePod("ml/p").Gpus(8),
      {{.node = "joining", .victim_uids = {"uid-ml-low"}}}, nullptr,
      /*fresh_ms=*/5000, std::chrono::milliseconds(10'000));
  EXPECT_THAT(kept, ElementsAre(PreemptionCandidate{
                        .node = "joining", .victim_uids = {"uid-ml-low"}}));
}

// A node that has not changed lately is judged at once: no wait.
TEST_F(ExtenderServiceTest, PreemptCatchingUpDoesNotWaitOnASettledNode) {
  AddRunning(service_, {Running("ml/a", "n1", "0,1", 1),
                        Running("ml/b", "n1", "2,3,4,5,6,7", 9)});
  const auto began = std::chrono::steady_clock::now();
  const std::vector<PreemptionCandidate> kept = service_.PreemptCatchingUp(
      MakePod("ml/p").Gpus(8), {{.node = "n1", .victim_uids = {"uid-ml-a"}}},
      nullptr, /*fresh_ms=*/-1'000'000, std::chrono::milliseconds(60'000));
  EXPECT_THAT(kept, IsEmpty());
  EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(30));
}

}  // namespace
}  // namespace gpusched
