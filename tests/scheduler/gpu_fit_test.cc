#include "scheduler/gpu_fit.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/gpu_set_allocator.h"
#include "scheduler/pod_view.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::kH100;
using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::gpusched::testing::TwoIslandTopology;
using ::testing::ElementsAre;
using ::testing::IsSubsetOf;
using ::testing::SizeIs;
using Code = FitVerdict::Code;

GpuPlan Plan(const Pod& pod, const GpuInventory& inventory) {
  const PodView view = PodView::Of(pod);
  EXPECT_EQ(view.invalid_reason, "");
  return PlanGpus(view.gpu, inventory);
}

// Takes `milli` on each of `ids` for a pod named `holder`.
void Use(GpuInventory& inventory, std::vector<int> ids, int milli = 1000,
         const std::string& holder = "default/other") {
  ASSERT_TRUE(inventory
                  .Apply(GpuAssignment{.gpu_ids = std::move(ids),
                                       .milli_per_gpu = milli},
                         holder)
                  .ok());
}

TEST(WholeGpus, FitOnFreeGpus) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(8).Product(kH100));
  const GpuPlan plan = Plan(MakePod("p").Gpus(2), gpus);
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.gpu_ids, SizeIs(2));
  EXPECT_EQ(plan.assignment.milli_per_gpu, 1000);
}

TEST(WholeGpus, MoreThanTheNodeHasIsInfeasible) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(8).Product(kH100));
  const GpuPlan plan = Plan(MakePod("p").Gpus(16), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 16 nvidia.com/gpu; node has 8 NVIDIA-H100-80GB-HBM3");
}

TEST(WholeGpus, NodeWithoutGpusIsInfeasible) {
  const GpuInventory gpus = GpuInventory::FromNode(MakeNode("cpu-only"));
  const GpuPlan plan = Plan(MakePod("p").Gpus(1), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(), "needs 1 nvidia.com/gpu; node has none");
}

TEST(WholeGpus, TooFewFreeIsUnavailableNamingTheFreeGpus) {
  GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(8).Product(kH100));
  Use(gpus, {0, 1, 2, 4, 5, 6});
  const GpuPlan plan = Plan(MakePod("p").Gpus(4), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kUnavailable);
  EXPECT_EQ(plan.verdict.reason(), "needs 4 nvidia.com/gpu; 2 free (GPUs 3,7)");
}

TEST(WholeGpus, PartlyUsedGpusDoNotCountAsFree) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(2));
  Use(gpus, {0}, 1000);
  Use(gpus, {1}, 1);  // one milli taken is no longer a whole GPU
  const GpuPlan plan = Plan(MakePod("p").Gpus(1), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kUnavailable);
  EXPECT_EQ(plan.verdict.reason(), "needs 1 nvidia.com/gpu; 0 free");
}

TEST(WholeGpus, OneFreeGpuIsNamedInTheSingular) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(4));
  Use(gpus, {0, 1, 2});
  const GpuPlan plan = Plan(MakePod("p").Gpus(2), gpus);
  EXPECT_EQ(plan.verdict.reason(), "needs 2 nvidia.com/gpu; 1 free (GPU 3)");
}

