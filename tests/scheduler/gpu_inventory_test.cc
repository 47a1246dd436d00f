#include "scheduler/gpu_inventory.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/base/strings.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::kH100;
using ::gpusched::testing::MakeNode;
using ::gpusched::testing::TwoIslandTopology;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<int> FreeMilli(const GpuInventory& inventory) {
  std::vector<int> free;
  for (const GpuDevice& d : inventory.devices()) free.push_back(d.free_milli);
  return free;
}

TEST(InventoryFromNode, OffersOneDevicePerGpu) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(8).Product(kH100));
  ASSERT_EQ(gpus.devices().size(), 8u);
  EXPECT_EQ(gpus.healthy_devices(), 8);
  EXPECT_EQ(gpus.total_milli(), 8000);  // 8 * 1000
  EXPECT_EQ(gpus.free_milli(), 8000);
  EXPECT_FALSE(gpus.time_shared());
  EXPECT_EQ(gpus.devices()[5].index, 5);
}

TEST(InventoryFromNode, CountsGpusNotReplicasOnTimeSlicedNodes) {
  // allocatable nvidia.com/gpu = 4 GPUs * 4 replicas = 16.
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(4).Replicas(4));
  EXPECT_EQ(gpus.devices().size(), 4u);  // 16 / 4
  EXPECT_TRUE(gpus.time_shared());
  EXPECT_EQ(gpus.replicas(), 4);
  EXPECT_EQ(gpus.replica_milli(), 250);  // 1000 / 4
}

TEST(InventoryFromNode, MarksGpusMissingFromAllocatableUnhealthy) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(8).UnhealthyGpus(3));
  ASSERT_EQ(gpus.devices().size(), 8u);
  EXPECT_EQ(gpus.healthy_devices(), 5);  // 8 - 3
  EXPECT_TRUE(gpus.devices()[4].healthy);
  EXPECT_FALSE(gpus.devices()[5].healthy);
  EXPECT_EQ(gpus.total_milli(), 5000);  // healthy only
  EXPECT_EQ(gpus.free_milli(), 5000);
}

TEST(InventoryFromNode, ReadsMigPoolsBesideWholeGpusOnMixedNodes) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n")
                                 .Gpus(2)
                                 .Mig("nvidia.com/mig-3g.40gb", 4)
                                 .Mig("nvidia.com/mig-1g.10gb", 14));
  EXPECT_EQ(gpus.devices().size(), 2u);
  ASSERT_EQ(gpus.mig_pools().size(), 2u);
  EXPECT_EQ(gpus.mig_pools()[0].resource, "nvidia.com/mig-1g.10gb");
  EXPECT_EQ(gpus.mig_pools()[0].capacity, 14);
  EXPECT_EQ(gpus.mig_pools()[1].resource, "nvidia.com/mig-3g.40gb");
  ASSERT_NE(gpus.FindMig("nvidia.com/mig-3g.40gb"), nullptr);
  EXPECT_EQ(gpus.FindMig("nvidia.com/mig-3g.40gb")->capacity, 4);
  EXPECT_EQ(gpus.FindMig("nvidia.com/mig-7g.80gb"), nullptr);
}

TEST(InventoryFromNode, AllMigNodeHasNoDevices) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Mig("nvidia.com/mig-1g.10gb", 56));
  EXPECT_THAT(gpus.devices(), IsEmpty());
  EXPECT_EQ(gpus.mig_pools().size(), 1u);
}

TEST(InventoryTopology, DefaultsFromTheProductWithoutAnAnnotation) {
  const GpuInventory gpus =
      GpuInventory::FromNode(MakeNode("n").Gpus(8).Product(kH100));
  EXPECT_EQ(gpus.topology_source(), "default for NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(gpus.topology_error(), "");
  EXPECT_EQ(gpus.topology(), GpuTopology::DefaultFor(kH100, 8));
}

TEST(InventoryTopology, DefaultIgnoresTheSharedSuffix) {
  const GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(2).Replicas(2).Product("NVIDIA-L4-SHARED"));
  EXPECT_EQ(gpus.topology_source(), "default for NVIDIA-L4");
}

