#include "scheduler/node_predicates.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/node_fit.h"
#include "scheduler/node_state.h"
#include "scheduler/pod_view.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::gpusched::testing::Req;
using Code = FitVerdict::Code;

// One predicate case: `reason` is the exact reason, empty when it fits.
struct Case {
  std::string_view name;
  Pod pod;
  Node node;
  Code want;
  std::string_view reason;
};

// Runs the standard predicates (and the GPU plan, a no-op for these pods).
FitVerdict Check(const Pod& pod, const NodeState& node) {
  return FitPodOnNode(PodView::Of(pod), node).verdict;
}

void RunCases(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const NodeState node(c.node);
    const FitVerdict verdict = Check(c.pod, node);
    EXPECT_EQ(verdict.code(), c.want) << verdict.reason();
    EXPECT_EQ(verdict.reason(), c.reason);
  }
}

TEST(NodeSelector, NeedsEveryLabelWithTheSameValue) {
  const Node node = MakeNode("n").Label("zone", "a").Label("disk", "ssd");
  RunCases({
      {"match", MakePod("p").NodeSelector("zone", "a"), node, Code::kFits, ""},
      {"all of them",
       MakePod("p").NodeSelector("zone", "a").NodeSelector("disk", "ssd"), node,
       Code::kFits, ""},
      {"other value", MakePod("p").NodeSelector("zone", "b"), node,
       Code::kInfeasible, "nodeSelector wants zone=b; node has zone=a"},
      {"missing label", MakePod("p").NodeSelector("gpu", "h100"), node,
       Code::kInfeasible, "nodeSelector wants gpu=h100; node has no label gpu"},
  });
}

TEST(NodeAffinity, OperatorsMatchAsKubernetesDefinesThem) {
  const Node node = MakeNode("node-a").Label("zone", "a").Label("cores", "16");
  RunCases({
      {"In", MakePod("p").Affinity({Req("zone", "In", {"a", "b"})}), node,
       Code::kFits, ""},
      {"In other", MakePod("p").Affinity({Req("zone", "In", {"b", "c"})}), node,
       Code::kInfeasible,
       "required node affinity not met (1 term): zone In [b,c]; node has "
       "zone=a"},
      {"In absent", MakePod("p").Affinity({Req("rack", "In", {"r1"})}), node,
       Code::kInfeasible,
       "required node affinity not met (1 term): rack In [r1]; node has no "
       "label rack"},
      {"NotIn other", MakePod("p").Affinity({Req("zone", "NotIn", {"b"})}),
       node, Code::kFits, ""},
      {"NotIn absent", MakePod("p").Affinity({Req("rack", "NotIn", {"r1"})}),
       node, Code::kFits, ""},
      {"NotIn same", MakePod("p").Affinity({Req("zone", "NotIn", {"a"})}), node,
       Code::kInfeasible,
       "required node affinity not met (1 term): zone NotIn [a]; node has "
       "zone=a"},
      {"Exists", MakePod("p").Affinity({Req("zone", "Exists")}), node,
       Code::kFits, ""},
      {"Exists absent", MakePod("p").Affinity({Req("rack", "Exists")}), node,
       Code::kInfeasible,
       "required node affinity not met (1 term): rack Exists; node has no "
       "label rack"},
      {"DoesNotExist", MakePod("p").Affinity({Req("rack", "DoesNotExist")}),
       node, Code::kFits, ""},
      {"DoesNotExist present",
       MakePod("p").Affinity({Req("zone", "DoesNotExist")}), node,
       Code::kInfeasible,
       "required node affinity not met (1 term): zone DoesNotExist; node has "
       "zone=a"},
      {"Gt", MakePod("p").Affinity({Req("cores", "Gt", {"8"})}), node,
       Code::kFits, ""},  // 16 > 8
      {"Gt equal", MakePod("p").Affinity({Req("cores", "Gt", {"16"})}), node,
       Code::kInfeasible,
       "required node affinity not met (1 term): cores Gt [16]; node has "
       "cores=16"},  // 16 > 16 is false
      {"Gt not a number", MakePod("p").Affinity({Req("zone", "Gt", {"1"})}),
       node, Code::kInfeasible,
       "required node affinity not met (1 term): zone Gt [1]; node has "
       "zone=a"},
      {"Lt", MakePod("p").Affinity({Req("cores", "Lt", {"32"})}), node,
       Code::kFits, ""},  // 16 < 32
      {"Lt larger", MakePod("p").Affinity({Req("cores", "Lt", {"4"})}), node,
       Code::kInfeasible,
       "required node affinity not met (1 term): cores Lt [4]; node has "
       "cores=16"},
      {"unknown operator", MakePod("p").Affinity({Req("zone", "Like", {"a"})}),
       node, Code::kInfeasible,
       "required node affinity not met (1 term): zone Like [a]; node has "
       "zone=a"},
  });
}