TEST(WholeGpus, UnhealthyGpusAreCapacityMinusAllocatable) {
  // capacity 8, allocatable 6: GPUs 6 and 7 are unhealthy.
  const GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(8).UnhealthyGpus(2).Product(kH100));
  const GpuPlan too_many = Plan(MakePod("p").Gpus(7), gpus);
  EXPECT_EQ(too_many.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(too_many.verdict.reason(),
            "needs 7 nvidia.com/gpu; node has 6 NVIDIA-H100-80GB-HBM3");
  const GpuPlan all_healthy = Plan(MakePod("p").Gpus(6), gpus);
  ASSERT_TRUE(all_healthy.verdict.fits());
  EXPECT_THAT(all_healthy.assignment.gpu_ids, ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(WholeGpus, GetTheSetTheAllocatorChooses) {
  // Whatever memoisation sits in between, the plan is ChooseGpuSet's answer.
  const std::vector<std::vector<int>> kUsed = {
      {}, {0}, {0, 4}, {1, 2, 5}, {0, 1, 2, 3}, {3, 4, 5, 6}, {0, 2, 4, 6}};
  for (const std::string& annotation : {std::string(), TwoIslandTopology()}) {
    for (const std::vector<int>& used : kUsed) {
      for (int count = 1; count <= 8; ++count) {
        testing::NodeBuilder node = MakeNode("n").Gpus(8).Product("NVIDIA-L4");
        if (!annotation.empty()) node.Topology(annotation);
        GpuInventory gpus = GpuInventory::FromNode(node);
        if (!used.empty()) Use(gpus, used);
        std::vector<int> free;
        for (int i = 0; i < 8; ++i) {
          if (std::find(used.begin(), used.end(), i) == used.end()) {
            free.push_back(i);
          }
        }
        SCOPED_TRACE(::testing::Message()
                     << "topology " << (annotation.empty() ? "PCIe" : "islands")
                     << ", used " << ::testing::PrintToString(used)
                     << ", count " << count);
        const GpuPlan plan = Plan(MakePod("p").Gpus(count), gpus);
        const auto expected = ChooseGpuSet(gpus.topology(), free, count);
        ASSERT_EQ(plan.verdict.fits(), expected.has_value());
        if (expected) {
          EXPECT_EQ(plan.assignment.gpu_ids, *expected);
        }
      }
    }
  }
}

TEST(WholeGpus, FitOnNodesWithMoreGpusThanTheSetCacheHolds) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(16));
  Use(gpus, {0, 1, 2});
  const GpuPlan plan = Plan(MakePod("p").Gpus(12), gpus);
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  // 13 free: all of NUMA 1 (8-15) and 4 of GPUs 3-7 on NUMA 0; equal sets
  // tie on the lexicographically smallest, leaving GPU 7.
  EXPECT_THAT(plan.assignment.gpu_ids,
              ElementsAre(3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15));
}

// The two-island node of TwoIslandTopology(): NVLink inside 0-3 and 4-7.
GpuInventory TwoIslandNode() {
  GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(8).Product(kH100).Topology(TwoIslandTopology()));
  EXPECT_EQ(gpus.topology_source(), "annotation") << gpus.topology_error();
  return gpus;
}

TEST(NvLinkRequirement, PicksAllGpusFromOneIsland) {
  const GpuPlan plan =
      Plan(MakePod("p").Gpus(4).RequireNvLink(), TwoIslandNode());
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.gpu_ids, ElementsAre(0, 1, 2, 3));
}

TEST(NvLinkRequirement, FreeGpusSplitAcrossIslandsAreUnavailable) {
  GpuInventory gpus = TwoIslandNode();
  Use(gpus, {0, 4});  // 3 free on each island, 6 in all
  const GpuPlan plan = Plan(MakePod("p").Gpus(4).RequireNvLink(), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kUnavailable);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 4 nvidia.com/gpu on one NVLink island; 3 free (GPUs 1,2,3)");
}

TEST(NvLinkRequirement, WithoutTheAnnotationTheSameGpusFitAcrossIslands) {
  GpuInventory gpus = TwoIslandNode();
  Use(gpus, {0, 4});
  const GpuPlan plan = Plan(MakePod("p").Gpus(4), gpus);
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.gpu_ids, IsSubsetOf({1, 2, 3, 5, 6, 7}));
  EXPECT_THAT(plan.assignment.gpu_ids, SizeIs(4));
}

TEST(NvLinkRequirement, MoreThanTheLargestIslandIsInfeasible) {
  const GpuPlan plan =
      Plan(MakePod("p").Gpus(5).RequireNvLink(), TwoIslandNode());
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 5 nvidia.com/gpu on one NVLink island; the largest island "
            "has 4 GPUs");
}

