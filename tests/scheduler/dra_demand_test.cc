#include "scheduler/dra_demand.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/dra_undecided.h"
#include "tests/scheduler/dra_builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::kGpuClassSelector;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDriver[] = "gpu.nvidia.com";
constexpr char kGpuClass[] = "gpu.nvidia.com";

DraDevice Gpu(int index, std::string product) {
  DraDevice device;
  device.name = "gpu-" + std::to_string(index);
  device.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString,
                                              "gpu"};
  device.attributes["gpu.nvidia.com/productName"] = {
      DraAttribute::Kind::kString, std::move(product)};
  return device;
}

// A node's devices as DraInventory reports them: gpu-0..gpu-<n-1>, the
// first `held` of them allocated to some other claim.
DraNodeDevices DevicesOn(std::string node, int n, int held,
                         std::string product = "NVIDIA H100 80GB HBM3") {
  DraNodeDevices devices;
  for (int i = 0; i < n; ++i) {
    devices.devices.push_back(
        {kDriver, node, Gpu(i, product), i < held ? "other/claim" : "", false});
  }
  return devices;
}

DraRequestAlternative Alternative(std::string name, int64_t count,
                                  std::vector<std::string> selectors = {}) {
  DraRequestAlternative alt;
  alt.name = std::move(name);
  alt.device_class = kGpuClass;
  alt.count = count;
  alt.selectors = std::move(selectors);
  return alt;
}

DraClaimSpec Exactly(int64_t count, std::vector<std::string> selectors = {}) {
  DraClaimSpec spec;
  spec.requests.push_back({"gpus", {Alternative("gpus", count, selectors)}});
  return spec;
}

class DraDemandTest : public ::testing::Test {
 protected:
  DraDemandTest() {
    DeviceClass gpus;
    gpus.meta.name = kGpuClass;
    gpus.selectors = {kGpuClassSelector};
    catalog_.classes[kGpuClass] = gpus;
  }

  void AddTemplate(std::string name, DraClaimSpec spec) {
    ResourceClaimTemplate tmpl;
    tmpl.meta = {.name = name, .namespace_name = "ml"};
    tmpl.spec = std::move(spec);
    catalog_.templates["ml/" + name] = std::move(tmpl);
  }

  // A pod with one claim from template `tmpl` (not made yet).
  static Pod PodFromTemplate(std::string tmpl) {
    Pod pod;
    pod.meta = {.name = "worker-0", .namespace_name = "ml"};
    pod.resource_claims.push_back({"gpus", "", std::move(tmpl), ""});
    return pod;
  }

  DraCatalog catalog_;
};

TEST_F(DraDemandTest, TemplateClaimNeedsThatManyFreeMatchingDevices) {
  AddTemplate("two-gpus", Exactly(2));
  DraDemand demand = DraDemandOf(PodFromTemplate("two-gpus"), catalog_);
  ASSERT_EQ(demand.requests.size(), 1u);
  EXPECT_EQ(demand.requests[0].claim, "template ml/two-gpus");

  DraNodeFit full = FitDraDemand(demand, "dgx-1", DevicesOn("dgx-1", 8, 7));
  EXPECT_FALSE(full.fits);
  EXPECT_THAT(full.reason,
              HasSubstr("template ml/two-gpus request gpus needs 2 "
                        "gpu.nvidia.com device(s); 1 free match"));
  const DraNodeDevices six_held = DevicesOn("dgx-1", 8, 6);
  DraNodeFit roomy = FitDraDemand(demand, "dgx-1", six_held);
  EXPECT_TRUE(roomy.fits) << roomy.reason;
  EXPECT_THAT(PickedDeviceKeys(roomy, six_held),
              ElementsAre(ElementsAre("gpu.nvidia.com/dgx-1/gpu-6",
                                      "gpu.nvidia.com/dgx-1/gpu-7")));
}