TEST(InventoryTopology, DefaultNamesAnUnknownProduct) {
  const GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(2));
  EXPECT_EQ(gpus.topology_source(), "default for unknown product");
}

TEST(InventoryTopology, TakesAValidAnnotation) {
  const GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(8).Product(kH100).Topology(TwoIslandTopology()));
  EXPECT_EQ(gpus.topology_source(), "annotation");
  EXPECT_EQ(gpus.topology_error(), "");
  EXPECT_THAT(gpus.topology().NvLinkIslands(),
              ElementsAre(ElementsAre(0, 1, 2, 3), ElementsAre(4, 5, 6, 7)));
}

TEST(InventoryTopology, RejectsAnAnnotationForAnotherGpuCountAndFallsBack) {
  const GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(4).Product(kH100).Topology(TwoIslandTopology()));
  EXPECT_EQ(gpus.topology_error(),
            "describes 8 GPUs but the node offers 4 whole GPUs");
  EXPECT_EQ(gpus.topology_source(),
            "default for NVIDIA-H100-80GB-HBM3 (annotation "
            "gpusched.io/gpu-topology rejected: describes 8 GPUs but the node "
            "offers 4 whole GPUs)");
  EXPECT_EQ(gpus.topology(), GpuTopology::DefaultFor(kH100, 4));
}

TEST(InventoryTopology, RejectsAMalformedAnnotationAndFallsBack) {
  const GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(2).Product(kH100).Topology("{\"gpus\": 2}"));
  EXPECT_NE(gpus.topology_error(), "");
  EXPECT_THAT(gpus.topology_source(),
              HasSubstr("default for NVIDIA-H100-80GB-HBM3 (annotation "
                        "gpusched.io/gpu-topology rejected: "));
  EXPECT_EQ(gpus.topology(), GpuTopology::DefaultFor(kH100, 2));
}

TEST(InventoryApply, TakesTheShareAndRecordsTheHolder) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(2).Replicas(4));
  ASSERT_TRUE(gpus.Apply({.gpu_ids = {1}, .milli_per_gpu = 250}, "ml/b").ok());
  ASSERT_TRUE(gpus.Apply({.gpu_ids = {1}, .milli_per_gpu = 500}, "ml/a").ok());
  EXPECT_THAT(FreeMilli(gpus), ElementsAre(1000, 250));  // 1000 - 250 - 500
  EXPECT_THAT(gpus.devices()[1].holders, ElementsAre("ml/a", "ml/b"));
  EXPECT_EQ(gpus.free_milli(), 1250);
}

TEST(InventoryApply, ChangesNothingWhenOneGpuLacksRoom) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(4));
  ASSERT_TRUE(gpus.Apply({.gpu_ids = {2}, .milli_per_gpu = 1000}, "a").ok());
  const absl::Status status =
      gpus.Apply({.gpu_ids = {1, 2}, .milli_per_gpu = 1000}, "b");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Message(status), "GPU 2 has 0 milli free, needs 1000");
  EXPECT_THAT(FreeMilli(gpus), ElementsAre(1000, 1000, 0, 1000));
  EXPECT_THAT(gpus.devices()[1].holders, IsEmpty());
}

TEST(InventoryApply, ChangesNothingWhenTheMigPoolLacksRoom) {
  GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(2).Mig("nvidia.com/mig-1g.10gb", 2));
  const absl::Status status =
      gpus.Apply({.gpu_ids = {0},
                  .milli_per_gpu = 1000,
                  .mig = {{"nvidia.com/mig-1g.10gb", 3}}},
                 "a");
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(Message(status), "not enough free nvidia.com/mig-1g.10gb");
  EXPECT_THAT(FreeMilli(gpus), ElementsAre(1000, 1000));
  EXPECT_EQ(gpus.mig_pools()[0].used, 0);
}