TEST(NvLinkRequirement, AnyLinkIsAcceptedAndDoesNotFilter) {
  GpuInventory gpus = TwoIslandNode();
  Use(gpus, {0, 4});
  const GpuPlan plan =
      Plan(MakePod("p").Gpus(4).Annotation(kGpuLinkAnnotation, "any"), gpus);
  EXPECT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
}

TEST(NvLinkRequirement, UnknownLinkValueMakesThePodInvalid) {
  const PodView view =
      PodView::Of(MakePod("p").Gpus(2).Annotation(kGpuLinkAnnotation, "fast"));
  EXPECT_EQ(view.invalid_reason,
            "annotation gpusched.io/gpu-link=\"fast\" must be \"nvlink\" or "
            "\"any\"");
}

// A time-sliced node: 2 GPUs, 4 replicas each (8 nvidia.com/gpu).
GpuInventory SharedNode(int gpus = 2) {
  return GpuInventory::FromNode(
      MakeNode("n").Gpus(gpus).Replicas(4).Product("NVIDIA-L4-SHARED"));
}

TEST(GpuShares, GoToTheFittingGpuWithTheLeastFreeShare) {
  GpuInventory gpus = SharedNode(3);
  Use(gpus, {1}, 500);  // GPU 1: 500 free; GPUs 0, 2: 1000 free
  const GpuPlan plan = Plan(MakePod("p").Milli(300), gpus);
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.gpu_ids, ElementsAre(1));  // 500 - 300 = 200
  EXPECT_EQ(plan.assignment.milli_per_gpu, 300);
}

TEST(GpuShares, SkipGpusWithTooLittleFree) {
  GpuInventory gpus = SharedNode(3);
  Use(gpus, {0}, 500);
  const GpuPlan plan = Plan(MakePod("p").Milli(600), gpus);
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.gpu_ids, ElementsAre(1));  // lowest fresh GPU
}

TEST(GpuShares, NoGpuWithEnoughFreeIsUnavailable) {
  GpuInventory gpus = SharedNode(2);
  Use(gpus, {0}, 600);  // 400 free
  Use(gpus, {1}, 500);  // 500 free
  const GpuPlan plan = Plan(MakePod("p").Milli(600), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kUnavailable);
  EXPECT_EQ(
      plan.verdict.reason(),
      "needs 600 milli-GPU on one GPU; largest free share is 500 (GPU 1)");
}

TEST(GpuShares, AreRefusedOnNodesWithoutSharing) {
  const GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(8));
  const GpuPlan plan = Plan(MakePod("p").Milli(500), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(),
            "a GPU share (gpusched.io/gpu-milli) needs a time-sliced or MPS "
            "node (nvidia.com/gpu.replicas > 1); this node's GPUs are not "
            "shared");
}

TEST(GpuShares, NeedExactlyOneGpuInTheRequests) {
  const PodView view =
      PodView::Of(MakePod("p").Gpus(2).Annotation(kGpuMilliAnnotation, "500"));
  EXPECT_EQ(view.invalid_reason,
            "annotation gpusched.io/gpu-milli needs exactly 1 nvidia.com/gpu "
            "in the pod's requests; it has 2");
}

TEST(Replicas, TakeOneReplicaOnEachOfDifferentGpusBestFitFirst) {
  GpuInventory gpus = SharedNode(4);
  Use(gpus, {2}, 250);  // GPU 2 has 750 free; the rest 1000
  const GpuPlan plan = Plan(MakePod("p").Gpus(2), gpus);
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.gpu_ids, ElementsAre(0, 2));  // 2 first, then 0
  EXPECT_EQ(plan.assignment.milli_per_gpu, 250);            // 1000 / 4 replicas
}

TEST(Replicas, TooFewGpusWithAFreeReplicaIsUnavailable) {
  GpuInventory gpus = SharedNode(2);
  Use(gpus, {0}, 800);  // 200 free < 250
  const GpuPlan plan = Plan(MakePod("p").Gpus(2), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kUnavailable);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 2 nvidia.com/gpu replicas (250 milli-GPU each, on "
            "different GPUs); 1 GPUs have a replica free");
}