TEST_F(DraDemandTest, RequestsOfOneClaimGetDistinctDevices) {
  DraClaimSpec spec = Exactly(1);
  spec.requests.push_back({"more", {Alternative("more", 1)}});
  AddTemplate("split", spec);
  DraDemand demand = DraDemandOf(PodFromTemplate("split"), catalog_);
  EXPECT_FALSE(FitDraDemand(demand, "dgx-1", DevicesOn("dgx-1", 8, 7)).fits);
  const DraNodeDevices six_held = DevicesOn("dgx-1", 8, 6);
  DraNodeFit fit = FitDraDemand(demand, "dgx-1", six_held);
  EXPECT_TRUE(fit.fits);
  EXPECT_THAT(PickedDeviceKeys(fit, six_held),
              ElementsAre(ElementsAre("gpu.nvidia.com/dgx-1/gpu-6"),
                          ElementsAre("gpu.nvidia.com/dgx-1/gpu-7")));
}

TEST_F(DraDemandTest, SelectorsNarrowTheDevicesAndFirstAvailableFallsBack) {
  DraClaimSpec spec;
  spec.requests.push_back(
      {"gpu",
       {Alternative("gpu/h100", 1,
                    {"device.attributes['gpu.nvidia.com'].productName == "
                     "'NVIDIA H100 80GB HBM3'"}),
        Alternative("gpu/a100", 2,
                    {"device.attributes['gpu.nvidia.com'].productName == "
                     "'NVIDIA A100-SXM4-40GB'"})},
       true});
  AddTemplate("any-gpu", spec);
  DraDemand demand = DraDemandOf(PodFromTemplate("any-gpu"), catalog_);
  DraNodeFit a100 = FitDraDemand(
      demand, "a100-1", DevicesOn("a100-1", 8, 0, "NVIDIA A100-SXM4-40GB"));
  EXPECT_TRUE(a100.fits) << a100.reason;
  EXPECT_EQ(a100.picked[0].size(), 2u);
  DraNodeFit busy = FitDraDemand(
      demand, "a100-1", DevicesOn("a100-1", 8, 7, "NVIDIA A100-SXM4-40GB"));
  EXPECT_FALSE(busy.fits);
  EXPECT_THAT(busy.reason, HasSubstr("request gpu/a100 needs 2"));
}

// Outside the subset gpusched does not refuse: kube-scheduler decides.
TEST_F(DraDemandTest, UndecidedRequestsNeverRefuseANode) {
  AddTemplate("fancy",
              Exactly(4, {"device.attributes['gpu.nvidia.com'].productName."
                          "startsWith('NVIDIA H')"}));
  DraDemand demand = DraDemandOf(PodFromTemplate("fancy"), catalog_);
  EXPECT_THAT(demand.requests[0].alternatives[0].undecided,
              HasSubstr("its selector #0 \"device.attributes['gpu.nvidia.com']"
                        ".productName.startsWith('NVIDIA H')\" is outside the "
                        "supported CEL subset"));
  EXPECT_TRUE(FitDraDemand(demand, "dgx-1", DevicesOn("dgx-1", 8, 8)).fits);

  DraClaimSpec all = Exactly(1);
  all.requests[0].alternatives[0].mode = DraRequestAlternative::Mode::kAll;
  AddTemplate("all", all);
  EXPECT_TRUE(FitDraDemand(DraDemandOf(PodFromTemplate("all"), catalog_),
                           "dgx-1", DevicesOn("dgx-1", 8, 8))
                  .fits);
}

TEST_F(DraDemandTest, CelRuntimeErrorsRefuseAsKubeSchedulerDoes) {
  AddTemplate("profile",
              Exactly(1, {"device.attributes['gpu.nvidia.com'].profile == "
                          "'1g.10gb'"}));
  DraNodeFit fit =
      FitDraDemand(DraDemandOf(PodFromTemplate("profile"), catalog_), "dgx-1",
                   DevicesOn("dgx-1", 8, 0));
  EXPECT_FALSE(fit.fits);
  EXPECT_THAT(fit.reason, HasSubstr("on gpu-0: no such key: profile"));
}

