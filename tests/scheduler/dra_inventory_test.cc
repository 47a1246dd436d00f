#include "scheduler/dra_inventory.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kGpuDriver[] = "gpu.nvidia.com";
constexpr int64_t kGiMilli = 1024LL * 1024 * 1024 * 1000;

DraDevice Gpu(int index) {
  DraDevice device;
  device.name = "gpu-" + std::to_string(index);
  device.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString,
                                              "gpu"};
  device.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt, "",
                                               index};
  device.capacity["gpu.nvidia.com/memory"] = 80 * kGiMilli;
  return device;
}

ResourceSlice Slice(std::string name, std::string node, int64_t generation,
                    int64_t count, std::vector<DraDevice> devices) {
  ResourceSlice slice;
  slice.meta.name = std::move(name);
  slice.driver = kGpuDriver;
  slice.pool = node;
  slice.node_name = std::move(node);
  slice.pool_generation = generation;
  slice.pool_slice_count = count;
  slice.devices = std::move(devices);
  return slice;
}

ResourceClaim Claim(std::string name, std::string pool,
                    std::vector<std::string> devices) {
  ResourceClaim claim;
  claim.meta.namespace_name = "ml";
  claim.meta.name = std::move(name);
  claim.allocated = true;
  for (std::string& device : devices) {
    claim.allocation.push_back({"gpu", kGpuDriver, pool, std::move(device)});
  }
  return claim;
}

std::vector<std::string> Offered(const DraInventory& inventory,
                                 std::string_view node) {
  std::vector<std::string> names;
  for (const DraDeviceState& state : inventory.NodeDevices(node).devices) {
    if (state.offered()) names.push_back(state.device.name);
  }
  return names;
}

TEST(DraInventoryTest, AllocatedDevicesAreHeldUntilTheClaimGoes) {
  DraInventory inventory;
  inventory.UpsertSlice(
      Slice("dgx-1-gpus", "dgx-1", 1, 1, {Gpu(0), Gpu(1), Gpu(2)}));
  inventory.UpsertClaim(Claim("train-0-gpu", "dgx-1", {"gpu-1"}));
  EXPECT_THAT(Offered(inventory, "dgx-1"), ElementsAre("gpu-0", "gpu-2"));
  EXPECT_EQ(inventory.HolderOf("gpu.nvidia.com/dgx-1/gpu-1"), "ml/train-0-gpu");

  // Deallocated (status.allocation cleared), then deleted.
  ResourceClaim released = Claim("train-0-gpu", "dgx-1", {});
  released.allocated = false;
  inventory.UpsertClaim(released);
  EXPECT_THAT(Offered(inventory, "dgx-1"),
              ElementsAre("gpu-0", "gpu-1", "gpu-2"));
  inventory.UpsertClaim(Claim("train-0-gpu", "dgx-1", {"gpu-0"}));
  inventory.DeleteClaim("ml/train-0-gpu");
  EXPECT_THAT(Offered(inventory, "dgx-1"),
              ElementsAre("gpu-0", "gpu-1", "gpu-2"));
}

TEST(DraInventoryTest, AdminAccessDoesNotTakeTheDevice) {
  DraInventory inventory;
  inventory.UpsertSlice(Slice("s", "dgx-1", 1, 1, {Gpu(0)}));
  ResourceClaim monitor = Claim("monitor", "dgx-1", {"gpu-0"});
  monitor.allocation[0].admin_access = true;
  inventory.UpsertClaim(monitor);
  EXPECT_THAT(Offered(inventory, "dgx-1"), ElementsAre("gpu-0"));
}

// kube-scheduler reads only the newest generation of a pool, and skips a
// pool while that generation's slices are not all published.
TEST(DraInventoryTest, OnlyTheNewestCompleteGenerationCounts) {
  DraInventory inventory;
  inventory.UpsertSlice(Slice("old", "dgx-1", 1, 1, {Gpu(0), Gpu(1)}));
  inventory.UpsertSlice(Slice("new-a", "dgx-1", 2, 2, {Gpu(0)}));
  DraNodeDevices partial = inventory.NodeDevices("dgx-1");
  EXPECT_THAT(partial.devices, IsEmpty());
  ASSERT_EQ(partial.problems.size(), 1u);
  EXPECT_THAT(partial.problems[0],
              HasSubstr("pool gpu.nvidia.com/dgx-1: generation 2 has 1 of 2"));

  inventory.UpsertSlice(Slice("new-b", "dgx-1", 2, 2, {Gpu(1), Gpu(2)}));
  EXPECT_THAT(Offered(inventory, "dgx-1"),
              ElementsAre("gpu-0", "gpu-1", "gpu-2"));
  EXPECT_THAT(inventory.NodeDevices("dgx-1").problems, IsEmpty());
  inventory.DeleteSlice("new-b");
  inventory.DeleteSlice("new-a");
  EXPECT_THAT(Offered(inventory, "dgx-1"), ElementsAre("gpu-0", "gpu-1"));
}