TEST(Replicas, MoreThanTheNodesGpusIsInfeasible) {
  const GpuPlan plan = Plan(MakePod("p").Gpus(3), SharedNode(2));
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 3 nvidia.com/gpu replicas on different GPUs; node has 2 "
            "GPUs shared 4 ways");
}

constexpr char kMig1g[] = "nvidia.com/mig-1g.10gb";
constexpr char kMig3g[] = "nvidia.com/mig-3g.40gb";

GpuInventory MigNode(std::string state = "success") {
  return GpuInventory::FromNode(
      MakeNode("n").Mig(kMig1g, 7).Mig(kMig3g, 2).MigConfigState(
          std::move(state)));
}

TEST(Mig, FreeInstancesFit) {
  const GpuPlan plan = Plan(MakePod("p").Mig(kMig1g, 2), MigNode());
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.mig,
              ElementsAre(std::pair<std::string, int64_t>(kMig1g, 2)));
  EXPECT_THAT(plan.assignment.gpu_ids, ::testing::IsEmpty());
}

TEST(Mig, ProfileTheNodeDoesNotOfferIsInfeasible) {
  const GpuPlan plan =
      Plan(MakePod("p").Mig("nvidia.com/mig-7g.80gb", 1), MigNode());
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 1 nvidia.com/mig-7g.80gb; node offers MIG profiles "
            "1g.10gb, 3g.40gb");
}

TEST(Mig, NodeWithoutMigIsInfeasible) {
  const GpuPlan plan = Plan(MakePod("p").Mig(kMig1g, 1),
                            GpuInventory::FromNode(MakeNode("n").Gpus(8)));
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 1 nvidia.com/mig-1g.10gb; node offers no MIG instances");
}

TEST(Mig, MoreThanThePoolHoldsIsInfeasible) {
  const GpuPlan plan = Plan(MakePod("p").Mig(kMig3g, 3), MigNode());
  EXPECT_EQ(plan.verdict.code(), Code::kInfeasible);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 3 nvidia.com/mig-3g.40gb; node has 2");
}

TEST(Mig, UsedUpPoolIsUnavailableNamingTheHolders) {
  GpuInventory gpus = MigNode();
  ASSERT_TRUE(gpus.Apply(GpuAssignment{.mig = {{kMig1g, 6}}}, "ml/a").ok());
  const GpuPlan plan = Plan(MakePod("p").Mig(kMig1g, 2), gpus);
  EXPECT_EQ(plan.verdict.code(), Code::kUnavailable);
  EXPECT_EQ(
      plan.verdict.reason(),
      "needs 2 nvidia.com/mig-1g.10gb; 1 free of 7 (held by ml/a)");  // 7-6
}

TEST(Mig, PendingReconfigurationIsUnavailable) {
  const GpuPlan plan = Plan(MakePod("p").Mig(kMig1g, 1), MigNode("pending"));
  EXPECT_EQ(plan.verdict.code(), Code::kUnavailable);
  EXPECT_EQ(plan.verdict.reason(),
            "needs 1 nvidia.com/mig-1g.10gb; MIG reconfiguration in progress "
            "(nvidia.com/mig.config.state=pending)");
}

TEST(Mig, WholeGpusAndInstancesTogetherAreBothAssigned) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(2).Mig(kMig1g, 7));
  const GpuPlan plan = Plan(MakePod("p").Gpus(1).Mig(kMig1g, 1), gpus);
  ASSERT_TRUE(plan.verdict.fits()) << plan.verdict.reason();
  EXPECT_THAT(plan.assignment.gpu_ids, SizeIs(1));
  EXPECT_THAT(plan.assignment.mig, SizeIs(1));
}

TEST(NoGpuRequest, FitsAnyNodeWithAnEmptyAssignment) {
  const GpuPlan plan =
      Plan(MakePod("p").Cpu("1"), GpuInventory::FromNode(MakeNode("n")));
  EXPECT_TRUE(plan.verdict.fits());
  EXPECT_TRUE(plan.assignment.empty());
}

}  // namespace
}  // namespace gpusched