TEST_F(DraDemandTest, TaintedDevicesAreOffOnlyForRequestsThatDoNotTolerate) {
  AddTemplate("one", Exactly(1));
  DraNodeDevices node = DevicesOn("dgx-1", 2, 1);
  node.devices[1].device.taints.push_back({"drain", "", "NoSchedule"});
  DraDemand demand = DraDemandOf(PodFromTemplate("one"), catalog_);
  EXPECT_FALSE(FitDraDemand(demand, "dgx-1", node).fits);

  DraClaimSpec tolerant = Exactly(1);
  tolerant.requests[0].alternatives[0].tolerations.push_back(
      {"drain", "Exists", "", ""});
  AddTemplate("tolerant", tolerant);
  EXPECT_TRUE(FitDraDemand(DraDemandOf(PodFromTemplate("tolerant"), catalog_),
                           "dgx-1", node)
                  .fits);
}

TEST_F(DraDemandTest, AllocatedClaimsPinThePodToTheirNode) {
  ResourceClaim claim;
  claim.meta = {.name = "worker-0-gpus-x7k2p", .namespace_name = "ml"};
  claim.allocated = true;
  claim.allocated_node = "dgx-2";
  catalog_.claims["ml/worker-0-gpus-x7k2p"] = claim;
  Pod pod = PodFromTemplate("two-gpus");
  pod.resource_claims[0].status_claim_name = "worker-0-gpus-x7k2p";
  DraDemand demand = DraDemandOf(pod, catalog_);
  EXPECT_THAT(demand.allocated_claims, ElementsAre("ml/worker-0-gpus-x7k2p"));
  EXPECT_THAT(demand.requests, IsEmpty());
  EXPECT_FALSE(FitDraDemand(demand, "dgx-1", DevicesOn("dgx-1", 8, 0)).fits);
  EXPECT_TRUE(FitDraDemand(demand, "dgx-2", DevicesOn("dgx-2", 8, 8)).fits);
}

TEST_F(DraDemandTest, UnknownTemplatesAndClassesAreNamed) {
  DraNodeFit fit = FitDraDemand(DraDemandOf(PodFromTemplate("nope"), catalog_),
                                "dgx-1", DevicesOn("dgx-1", 8, 0));
  EXPECT_FALSE(fit.fits);
  EXPECT_EQ(fit.reason, "ResourceClaimTemplate ml/nope does not exist");

  DraClaimSpec spec = Exactly(1);
  spec.requests[0].alternatives[0].device_class = "tpu.example.com";
  AddTemplate("tpu", spec);
  EXPECT_EQ(FitDraDemand(DraDemandOf(PodFromTemplate("tpu"), catalog_), "dgx-1",
                         DevicesOn("dgx-1", 8, 0))
                .reason,
            "DeviceClass tpu.example.com does not exist");
}

// The node's memo keys answers by selector set: one pod's answer is never
// another's, and a CEL error found through the memo still names itself.
TEST_F(DraDemandTest, MemoisedSelectorAnswersStayWithTheirSelectorSet) {
  AddTemplate("h100", Exactly(2, {"device.attributes['gpu.nvidia.com']."
                                  "productName == 'NVIDIA H100 80GB HBM3'"}));
  AddTemplate("a100", Exactly(2, {"device.attributes['gpu.nvidia.com']."
                                  "productName == 'NVIDIA A100-SXM4-40GB'"}));
  AddTemplate("mig", Exactly(1, {"device.attributes['gpu.nvidia.com']."
                                 "profile == '1g.10gb'"}));
  const DraDemand h100 = DraDemandOf(PodFromTemplate("h100"), catalog_);
  const DraDemand a100 = DraDemandOf(PodFromTemplate("a100"), catalog_);
  const DraDemand mig = DraDemandOf(PodFromTemplate("mig"), catalog_);
  const DraNodeDevices node = DevicesOn("dgx-1", 8, 5);
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "computed" : "memoised");
    EXPECT_TRUE(FitDraDemand(h100, "dgx-1", node).fits);
    EXPECT_THAT(FitDraDemand(a100, "dgx-1", node).reason,
                HasSubstr("needs 2 gpu.nvidia.com device(s); 0 free match"));
    EXPECT_THAT(FitDraDemand(mig, "dgx-1", node).reason,
                HasSubstr("on gpu-5: no such key: profile"));
  }
  // A node whose claims changed is a new value, its memo empty.
  DraNodeDevices busier = node;
  busier.devices[5].claim = "other/claim";
  busier.devices[6].claim = "other/claim";
  EXPECT_FALSE(FitDraDemand(h100, "dgx-1", busier).fits);
}

