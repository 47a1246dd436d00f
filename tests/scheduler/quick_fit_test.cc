// CheckPodOnNode (with and without the per-request memo) must give exactly
// FitPodOnNode's verdict and reason: the quick paths only skip work, never
// change an answer. Every pod x node pair of a varied table is compared,
// with the nodes also partly used.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "scheduler/cluster_model.h"
#include "scheduler/node_fit.h"
#include "scheduler/pod_view.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::Req;
using testing::TwoIslandTopology;

std::vector<Node> Nodes() {
  return {
      MakeNode("dgx")
          .Gpus(8)
          .Product("NVIDIA-H100-80GB-HBM3")
          .Cpu("224")
          .Memory("2Ti")
          .Pods(110),
      MakeNode("dgx-sick").Gpus(8).UnhealthyGpus(3).Cpu("224").Memory("2Ti"),
      MakeNode("a100-mig")
          .Gpus(4)
          .Mig("nvidia.com/mig-1g.5gb", 8)
          .Mig("nvidia.com/mig-3g.20gb", 2)
          .Cpu("256")
          .Memory("1Ti"),
      MakeNode("a100-reconfig")
          .Gpus(4)
          .Mig("nvidia.com/mig-1g.5gb", 8)
          .MigConfigState("pending")
          .Cpu("256")
          .Memory("1Ti"),
      MakeNode("l4-shared").Gpus(4).Replicas(4).Cpu("64").Memory("512Gi"),
      MakeNode("t4")
          .Gpus(2)
          .Product("Tesla-T4")
          .Cpu("48")
          .Memory("192Gi")
          .Pods(3),
      MakeNode("tiny").Gpus(8).Cpu("4").Memory("8Gi"),
      MakeNode("cordoned").Gpus(8).Cpu("224").Memory("2Ti").Unschedulable(),
      MakeNode("tainted").Gpus(8).Cpu("224").Memory("2Ti").Taint(
          "dedicated", "infer", "NoSchedule"),
      MakeNode("soft-taint")
          .Gpus(8)
          .Cpu("224")
          .Memory("2Ti")
          .Taint("dedicated", "infer", "PreferNoSchedule"),
      MakeNode("labelled")
          .Gpus(8)
          .Cpu("224")
          .Memory("2Ti")
          .Label("pool", "train"),
      MakeNode("islands").Gpus(8).Cpu("224").Memory("2Ti").Topology(
          TwoIslandTopology()),
      MakeNode("storage").Gpus(8).Cpu("224").Memory("2Ti").Resource(
          "ephemeral-storage", "100Gi"),
      MakeNode("no-gpu").Cpu("64").Memory("256Gi"),
  };
}

std::vector<Pod> Pods() {
  return {
      MakePod("t/one").Gpus(1).Cpu("8").Memory("64Gi").Build(),
      MakePod("t/four").Gpus(4).Cpu("8").Memory("64Gi").Build(),
      MakePod("t/eight").Gpus(8).Cpu("8").Memory("64Gi").Build(),
      MakePod("t/big-cpu").Gpus(1).Cpu("100").Memory("64Gi").Build(),
      MakePod("t/cpu-only").Cpu("1").Memory("1Gi").Build(),
      MakePod("t/mig").Mig("nvidia.com/mig-1g.5gb", 1).Build(),
      MakePod("t/mig-many").Mig("nvidia.com/mig-3g.20gb", 3).Build(),
      MakePod("t/share").Milli(250).Build(),
      MakePod("t/nvlink").Gpus(4).RequireNvLink().Build(),
      MakePod("t/selector").Gpus(1).NodeSelector("pool", "train").Build(),
      MakePod("t/affinity")
          .Gpus(1)
          .Affinity({Req("pool", "In", {"train"})})
          .Build(),
      MakePod("t/tolerant")
          .Gpus(1)
          .Toleration("dedicated", "Equal", "infer", "NoSchedule")
          .Build(),
      MakePod("t/storage").Gpus(1).Request("ephemeral-storage", "10Gi").Build(),
      MakePod("t/bad").Gpus(1).Annotation(kGpuMilliAnnotation, "lots").Build(),
  };
}

