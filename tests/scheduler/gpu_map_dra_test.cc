// The GPU map on nodes served by DRA: each GPU and MIG pool is named by
// the driver's devices, a tainted device is drawn unavailable with its
// taint, and the node says where its GPUs come from.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_model.h"
#include "scheduler/gpu_map.h"
#include "tests/scheduler/builders.h"
#include "tests/scheduler/dra_builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeDraDevices;
using ::gpusched::testing::MakeNode;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

GpuMapNode MapOf(Node node) {
  ClusterModel model;
  const std::string name = node.meta.name;
  model.UpsertNode(std::move(node));
  return MapNode(*model.FindNode(name));
}

TEST(MapNodeDraTest, GpusCarryTheirDraNamesClaimsAndTaints) {
  Node node = MakeNode("dgx-1");
  node.dra_devices = MakeDraDevices("dgx-1")
                         .Gpus(8)
                         .Claim("gpu-2", "ml/a-gpus")
                         .Taint("gpu-5", {"xid", "79", "NoExecute"});
  const GpuMapNode map = MapOf(std::move(node));
  EXPECT_EQ(map.gpu_source, GpuSource::kDra);
  ASSERT_EQ(map.gpus.size(), 8u);
  EXPECT_EQ(map.gpus[3].dra_name, "gpu-3");
  EXPECT_EQ(map.gpus[2].claim, "ml/a-gpus");
  EXPECT_EQ(map.gpus[2].used_milli, 1000);  // the claim holds it
  EXPECT_FALSE(map.gpus[5].healthy);        // tainted: drawn unavailable
  EXPECT_THAT(map.gpus[5].taints, ElementsAre("xid=79:NoExecute"));
  EXPECT_THAT(map.dra_tainted, ElementsAre("gpu-5 xid=79:NoExecute"));
  EXPECT_THAT(map.gpus[0].taints, IsEmpty());
}

TEST(MapNodeDraTest, MigPoolsNameTheirDraDevicesAndLeaveTaintedOnesOut) {
  Node node = MakeNode("a100-1");
  node.dra_devices =
      MakeDraDevices("a100-1")
          .Mig(0, "1g.10gb", 3)
          .Taint("gpu-0-mig-1g.10gb-1", {"xid", "", "NoSchedule"})
          .Problem("pool gpu.nvidia.com/x: generation 3 has 1 of 2");
  const GpuMapNode map = MapOf(std::move(node));
  EXPECT_EQ(map.gpu_source, GpuSource::kDra);
  ASSERT_EQ(map.mig.size(), 1u);
  EXPECT_EQ(map.mig[0].capacity, 2);  // 3 published, 1 tainted
  EXPECT_THAT(map.mig[0].dra_devices,
              ElementsAre("gpu-0-mig-1g.10gb-0", "gpu-0-mig-1g.10gb-2"));
  EXPECT_THAT(map.dra_tainted,
              ElementsAre("gpu-0-mig-1g.10gb-1 xid:NoSchedule"));
  EXPECT_THAT(map.dra_problems,
              ElementsAre("pool gpu.nvidia.com/x: generation 3 has 1 of 2"));
}

TEST(MapNodeDraTest, TheDevicePluginWinsAndItsGpusHaveNoDraNames) {
  Node node = MakeNode("mixed").Gpus(4);
  node.dra_devices = MakeDraDevices("mixed").Gpus(4);
  const GpuMapNode map = MapOf(std::move(node));
  EXPECT_EQ(map.gpu_source, GpuSource::kDevicePlugin);
  EXPECT_EQ(map.gpus[0].dra_name, "");
  EXPECT_EQ(MapOf(MakeNode("cpu")).gpu_source, GpuSource::kNone);
}

}  // namespace
}  // namespace gpusched