TEST(DraInventoryTest, SlicesNotLocalToANodeAreNotAnyNodesGpus) {
  DraInventory inventory;
  inventory.UpsertSlice(Slice("fabric", "", 1, 1, {Gpu(0)}));
  EXPECT_THAT(inventory.Nodes(), IsEmpty());
  inventory.UpsertSlice(Slice("s", "dgx-1", 1, 1, {Gpu(0)}));
  // Moving a slice to another node forgets it on the first.
  inventory.UpsertSlice(Slice("s", "dgx-2", 1, 1, {Gpu(0)}));
  EXPECT_THAT(inventory.Nodes(), ElementsAre("dgx-2"));
}

TEST(DraInventoryTest, TaintsOnTheSliceOrByRuleKeepADeviceOff) {
  DraInventory inventory;
  std::vector<DraDevice> gpus = {Gpu(0), Gpu(1), Gpu(2), Gpu(3)};
  gpus[0].taints.push_back({"nvidia.com/xid", "79", "NoExecute"});
  gpus[1].taints.push_back({"maintenance", "", "None"});
  inventory.UpsertSlice(Slice("s", "dgx-1", 1, 1, gpus));
  DeviceTaintRule rule;
  rule.meta.name = "drain-gpu-2";
  rule.driver = kGpuDriver;
  rule.device = "gpu-2";
  rule.taint = {"drain", "", "NoSchedule"};
  inventory.UpsertTaintRule(rule);
  EXPECT_THAT(Offered(inventory, "dgx-1"), ElementsAre("gpu-1", "gpu-3"));
  inventory.DeleteTaintRule("drain-gpu-2");
  EXPECT_THAT(Offered(inventory, "dgx-1"),
              ElementsAre("gpu-1", "gpu-2", "gpu-3"));
}

// An A100 published as partitionable: the whole GPU and its MIG
// partitions draw on one counter set of 8 memory slices.
TEST(DraInventoryTest, PartitionsSpendTheCountersTheWholeGpuNeeds) {
  auto consumes = [](DraDevice device, int64_t slices) {
    device.consumes_counters.push_back(
        {"gpu-0-counters", {{"memorySlice", slices * 1000}}});
    return device;
  };
  DraDevice whole = consumes(Gpu(0), 8);
  DraDevice mig_a =
      consumes(DraDevice{"gpu-0-mig-3g.40gb-0", {}, {}, {}, {}}, 4);
  DraDevice mig_b =
      consumes(DraDevice{"gpu-0-mig-3g.40gb-4", {}, {}, {}, {}}, 4);
  ResourceSlice slice = Slice("a100", "a100-1", 1, 1, {whole, mig_a, mig_b});
  slice.shared_counters.push_back({"gpu-0-counters", {{"memorySlice", 8000}}});
  DraInventory inventory;
  inventory.UpsertSlice(slice);
  EXPECT_THAT(
      Offered(inventory, "a100-1"),
      ElementsAre("gpu-0", "gpu-0-mig-3g.40gb-0", "gpu-0-mig-3g.40gb-4"));

  inventory.UpsertClaim(Claim("infer", "a100-1", {"gpu-0-mig-3g.40gb-0"}));
  EXPECT_THAT(Offered(inventory, "a100-1"), ElementsAre("gpu-0-mig-3g.40gb-4"));
  inventory.UpsertClaim(Claim("train", "a100-1", {"gpu-0-mig-3g.40gb-4"}));
  EXPECT_THAT(Offered(inventory, "a100-1"), IsEmpty());
  inventory.DeleteClaim("ml/infer");
  inventory.DeleteClaim("ml/train");
  inventory.UpsertClaim(Claim("big", "a100-1", {"gpu-0"}));
  EXPECT_THAT(Offered(inventory, "a100-1"), IsEmpty());
}

}  // namespace
}  // namespace gpusched
