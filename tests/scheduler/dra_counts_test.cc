// The DRA numbers /metrics exports: devices by driver and state, nodes by
// where their GPUs come from, pools not counted.
#include "scheduler/dra_counts.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"
#include "tests/scheduler/dra_builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeDraDevices;
using ::gpusched::testing::MakeNode;

int64_t Devices(const DraCounts& counts, const std::string& driver,
                DraDeviceCondition condition) {
  auto it = counts.devices.find(driver);
  return it == counts.devices.end()
             ? -1
             : it->second[static_cast<size_t>(condition)];
}

TEST(CountDraTest, CountsDevicesByStateAndNodesBySource) {
  ClusterModel model;
  Node dgx = MakeNode("dgx-1");
  dgx.dra_devices = MakeDraDevices("dgx-1")
                        .Gpus(8)
                        .Claim("gpu-0", "ml/a")
                        .Claim("gpu-1", "ml/a")
                        .Taint("gpu-7", {"xid", "79", "NoExecute"})
                        // Allocated wins over its taint: one state each.
                        .Taint("gpu-1", {"xid", "48", "NoSchedule"})
                        .CountersSpent("gpu-6")
                        .Problem(
                            "pool gpu.nvidia.com/x: generation 2 has 1 "
                            "of 2 slices");
  model.UpsertNode(dgx);
  model.UpsertNode(MakeNode("plain").Gpus(4));
  model.UpsertNode(MakeNode("cpu-only"));

  const DraCounts counts = CountDra(model);
  const std::string nv = "gpu.nvidia.com";
  EXPECT_EQ(Devices(counts, nv, DraDeviceCondition::kAllocated), 2);
  EXPECT_EQ(Devices(counts, nv, DraDeviceCondition::kTainted), 1);
  EXPECT_EQ(Devices(counts, nv, DraDeviceCondition::kCountersSpent), 1);
  EXPECT_EQ(Devices(counts, nv, DraDeviceCondition::kFree), 4);  // 8-2-1-1
  EXPECT_EQ(counts.nodes_dra, 1);
  EXPECT_EQ(counts.nodes_device_plugin, 1);  // cpu-only has no GPUs
  EXPECT_EQ(counts.pool_problems, 1);
}

TEST(CountDraTest, AClusterWithoutDraCountsNoDevices) {
  ClusterModel model;
  model.UpsertNode(MakeNode("plain").Gpus(4));
  const DraCounts counts = CountDra(model);
  EXPECT_TRUE(counts.devices.empty());
  EXPECT_EQ(counts.nodes_dra, 0);
  EXPECT_EQ(counts.nodes_device_plugin, 1);
}

}  // namespace
}  // namespace gpusched