TEST(NodeAffinity, MatchFieldsComparesTheNodeName) {
  const Node node = MakeNode("node-a");
  RunCases({
      {"same name",
       MakePod("p").Affinity({}, {Req("metadata.name", "In", {"node-a"})}),
       node, Code::kFits, ""},
      {"other name",
       MakePod("p").Affinity({}, {Req("metadata.name", "In", {"node-b"})}),
       node, Code::kInfeasible,
       "required node affinity not met (1 term): metadata.name In [node-b]; "
       "node is node-a"},
  });
}

TEST(NodeAffinity, TermsAreOredAndRequirementsAnded) {
  const Node node = MakeNode("n").Label("zone", "a").Label("disk", "hdd");
  RunCases({
      {"second term matches",
       MakePod("p")
           .Affinity({Req("zone", "In", {"b"})})
           .Affinity({Req("zone", "In", {"a"})}),
       node, Code::kFits, ""},
      {"one requirement of the term fails",
       MakePod("p").Affinity(
           {Req("zone", "In", {"a"}), Req("disk", "In", {"ssd"})}),
       node, Code::kInfeasible,
       "required node affinity not met (1 term): disk In [ssd]; node has "
       "disk=hdd"},
      {"no term matches: the first term's failure is reported",
       MakePod("p")
           .Affinity({Req("zone", "In", {"b"})})
           .Affinity({Req("disk", "In", {"ssd"})}),
       node, Code::kInfeasible,
       "required node affinity not met (2 terms): zone In [b]; node has "
       "zone=a"},
  });
}

TEST(Taints, OnlyNoScheduleAndNoExecuteKeepPodsAway) {
  RunCases({
      {"NoSchedule", MakePod("p"),
       MakeNode("n").Taint("gpu", "true", "NoSchedule"), Code::kInfeasible,
       "node has taint gpu=true:NoSchedule that the pod does not tolerate"},
      {"NoExecute", MakePod("p"), MakeNode("n").Taint("maint", "", "NoExecute"),
       Code::kInfeasible,
       "node has taint maint:NoExecute that the pod does not tolerate"},
      {"PreferNoSchedule is only a preference", MakePod("p"),
       MakeNode("n").Taint("gpu", "true", "PreferNoSchedule"), Code::kFits, ""},
  });
}

TEST(Taints, TolerationsMatchByKeyOperatorValueAndEffect) {
  const Node node = MakeNode("n").Taint("gpu", "true", "NoSchedule");
  const std::string_view kRejected =
      "node has taint gpu=true:NoSchedule that the pod does not tolerate";
  RunCases({
      {"Equal", MakePod("p").Toleration("gpu", "Equal", "true", "NoSchedule"),
       node, Code::kFits, ""},
      {"operator defaults to Equal",
       MakePod("p").Toleration("gpu", "", "true", "NoSchedule"), node,
       Code::kFits, ""},
      {"Equal other value",
       MakePod("p").Toleration("gpu", "Equal", "false", "NoSchedule"), node,
       Code::kInfeasible, kRejected},
      {"Equal other key",
       MakePod("p").Toleration("tpu", "Equal", "true", "NoSchedule"), node,
       Code::kInfeasible, kRejected},
      {"Exists ignores the value",
       MakePod("p").Toleration("gpu", "Exists", "", "NoSchedule"), node,
       Code::kFits, ""},
      {"Exists with empty key tolerates everything",
       MakePod("p").Toleration("", "Exists", "", ""), node, Code::kFits, ""},
      {"empty effect matches every effect",
       MakePod("p").Toleration("gpu", "Equal", "true", ""), node, Code::kFits,
       ""},
      {"other effect",
       MakePod("p").Toleration("gpu", "Equal", "true", "NoExecute"), node,
       Code::kInfeasible, kRejected},
  });
}

TEST(Taints, EveryTaintNeedsItsOwnToleration) {
  const Node node = MakeNode("n")
                        .Taint("gpu", "true", "NoSchedule")
                        .Taint("team", "ml", "NoExecute");
  RunCases({
      {"one of two", MakePod("p").Toleration("gpu", "Exists", "", ""), node,
       Code::kInfeasible,
       "node has taint team=ml:NoExecute that the pod does not tolerate"},
      {"both",
       MakePod("p")
           .Toleration("gpu", "Exists", "", "")
           .Toleration("team", "Equal", "ml", "NoExecute"),
       node, Code::kFits, ""},
  });
}