TEST(InventoryApply, RejectsAGpuTheNodeDoesNotHave) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(2));
  const absl::Status status =
      gpus.Apply({.gpu_ids = {0, 2}, .milli_per_gpu = 1000}, "a");
  EXPECT_EQ(Message(status), "GPU 2 does not exist on this node (2 GPUs)");
  EXPECT_THAT(FreeMilli(gpus), ElementsAre(1000, 1000));
}

TEST(InventoryApply, RejectsAGpuListedTwice) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("n").Gpus(2).Replicas(2));
  // 600 twice on GPU 0 would need 1200 of its 1000.
  const absl::Status status =
      gpus.Apply({.gpu_ids = {0, 0}, .milli_per_gpu = 600}, "a");
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(FreeMilli(gpus), ElementsAre(1000, 1000));
}

TEST(InventoryRelease, GivesBackWhatApplyTook) {
  GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(4).Mig("nvidia.com/mig-1g.10gb", 7));
  const GpuAssignment assignment{.gpu_ids = {1, 3},
                                 .milli_per_gpu = 1000,
                                 .mig = {{"nvidia.com/mig-1g.10gb", 2}}};
  ASSERT_TRUE(gpus.Apply(assignment, "a").ok());
  EXPECT_EQ(gpus.mig_pools()[0].used, 2);
  gpus.Release(assignment, "a");
  EXPECT_THAT(FreeMilli(gpus), ElementsAre(1000, 1000, 1000, 1000));
  EXPECT_THAT(gpus.devices()[1].holders, IsEmpty());
  EXPECT_EQ(gpus.mig_pools()[0].used, 0);
  EXPECT_THAT(gpus.mig_pools()[0].holders, IsEmpty());
}

TEST(InventoryRelease, NeverGoesBeyondAWholeGpuOrAnEmptyPool) {
  GpuInventory gpus = GpuInventory::FromNode(
      MakeNode("n").Gpus(2).Mig("nvidia.com/mig-1g.10gb", 7));
  gpus.Release({.gpu_ids = {0, 9},
                .milli_per_gpu = 1000,
                .mig = {{"nvidia.com/mig-1g.10gb", 2}}},
               "ghost");
  EXPECT_THAT(FreeMilli(gpus), ElementsAre(1000, 1000));
  EXPECT_EQ(gpus.mig_pools()[0].used, 0);
}

TEST(ParseGpuIds, ReadsASortedList) {
  EXPECT_THAT(ParseGpuIds("0,1,5").value_or(std::vector<int>{}),
              ElementsAre(0, 1, 5));
  EXPECT_THAT(ParseGpuIds("7,2").value_or(std::vector<int>{}),
              ElementsAre(2, 7));
  EXPECT_THAT(ParseGpuIds("3").value_or(std::vector<int>{}), ElementsAre(3));
}

TEST(ParseGpuIds, RejectsJunkNegativesAndDuplicates) {
  const struct {
    std::string_view text;
    std::string_view message;
  } kCases[] = {
      {"", "\"\": \"\" is not a GPU index"},
      {"a", "\"a\": \"a\" is not a GPU index"},
      {"1,,2", "\"1,,2\": \"\" is not a GPU index"},
      {"-1", "\"-1\": \"-1\" is not a GPU index"},
      {"1.5", "\"1.5\": \"1.5\" is not a GPU index"},
      {"5000", "\"5000\": \"5000\" is not a GPU index"},
      {"1,2,1", "\"1,2,1\": a GPU index is repeated"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.text);
    absl::StatusOr<std::vector<int>> ids = ParseGpuIds(c.text);
    ASSERT_FALSE(ids.ok());
    EXPECT_EQ(Message(ids.status()), c.message);
  }
}

TEST(FormatGpuIds, JoinsWithCommasAndRoundTrips) {
  EXPECT_EQ(FormatGpuIds({0, 1, 5}), "0,1,5");
  EXPECT_EQ(FormatGpuIds({}), "");
  EXPECT_THAT(ParseGpuIds(FormatGpuIds({2, 4})).value_or(std::vector<int>{}),
              ElementsAre(2, 4));
}

}  // namespace
}  // namespace gpusched