TEST(DraSelectorMemoTest, ComputesOncePerSetAndIsNotPartOfTheValue) {
  DraNodeDevices devices;
  int computed = 0;
  auto compute = [&] {
    ++computed;
    return SelectorVerdicts{SelectorVerdict::kMatches};
  };
  devices.memo.VerdictsFor(DraMemoKey("a"), compute);
  devices.memo.VerdictsFor(DraMemoKey("a"), compute);
  EXPECT_EQ(computed, 1);
  devices.memo.VerdictsFor(DraMemoKey("b"), compute);
  EXPECT_EQ(computed, 2);

  DraNodeDevices copy = devices;  // a copy starts empty
  copy.memo.VerdictsFor(DraMemoKey("a"), compute);
  EXPECT_EQ(computed, 3);
  EXPECT_EQ(copy, DraNodeDevices{});
}

TEST(DraSelectorMemoTest, OneOffSelectorSetsDoNotGrowIt) {
  DraSelectorMemo memo;
  int computed = 0;
  auto compute = [&] {
    ++computed;
    return SelectorVerdicts{};
  };
  for (size_t i = 0; i <= DraSelectorMemo::kMaxSets; ++i) {
    memo.VerdictsFor(DraMemoKey(std::to_string(i)), compute);
  }
  memo.VerdictsFor(DraMemoKey(std::to_string(DraSelectorMemo::kMaxSets)),
                   compute);
  EXPECT_EQ(computed, DraSelectorMemo::kMaxSets + 1);
  memo.VerdictsFor(DraMemoKey("0"), compute);  // the oldest was forgotten
  EXPECT_EQ(computed, DraSelectorMemo::kMaxSets + 2);
}

// One entry per expression outside the subset, naming where it is
// written: the class, the template, and the claims made from it.
TEST_F(DraDemandTest, UndecidedSelectorsAreListedOncePerExpression) {
  const std::string fancy =
      "device.attributes['gpu.nvidia.com'].productName.startsWith('NVIDIA H')";
  AddTemplate("fancy", Exactly(2, {fancy}));
  AddTemplate("plain", Exactly(2, {"device.driver == 'gpu.nvidia.com'"}));
  for (int i = 0; i < 7; ++i) {
    ResourceClaim claim;
    claim.meta = {.name = "w-" + std::to_string(i), .namespace_name = "ml"};
    claim.spec = Exactly(2, {fancy, fancy});
    catalog_.claims["ml/" + claim.meta.name] = claim;
  }
  catalog_.classes["odd"].selectors = {"device.driver.size() > 3"};

  std::vector<DraUndecidedSelector> undecided = UndecidedSelectors(catalog_);
  ASSERT_EQ(undecided.size(), 2u);
  EXPECT_EQ(undecided[0].expression, fancy);
  EXPECT_THAT(undecided[0].error,
              HasSubstr("outside the supported CEL subset at byte"));
  EXPECT_EQ(undecided[0].objects, 8u);  // the template and 7 claims
  EXPECT_THAT(undecided[0].written_in,
              ElementsAre("ResourceClaimTemplate ml/fancy request gpus",
                          "ResourceClaim ml/w-0 request gpus",
                          "ResourceClaim ml/w-1 request gpus",
                          "ResourceClaim ml/w-2 request gpus",
                          "ResourceClaim ml/w-3 request gpus"));
  EXPECT_EQ(undecided[1].expression, "device.driver.size() > 3");
  EXPECT_THAT(undecided[1].written_in, ElementsAre("DeviceClass odd"));
}

TEST_F(DraDemandTest, APodWithoutClaimsHasNoDemand) {
  Pod pod;
  pod.meta = {.name = "cpu", .namespace_name = "ml"};
  EXPECT_TRUE(DraDemandOf(pod, catalog_).empty());
}

}  // namespace
}  // namespace gpusched