TEST(Unschedulable, CordonedNodeIsInfeasibleUnlessTolerated) {
  const Node cordoned = MakeNode("n").Unschedulable();
  RunCases({
      {"cordoned", MakePod("p"), cordoned, Code::kInfeasible,
       "node is cordoned (spec.unschedulable)"},
      {"tolerates the unschedulable taint",
       MakePod("p").Toleration("node.kubernetes.io/unschedulable", "Exists", "",
                               "NoSchedule"),
       cordoned, Code::kFits, ""},
      {"tolerates everything", MakePod("p").Toleration("", "Exists", "", ""),
       cordoned, Code::kFits, ""},
  });
}

TEST(Resources, MoreThanAllocatableIsInfeasible) {
  const Node node = MakeNode("n").Cpu("4").Memory("16Gi");
  RunCases({
      {"cpu", MakePod("p").Cpu("8"), node, Code::kInfeasible,
       "needs 8 cpu; node has 4 allocatable"},
      {"memory", MakePod("p").Memory("32Gi"), node, Code::kInfeasible,
       "needs 32Gi memory; node has 16Gi allocatable"},
      {"resource the node lacks", MakePod("p").Request("example.com/fpga", "1"),
       node, Code::kInfeasible,
       "needs 1 example.com/fpga; node has 0 allocatable"},
      {"exactly allocatable", MakePod("p").Cpu("4").Memory("16Gi"), node,
       Code::kFits, ""},
  });
}

TEST(Resources, MoreThanFreeIsUnavailable) {
  NodeState node(MakeNode("n").Cpu("8").Memory("64Gi"));
  ASSERT_TRUE(node.AddPod(PodAllocation{
                              .pod_key = "default/running",
                              .uid = "u1",
                              .requests = {{"cpu", 6000},
                                           {"memory", int64_t{16} << 30}},
                          })
                  .ok());
  FitVerdict cpu = Check(MakePod("p").Cpu("4"), node);
  EXPECT_EQ(cpu.code(), Code::kUnavailable);
  EXPECT_EQ(cpu.reason(), "needs 4 cpu; 2 free of 8");  // 8 - 6 = 2
  FitVerdict memory = Check(MakePod("p").Memory("56Gi"), node);
  EXPECT_EQ(memory.code(), Code::kUnavailable);
  EXPECT_EQ(memory.reason(),
            "needs 56Gi memory; 48Gi free of 64Gi");  // 64 - 16 = 48
  EXPECT_TRUE(Check(MakePod("p").Cpu("2").Memory("48Gi"), node).fits());
}

TEST(Resources, FullPodCountIsUnavailable) {
  NodeState node(MakeNode("n").Pods(2));
  ASSERT_TRUE(node.AddPod({.pod_key = "default/a", .uid = "a"}).ok());
  EXPECT_TRUE(Check(MakePod("p"), node).fits());  // 1 + 1 <= 2
  ASSERT_TRUE(node.AddPod({.pod_key = "default/b", .uid = "b"}).ok());
  FitVerdict verdict = Check(MakePod("p"), node);  // 2 + 1 > 2
  EXPECT_EQ(verdict.code(), Code::kUnavailable);
  EXPECT_EQ(verdict.reason(), "node already runs 2 pods, its maximum");
}

TEST(Resources, GpuResourcesAreLeftToTheGpuCheck) {
  const NodeState node(MakeNode("n").Gpus(8));
  const PodView view =
      PodView::Of(MakePod("p").Gpus(4).Mig("nvidia.com/mig-1g.10gb", 1));
  EXPECT_TRUE(CheckResources(view, node).fits());
}

TEST(NodeFit, MalformedPodIsInfeasibleEverywhere) {
  const NodeState node(MakeNode("n").Gpus(8).Replicas(4));
  const FitVerdict verdict =
      Check(MakePod("p").Gpus(1).Annotation(kGpuMilliAnnotation, "1500"), node);
  EXPECT_EQ(verdict.code(), Code::kInfeasible);
  EXPECT_EQ(verdict.reason(),
            "annotation gpusched.io/gpu-milli=\"1500\" must be an integer "
            "from 1 to 999");
}

TEST(NodeFit, PredicatesRunBeforeTheGpuCheckAndTheFirstFailureWins) {
  const NodeState node(
      MakeNode("n").Unschedulable().Taint("gpu", "", "NoSchedule"));
  const FitVerdict verdict = Check(MakePod("p").Gpus(4), node);
  EXPECT_EQ(verdict.reason(), "node is cordoned (spec.unschedulable)");
}

TEST(NodePredicates, RunInTheDocumentedOrder) {
  std::vector<std::string_view> names;
  for (const NodePredicate& p : NodePredicates()) names.push_back(p.name);
  EXPECT_THAT(names,
              ::testing::ElementsAre("NodeUnschedulable", "NodeSelector",
                                     "NodeAffinity", "TaintToleration",
                                     "NodeResourcesFit", "DynamicResources"));
}

}  // namespace
}  // namespace gpusched
