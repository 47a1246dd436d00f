// What explain says of a pod's DRA claims: its requests and who checks
// them, and how a node's devices stand against the requests they cannot
// meet; and an admitted pod's devices by their DRA names.
#include "scheduler/dra_explain.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"
#include "tests/scheduler/dra_builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::GpuTemplateCatalog;
using ::gpusched::testing::kGpuClassSelector;
using ::gpusched::testing::MakeDraDevices;
using ::gpusched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

Pod WithTemplate(Pod pod, std::string template_name) {
  pod.resource_claims.push_back(
      {.name = "gpus", .template_name = std::move(template_name)});
  return pod;
}

TEST(ExplainDraDemandTest, NamesClaimRequestClassCountAndSelectors) {
  const Pod pod = WithTemplate(MakePod("ml/train-0"), "two-gpus");
  const DraDemand demand = DraDemandOf(
      pod, GpuTemplateCatalog("ml", "two-gpus", 2,
                              DraRequestAlternative::Mode::kExactCount,
                              {"device.attributes['gpu.nvidia.com']"
                               ".productName == 'NVIDIA H100 80GB HBM3'"}));
  ClaimCharge charge;
  charge.requests.Add("nvidia.com/gpu", 2);
  const DraExplanation e = ExplainDraDemand(pod, demand, charge);
  EXPECT_EQ(e.pod, "ml/train-0");
  ASSERT_EQ(e.requests.size(), 1u);
  const DraRequestLine& r = e.requests[0];
  EXPECT_EQ(r.claim, "template ml/two-gpus");
  EXPECT_EQ(r.request, "gpus");
  EXPECT_EQ(r.device_class, "gpu.nvidia.com");
  EXPECT_EQ(r.count, 2);
  // The class's selector, then the request's own.
  EXPECT_THAT(
      r.selectors,
      ElementsAre(kGpuClassSelector, HasSubstr("productName == 'NVIDIA H100")));
  EXPECT_EQ(r.left_to_kube_scheduler, "");  // gpusched checks it
  EXPECT_EQ(e.charged.Get("nvidia.com/gpu"), 2);
}

TEST(ExplainDraDemandTest, AllocationModeAllIsLeftToKubeSchedulerAndUncharged) {
  const Pod pod = WithTemplate(MakePod("ml/all"), "every-gpu");
  const DraDemand demand =
      DraDemandOf(pod, GpuTemplateCatalog("ml", "every-gpu", 1,
                                          DraRequestAlternative::Mode::kAll));
  const ClaimCharge charge{
      .uncharged = {"template ml/every-gpu request gpus: allocation mode All "
                    "is not counted"}};
  const DraExplanation e = ExplainDraDemand(pod, demand, charge);
  ASSERT_EQ(e.requests.size(), 1u);
  EXPECT_THAT(e.requests[0].left_to_kube_scheduler, HasSubstr("All"));
  EXPECT_THAT(e.uncharged, ElementsAre(HasSubstr("allocation mode All")));
  EXPECT_TRUE(e.charged.empty());
}

TEST(DraNodeShortageTest, CountsFreeAllocatedAndTaintedMatchingDevices) {
  const Pod pod = WithTemplate(MakePod("ml/train-0"), "two-gpus");
  const DraDemand demand =
      DraDemandOf(pod, GpuTemplateCatalog("ml", "two-gpus", 2));
  auto devices = MakeDraDevices("dgx-1")
                     .Gpus(8)
                     .Mig(0, "1g.10gb", 2)  // type mig: not matching
                     .Taint("gpu-7", {"xid", "79", "NoExecute"});
  for (int i = 0; i < 6; ++i) {
    devices.Claim("gpu-" + std::to_string(i), "other/x");
  }
  // 8 GPUs match the class: gpu-0..5 allocated, gpu-6 free, gpu-7 tainted.
  EXPECT_EQ(DraNodeShortage(demand, *devices.Build()),
            "template ml/two-gpus request gpus wants 2 gpu.nvidia.com: 1 "
            "free, 6 allocated, 1 tainted (gpu-7 xid=79:NoExecute) of 8 "
            "matching");
}

TEST(DraNodeShortageTest, SaysNothingWhereTheRequestFitsOrIsUndecided) {
  const Pod pod = WithTemplate(MakePod("ml/x"), "t");
  const auto devices = MakeDraDevices("dgx-1").Gpus(2).Build();
  EXPECT_EQ(DraNodeShortage(DraDemandOf(pod, GpuTemplateCatalog("ml", "t", 2)),
                            *devices),
            "");
  // allocationMode All: kube-scheduler alone decides, gpusched says nothing.
  EXPECT_EQ(
      DraNodeShortage(DraDemandOf(pod, GpuTemplateCatalog(
                                           "ml", "t", 1,
                                           DraRequestAlternative::Mode::kAll)),
                      *devices),
      "");
}

TEST(DraNodeShortageTest, SaysWhenNoDeviceMatchesTheSelectors) {
  const Pod pod = WithTemplate(MakePod("ml/x"), "t");
  const DraDemand demand = DraDemandOf(pod, GpuTemplateCatalog("ml", "t", 1));
  EXPECT_THAT(DraNodeShortage(
                  demand, *MakeDraDevices("a100").Mig(0, "1g.10gb", 7).Build()),
              HasSubstr("no device here matches its selectors"));
}

TEST(DraDevicesOfPodTest, NamesTheDevicesClaimsReservedForThePod) {
  const auto devices = MakeDraDevices("dgx-1")
                           .Gpus(4)
                           .Claim("gpu-1", "ml/a-gpus", "uid-a")
                           .Claim("gpu-3", "ml/a-gpus", "uid-a")
                           .Claim("gpu-2", "ml/b-gpus", "uid-b")
                           .Build();
  const DraMemberDevices held = DraDevicesOfPod(*devices, "uid-a");
  EXPECT_THAT(held.allocated, ElementsAre("gpu-1", "gpu-3"));
  EXPECT_THAT(held.claims, ElementsAre("ml/a-gpus"));
  EXPECT_THAT(DraDevicesOfPod(*devices, "").allocated, IsEmpty());
}

}  // namespace
}  // namespace gpusched
