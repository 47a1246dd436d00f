#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/gpu_inventory.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using testing::MakeNode;

constexpr char kDriver[] = "gpu.nvidia.com";

DraDeviceState Device(std::string name, std::string type,
                      std::string claim = "") {
  DraDeviceState state;
  state.driver = kDriver;
  state.pool = "dgx-1";
  state.device.name = std::move(name);
  state.device.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString,
                                                    std::move(type)};
  state.claim = std::move(claim);
  return state;
}

// A DGX H100 as NVIDIA's DRA driver publishes it, listed out of order.
std::shared_ptr<DraNodeDevices> DgxH100() {
  auto dra = std::make_shared<DraNodeDevices>();
  for (int i : {7, 6, 5, 4, 3, 2, 1, 0}) {
    DraDeviceState gpu = Device("gpu-" + std::to_string(i), "gpu");
    gpu.device.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt,
                                                     "", i};
    gpu.device.attributes["gpu.nvidia.com/productName"] = {
        DraAttribute::Kind::kString, "NVIDIA H100 80GB HBM3"};
    dra->devices.push_back(std::move(gpu));
  }
  dra->devices[7 - 2].claim = "ml/train-0-gpus";  // gpu-2
  dra->devices[7 - 5].device.taints.push_back({"xid", "79", "NoExecute"});
  return dra;
}

std::vector<int> FreeIndices(const GpuInventory& inventory) {
  std::vector<int> free;
  for (const GpuDevice& device : inventory.devices()) {
    if (device.healthy && device.free_milli == kMilliPerGpu) {
      free.push_back(device.index);
    }
  }
  return free;
}

TEST(GpuInventoryDraTest, ANodeWithoutDevicePluginGpusTakesThemFromDra) {
  Node node = MakeNode("dgx-1");
  node.dra_devices = DgxH100();
  GpuInventory inventory = GpuInventory::FromNode(node);
  ASSERT_EQ(inventory.devices().size(), 8u);
  EXPECT_EQ(inventory.healthy_devices(), 7);
  EXPECT_THAT(FreeIndices(inventory), ElementsAre(0, 1, 3, 4, 6, 7));
  EXPECT_THAT(inventory.devices()[2].holders,
              ElementsAre("claim ml/train-0-gpus"));
  EXPECT_EQ(inventory.free_milli(), 6 * kMilliPerGpu);
  // The product rules apply as to a GFD-labelled node: one NVSwitch island.
  EXPECT_EQ(inventory.labels().product, "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(inventory.topology().gpu_count(), 8);
  EXPECT_EQ(LinkName(inventory.topology().Link(0, 7)), "NV18");
}

TEST(GpuInventoryDraTest, TheDevicePluginWinsWhereItReportsGpus) {
  Node node = MakeNode("dgx-1").Gpus(4);
  node.dra_devices = DgxH100();
  GpuInventory inventory = GpuInventory::FromNode(node);
  EXPECT_EQ(inventory.devices().size(), 4u);
  EXPECT_EQ(inventory.free_milli(), 4 * kMilliPerGpu);
}

// MIG partitions offered by DRA count as the device plugin's MIG
// resources; the whole GPU they spend is not free.
TEST(GpuInventoryDraTest, MigDevicesFormPoolsAndSpendTheirParent) {
  auto dra = std::make_shared<DraNodeDevices>();
  DraDeviceState whole = Device("gpu-0", "gpu");
  whole.counters_spent = true;
  dra->devices.push_back(whole);
  for (std::string name : {"gpu-0-mig-3g.40gb-0", "gpu-0-mig-3g.40gb-4"}) {
    DraDeviceState mig = Device(name, "mig", name.ends_with("0") ? "ml/a" : "");
    mig.device.attributes["gpu.nvidia.com/profile"] = {
        DraAttribute::Kind::kString, "3g.40gb"};
    dra->devices.push_back(mig);
  }
  Node node = MakeNode("a100-1");
  node.dra_devices = dra;
  GpuInventory inventory = GpuInventory::FromNode(node);
  const MigPool* pool = inventory.FindMig("nvidia.com/mig-3g.40gb");
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(pool->capacity, 2);
  EXPECT_EQ(pool->used, 1);
  ASSERT_EQ(inventory.devices().size(), 1u);
  EXPECT_EQ(inventory.free_milli(), 0);
  EXPECT_THAT(inventory.devices()[0].holders, ElementsAre("partitioned gpu-0"));
}

}  // namespace
}  // namespace gpusched