// The model with every node, half of them partly used.
ClusterModel Model() {
  ClusterModel model;
  for (const Node& node : Nodes()) model.UpsertNode(node);
  int i = 0;
  for (const char* node : {"dgx", "a100-mig", "l4-shared", "t4", "islands",
                           "labelled", "dgx-sick"}) {
    ++i;
    Pod filler = MakePod("fill/p" + std::to_string(i - 1))
                     .Gpus(i % 3 + 1)
                     .Cpu("2")
                     .OnNode(node)
                     .Phase(PodPhase::kRunning)
                     .Build();
    (void)model.AddRunningPod(filler);
  }
  (void)model.AddRunningPod(MakePod("fill/mig")
                                .Mig("nvidia.com/mig-3g.20gb", 1)
                                .OnNode("a100-mig")
                                .Phase(PodPhase::kRunning)
                                .Build());
  return model;
}

TEST(QuickFitTest, CheckPodOnNodeGivesFitPodOnNodesVerdictForEveryPair) {
  const ClusterModel model = Model();
  for (const Pod& pod : Pods()) {
    const PodView view = PodView::Of(pod);
    GpuVerdictMemo memo;
    for (const NodeState* node : model.SortedNodes()) {
      SCOPED_TRACE(pod.Key() + " on " + node->name());
      const FitVerdict expected = FitPodOnNode(view, *node).verdict;
      const FitVerdict quick = CheckPodOnNode(view, *node);
      const FitVerdict memoised = CheckPodOnNode(view, *node, memo);
      EXPECT_EQ(quick.code(), expected.code());
      EXPECT_EQ(quick.reason(), expected.reason());
      EXPECT_EQ(memoised.code(), expected.code());
      EXPECT_EQ(memoised.reason(), expected.reason());
    }
  }
}

TEST(QuickFitTest, MemoKeepsReasonsOfNodesWithDifferentFreeGpus) {
  ClusterModel model;
  model.UpsertNode(MakeNode("a").Gpus(8).Cpu("64").Memory("256Gi"));
  model.UpsertNode(MakeNode("b").Gpus(8).Cpu("64").Memory("256Gi"));
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("x/a").Gpus(6).OnNode("a").Build()).ok());
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("x/b").Gpus(7).OnNode("b").Build()).ok());
  const Pod pod = MakePod("t/four").Gpus(4).Build();
  const PodView view = PodView::Of(pod);
  GpuVerdictMemo memo;
  const FitVerdict a = CheckPodOnNode(view, *model.FindNode("a"), memo);
  const FitVerdict b = CheckPodOnNode(view, *model.FindNode("b"), memo);
  // a: 8 - 6 = 2 free; b: 8 - 7 = 1 free: two keys, two reasons.
  EXPECT_EQ(a.reason(),
            FitPodOnNode(view, *model.FindNode("a")).verdict.reason());
  EXPECT_EQ(b.reason(),
            FitPodOnNode(view, *model.FindNode("b")).verdict.reason());
  EXPECT_NE(a.reason(), b.reason());
  EXPECT_EQ(memo.verdicts.size(), 2u);
}

TEST(QuickFitTest, QuickFactsFollowPodsAddedAndRemoved) {
  ClusterModel model;
  model.UpsertNode(MakeNode("n").Gpus(2).Cpu("10").Memory("10Gi"));
  ASSERT_TRUE(model
                  .AddRunningPod(MakePod("x/p")
                                     .Uid("u1")
                                     .Cpu("4")
                                     .Memory("1Gi")
                                     .OnNode("n")
                                     .Build())
                  .ok());
  EXPECT_EQ(model.FindNode("n")->quick().cpu_requested, 4000);
  EXPECT_EQ(model.FindNode("n")->quick().cpu_allocatable, 10000);
  ASSERT_TRUE(model.RemovePod("u1"));
  EXPECT_EQ(model.FindNode("n")->quick().cpu_requested, 0);
}

}  // namespace
}  // namespace gpusched
