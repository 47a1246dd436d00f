// The device invariants on a node served by DRA: what claims hold with no
// pod of the model using it is the inventory's own hold, not a violation.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/invariants.h"
#include "scheduler/gpu_inventory.h"
#include "tests/scheduler/builders.h"
#include "tests/scheduler/dra_builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeDraDevices;
using ::gpusched::testing::MakeNode;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(InvariantsDraTest, ClaimHeldGpusAndMigInstancesWithoutPodsAreConsistent) {
  Node node = MakeNode("a100");
  node.dra_devices = MakeDraDevices("a100")
                         .Gpus(2)
                         .Claim("gpu-0", "ml/a-gpu")
                         .Mig(1, "1g.10gb", 2)
                         .Claim("gpu-1-mig-1g.10gb-0", "ml/b-mig")
                         .CountersSpent("gpu-1");
  const GpuInventory gpus = GpuInventory::FromNode(node);
  EXPECT_THAT(NodeDeviceViolations("a100", gpus, {}), IsEmpty());
}

TEST(InvariantsDraTest, ADevicePluginGpuWithoutItsPodIsStillAViolation) {
  GpuInventory gpus = GpuInventory::FromNode(MakeNode("plain").Gpus(1));
  ASSERT_TRUE(gpus.Apply({.gpu_ids = {0}, .milli_per_gpu = 1000}, "ml/x").ok());
  EXPECT_THAT(NodeDeviceViolations("plain", gpus, {}), SizeIs(1));
}

}  // namespace
}  // namespace gpusched
