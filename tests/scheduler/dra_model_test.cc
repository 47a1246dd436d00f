// The model on nodes served by DRA: a pod holds exactly the GPUs its
// claims were allocated, once, and its claims are charged to quota in the
// resource names quota counts.
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/cluster_model.h"
#include "scheduler/dra_inventory.h"
#include "scheduler/dra_quota.h"
#include "scheduler/extender_service.h"
#include "scheduler/fit_signature.h"
#include "scheduler/node_fit.h"
#include "scheduler/pod_view.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Device index -> the claim holding it and the pod UID it is reserved for.
using Claims = std::vector<std::tuple<int, std::string, std::string>>;

// Gives device `index` the claim `claims` names for it, if any.
void HoldIfClaimed(DraDeviceState& device, int index, const Claims& claims) {
  for (const auto& [held, claim, uid] : claims) {
    if (held != index) continue;
    device.claim = claim;
    device.reserved_for = uid;
  }
}

// An 8-GPU node as NVIDIA's DRA driver publishes it; `claims` maps a GPU
// index to the claim holding it and the pod UID it is reserved for.
std::shared_ptr<const DraNodeDevices> Dgx(const Claims& claims) {
  auto dra = std::make_shared<DraNodeDevices>();
  for (int i = 0; i < 8; ++i) {
    DraDeviceState gpu{.driver = "gpu.nvidia.com", .pool = "dgx-1"};
    gpu.device.name = "gpu-" + std::to_string(i);
    gpu.device.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString,
                                                    "gpu"};
    gpu.device.attributes["gpu.nvidia.com/index"] = {DraAttribute::Kind::kInt,
                                                     "", i};
    HoldIfClaimed(gpu, i, claims);
    dra->devices.push_back(std::move(gpu));
  }
  return dra;
}

Node DraNode(std::shared_ptr<const DraNodeDevices> devices,
             std::string version = "1") {
  Node node = MakeNode("dgx-1");
  node.meta.resource_version = std::move(version);
  node.dra_devices = std::move(devices);
  return node;
}

const PodAllocation& Held(const ClusterModel& model, std::string_view pod) {
  return *model.FindNode("dgx-1")->FindPod(pod);
}

TEST(DraModelTest, ARunningPodHoldsTheGpusItsClaimWasAllocatedOnce) {
  ClusterModel model;
  model.UpsertNode(DraNode(
      Dgx({{2, "ml/a-gpus", "uid-ml-a"}, {3, "ml/a-gpus", "uid-ml-a"}})));
  EXPECT_EQ(model.FindNode("dgx-1")->gpus().free_milli(), 6000);
  std::string warning;
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("dgx-1"), &warning)
          .ok());
  EXPECT_EQ(warning, "");
  EXPECT_THAT(Held(model, "ml/a").gpus.gpu_ids, ElementsAre(2, 3));
  const GpuInventory& gpus = model.FindNode("dgx-1")->gpus();
  EXPECT_EQ(gpus.free_milli(), 6000);  // not 4000: counted once
  EXPECT_THAT(gpus.devices()[2].holders, ElementsAre("ml/a"));
}

TEST(DraModelTest, AClaimReservedForAPodNotInTheModelHoldsItsGpus) {
  ClusterModel model;
  model.UpsertNode(DraNode(Dgx({{0, "ml/b-gpus", "uid-ml-b"}})));
  const GpuInventory& gpus = model.FindNode("dgx-1")->gpus();
  EXPECT_EQ(gpus.free_milli(), 7000);
  EXPECT_THAT(gpus.devices()[0].holders, ElementsAre("claim ml/b-gpus"));
}

// kube-scheduler allocated a's planned GPUs to b's claim before a's own
// claim: a keeps two GPUs (free ones), not none, and nothing is said lost.
TEST(DraModelTest, APlanTakenByAnotherClaimIsMovedToFreeGpus) {
  ClusterModel model;
  model.UpsertNode(DraNode(Dgx({})));
  Pod pod = MakePod("ml/a").Gpus(2).Build();
  ASSERT_TRUE(
      model.Place(pod, "dgx-1", GpuAssignment{{0, 1}, 1000}, false).ok());
  const std::string dropped = model.UpsertNode(DraNode(
      Dgx({{0, "ml/b-gpus", "uid-ml-b"}, {1, "ml/b-gpus", "uid-ml-b"}}), "2"));
  EXPECT_EQ(dropped, "");
  EXPECT_THAT(Held(model, "ml/a").gpus.gpu_ids, ElementsAre(2, 3));
  EXPECT_EQ(model.FindNode("dgx-1")->gpus().free_milli(), 4000);
}

// A bind holds the GPUs gpusched planned until the allocation is seen;
// then the pod holds what kube-scheduler allocated, and the planned ones
// are free again.
TEST(DraModelTest, TheAllocationReplacesThePlanWhenItArrives) {
  ClusterModel model;
  model.UpsertNode(DraNode(Dgx({})));
  Pod pod = MakePod("ml/a").Gpus(2).Build();
  ASSERT_TRUE(
      model.Place(pod, "dgx-1", GpuAssignment{{0, 1}, 1000}, false).ok());
  EXPECT_EQ(model.FindNode("dgx-1")->gpus().free_milli(), 6000);
  model.UpsertNode(DraNode(
      Dgx({{4, "ml/a-gpus", "uid-ml-a"}, {5, "ml/a-gpus", "uid-ml-a"}}), "2"));
  EXPECT_THAT(Held(model, "ml/a").gpus.gpu_ids, ElementsAre(4, 5));
  const GpuInventory& gpus = model.FindNode("dgx-1")->gpus();
  EXPECT_EQ(gpus.free_milli(), 6000);
  EXPECT_THAT(gpus.devices()[0].holders, IsEmpty());
  // Gone, the pod's GPUs are free (its claims go with it); placed again,
  // it holds the same ones.
  ASSERT_TRUE(model.RemovePod("uid-ml-a"));
  EXPECT_EQ(model.FindNode("dgx-1")->gpus().free_milli(), 8000);
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("dgx-1"), nullptr)
          .ok());
  EXPECT_THAT(Held(model, "ml/a").gpus.gpu_ids, ElementsAre(4, 5));
}

TEST(DraModelTest, BindingsOnDraNodesNameThePlannedDevices) {
  ExtenderService service;
  service.UpsertNodes({DraNode(Dgx({}))});
  EXPECT_THAT(service.Read([](const ClusterModel& model) {
    return model.FindNode("dgx-1")->gpus().DraNamesOf({1, 6});
  }),
              ElementsAre("gpu-1", "gpu-6"));
}

// Devices change under an unchanged Node object: the node is rebuilt.
TEST(DraModelTest, NewDevicesUnderTheSameResourceVersionRebuildTheNode) {
  ExtenderService service;
  service.UpsertNodes({DraNode(Dgx({}))});
  auto free = [&] {
    return service.Read([](const ClusterModel& model) {
      return model.FindNode("dgx-1")->gpus().free_milli();
    });
  };
  EXPECT_EQ(free(), 8000);
  service.UpsertNodes({DraNode(Dgx({{0, "ml/x", ""}}))});
  EXPECT_EQ(free(), 7000);
  service.SetDraDevices("dgx-1", Dgx({{0, "ml/x", ""}, {1, "ml/y", ""}}));
  EXPECT_EQ(free(), 6000);
  EXPECT_THAT(service.SetDraDevices("nope", nullptr), IsEmpty());
}

// A node event with equal devices (a status heartbeat) keeps the shared
// devices object, and with it the selector answers memoised on it.
TEST(DraModelTest, AnUnchangedNodeKeepsItsSharedDevices) {
  ExtenderService service;
  std::shared_ptr<const DraNodeDevices> first = Dgx({});
  service.UpsertNodes({DraNode(first, "1")});
  auto held = [&] {
    return service.Read([](const ClusterModel& model) {
      return model.FindNode("dgx-1")->node().dra_devices;
    });
  };
  service.UpsertNodes({DraNode(Dgx({}), "2")});
  EXPECT_EQ(held(), first);
  service.UpsertNodes({DraNode(Dgx({{0, "ml/x", ""}}), "3")});
  EXPECT_NE(held(), first);
  EXPECT_EQ(service.Read([](const ClusterModel& model) {
    return model.FindNode("dgx-1")->node().meta.resource_version;
  }),
            "3");
}

// An A100 with its GPU in MIG mode, as NVIDIA's DRA driver publishes it:
// seven 1g.10gb devices and no whole GPU; `claims` maps a MIG device's
// placement to the claim holding it and the pod UID it is reserved for.
std::shared_ptr<const DraNodeDevices> A100Mig(const Claims& claims) {
  auto dra = std::make_shared<DraNodeDevices>();
  for (int i = 0; i < 7; ++i) {
    DraDeviceState mig{.driver = "gpu.nvidia.com", .pool = "dgx-1"};
    mig.device.name = "gpu-0-mig-19-" + std::to_string(i) + "-1";
    mig.device.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString,
                                                    "mig"};
    mig.device.attributes["gpu.nvidia.com/profile"] = {
        DraAttribute::Kind::kString, "1g.10gb"};
    HoldIfClaimed(mig, i, claims);
    dra->devices.push_back(std::move(mig));
  }
  return dra;
}

const MigPool& Mig1g10gb(const ClusterModel& model) {
  return *model.FindNode("dgx-1")->gpus().FindMig("nvidia.com/mig-1g.10gb");
}

// A pod's MIG instances are held once: by its claim until the pod is in
// the model, then by the pod (its claims charge nvidia.com/mig-1g.10gb: 2),
// not by both. Gone and placed again, it holds them again.
TEST(DraModelTest, ARunningPodHoldsTheMigInstancesItsClaimWasAllocatedOnce) {
  ClusterModel model;
  model.UpsertNode(DraNode(
      A100Mig({{0, "ml/a-mig", "uid-ml-a"}, {1, "ml/a-mig", "uid-ml-a"}})));
  EXPECT_EQ(Mig1g10gb(model).used, 2);
  EXPECT_THAT(Mig1g10gb(model).holders, ElementsAre("claim ml/a-mig"));
  Pod pod = MakePod("ml/a").Mig("nvidia.com/mig-1g.10gb", 2).OnNode("dgx-1");
  ASSERT_TRUE(model.AddRunningPod(pod, nullptr).ok());
  EXPECT_EQ(Mig1g10gb(model).used, 2);  // not 4: counted once
  EXPECT_THAT(Mig1g10gb(model).holders, ElementsAre("ml/a"));
  EXPECT_THAT(Held(model, "ml/a").gpus.mig,
              ElementsAre(std::pair<std::string, int64_t>(
                  "nvidia.com/mig-1g.10gb", 2)));
  ASSERT_TRUE(model.RemovePod("uid-ml-a"));
  EXPECT_EQ(Mig1g10gb(model).used, 0);
  ASSERT_TRUE(model.AddRunningPod(pod, nullptr).ok());
  EXPECT_EQ(Mig1g10gb(model).used, 2);
}

// Bound with the instance gpusched planned, the pod holds its claim's once
// the allocation arrives: one instance, not the planned one and the
// claim's.
TEST(DraModelTest, TheMigAllocationReplacesThePlanWhenItArrives) {
  ClusterModel model;
  model.UpsertNode(DraNode(A100Mig({})));
  Pod pod = MakePod("ml/a").Mig("nvidia.com/mig-1g.10gb", 1).Build();
  ASSERT_TRUE(model
                  .Place(pod, "dgx-1",
                         GpuAssignment{.mig = {{"nvidia.com/mig-1g.10gb", 1}}},
                         false)
                  .ok());
  EXPECT_EQ(Mig1g10gb(model).used, 1);
  model.UpsertNode(DraNode(A100Mig({{3, "ml/a-mig", "uid-ml-a"}}), "2"));
  EXPECT_EQ(Mig1g10gb(model).used, 1);
  EXPECT_THAT(Mig1g10gb(model).holders, ElementsAre("ml/a"));
}

// --- charging claims to quota ---

ResourceClaimTemplate Template(std::string key, std::string device_class,
                               int64_t count) {
  ResourceClaimTemplate out;
  out.meta.namespace_name = key.substr(0, key.find('/'));
  out.meta.name = key.substr(key.find('/') + 1);
  DraDeviceRequest request{.name = "gpus"};
  request.alternatives.push_back(
      {.name = "gpus", .device_class = device_class, .count = count});
  out.spec.requests.push_back(request);
  return out;
}

DraCatalog Catalog() {
  DraCatalog catalog;
  catalog.templates["ml/two-gpus"] =
      Template("ml/two-gpus", "gpu.nvidia.com", 2);
  catalog.templates["ml/one-nic"] =
      Template("ml/one-nic", "nic.example.com", 1);
  DeviceClass gpu;
  gpu.meta.name = "gpu.nvidia.com";
  catalog.classes["gpu.nvidia.com"] = gpu;
  DeviceClass h100;
  h100.meta.name = "h100";
  h100.extended_resource_name = "example.com/h100";
  catalog.classes["h100"] = h100;
  DeviceClass nic;  // serves no extended resource: no quota resource
  nic.meta.name = "nic.example.com";
  catalog.classes["nic.example.com"] = nic;
  return catalog;
}

Pod ClaimPod(std::vector<std::string> templates) {
  Pod pod = MakePod("ml/a").Build();
  for (const std::string& name : templates) {
    pod.resource_claims.push_back({.name = name, .template_name = name});
  }
  return pod;
}

TEST(ChargeClaimsTest, TwoGpusFromATemplateChargeTwoNvidiaGpus) {
  ClaimCharge charge =
      ChargeClaims(ClaimPod({"two-gpus", "two-gpus"}), Catalog(), {});
  EXPECT_EQ(charge.requests.Get(kNvidiaGpu), 4);
  EXPECT_THAT(charge.uncharged, IsEmpty());
  Pod pod = ClaimPod({"two-gpus"});
  pod.claim_requests = charge.requests;
  EXPECT_EQ(EffectiveRequests(pod).Get(kNvidiaGpu), 4);
}

TEST(ChargeClaimsTest, AClassNoMappingNamesIsInadmissibleNamingTheField) {
  ClaimCharge charge = ChargeClaims(ClaimPod({"one-nic"}), Catalog(), {});
  EXPECT_TRUE(charge.requests.empty());
  EXPECT_EQ(charge.hold.kind, ClaimHold::Kind::kInadmissible);
  EXPECT_THAT(charge.hold.reason,
              HasSubstr("pod spec.resourceClaims[0] (one-nic): "
                        "ResourceClaimTemplate ml/one-nic "
                        "spec.spec.devices.requests[0].exactly."
                        "deviceClassName: Not found: DeviceClass "
                        "\"nic.example.com\" maps to no quota resource"));
}

TEST(ChargeClaimsTest, TheExtendedResourceClaimIsNotChargedAgain) {
  Pod pod = MakePod("ml/a").Gpus(4).Build();
  pod.extended_resource_claim = "a-extended-resources-x";
  ClaimCharge charge = ChargeClaims(pod, Catalog(), {});
  EXPECT_TRUE(charge.requests.empty());
  EXPECT_FALSE(charge.hold.held());
  EXPECT_EQ(EffectiveRequests(pod).Get(kNvidiaGpu), 4);
}

TEST(ChargeClaimsTest, MappingsReplaceTheDefaults) {
  std::vector<DeviceClassMapping> mappings = {
      {"example.com/nic", {"nic.example.com"}}};
  ClaimCharge charge = ChargeClaims(ClaimPod({"one-nic"}), Catalog(), mappings);
  EXPECT_EQ(charge.requests.Get("example.com/nic"), 1);
  EXPECT_FALSE(charge.hold.held());
  // gpu.nvidia.com is no default once the policy maps classes itself.
  charge = ChargeClaims(ClaimPod({"one-nic", "two-gpus"}), Catalog(), mappings);
  EXPECT_EQ(charge.hold.kind, ClaimHold::Kind::kInadmissible);
  EXPECT_THAT(charge.hold.reason, HasSubstr("\"gpu.nvidia.com\""));
}

TEST(ChargeClaimsTest, AClassTheAdminLeftOutsideQuotaIsChargedNothing) {
  std::vector<DeviceClassMapping> mappings = {
      {.device_classes = {"nic.example.com"}, .outside_quota = true}};
  ClaimCharge charge =
      ChargeClaims(ClaimPod({"one-nic", "two-gpus"}), Catalog(), mappings);
  EXPECT_FALSE(charge.hold.held());
  // The defaults still apply: no mapping names a resource.
  EXPECT_EQ(charge.requests.Get(kNvidiaGpu), 2);
  EXPECT_THAT(charge.uncharged,
              ElementsAre(HasSubstr("ml/one-nic request gpus: its DeviceClass "
                                    "is outside quota")));
}

TEST(ChargeClaimsTest, AsKueueAllAndAdminAccessAreInadmissible) {
  DraCatalog catalog = Catalog();
  DraRequestAlternative& gpus =
      catalog.templates["ml/two-gpus"].spec.requests[0].alternatives[0];
  gpus.mode = DraRequestAlternative::Mode::kAll;
  ClaimCharge charge = ChargeClaims(ClaimPod({"two-gpus"}), catalog, {});
  EXPECT_EQ(charge.hold.kind, ClaimHold::Kind::kInadmissible);
  EXPECT_THAT(charge.hold.reason,
              HasSubstr("spec.spec.devices.requests[0].exactly.allocationMode:"
                        " Unsupported value: \"All\""));
  EXPECT_TRUE(charge.requests.empty());
  gpus.mode = DraRequestAlternative::Mode::kExactCount;
  gpus.admin_access = true;
  charge = ChargeClaims(ClaimPod({"two-gpus"}), catalog, {});
  EXPECT_THAT(charge.hold.reason, HasSubstr("exactly.adminAccess"));
}

TEST(ChargeClaimsTest, AlternativesThatChargeDifferentlyAreInadmissible) {
  DraCatalog catalog = Catalog();
  DraDeviceRequest either{.name = "gpus", .first_available = true};
  either.alternatives = {
      {.name = "gpus/big", .device_class = "gpu.nvidia.com", .count = 2},
      {.name = "gpus/small", .device_class = "gpu.nvidia.com", .count = 1}};
  catalog.templates["ml/two-gpus"].spec.requests = {either};
  ClaimCharge charge = ChargeClaims(ClaimPod({"two-gpus"}), catalog, {});
  EXPECT_EQ(charge.hold.kind, ClaimHold::Kind::kInadmissible);
  EXPECT_THAT(charge.hold.reason,
              HasSubstr("spec.spec.devices.requests[0].firstAvailable: "
                        "Invalid value: its alternatives charge differently "
                        "(2 nvidia.com/gpu, 1 nvidia.com/gpu)"));
  // A deliberate difference from Kueue: alternatives that all charge the
  // same are charged that.
  either.alternatives[1].count = 2;
  catalog.templates["ml/two-gpus"].spec.requests = {either};
  charge = ChargeClaims(ClaimPod({"two-gpus"}), catalog, {});
  EXPECT_FALSE(charge.hold.held());
  EXPECT_EQ(charge.requests.Get(kNvidiaGpu), 2);
  // One alternative of a class no mapping names: inadmissible, by its path.
  either.alternatives[1].device_class = "nic.example.com";
  catalog.templates["ml/two-gpus"].spec.requests = {either};
  charge = ChargeClaims(ClaimPod({"two-gpus"}), catalog, {});
  EXPECT_THAT(charge.hold.reason,
              HasSubstr("firstAvailable[1].deviceClassName: Not found"));
}

TEST(ChargeClaimsTest, AClassTheDefaultsNeedIsWaitedFor) {
  DraCatalog catalog = Catalog();
  catalog.classes.erase("nic.example.com");
  ClaimCharge charge = ChargeClaims(ClaimPod({"one-nic"}), catalog, {});
  EXPECT_EQ(charge.hold.kind, ClaimHold::Kind::kClaimNotKnown);
  EXPECT_THAT(charge.hold.reason,
              HasSubstr("exactly.deviceClassName: waiting for DeviceClass "
                        "\"nic.example.com\": not known yet"));
}

TEST(ChargeClaimsTest, AnUnknownTemplateIsWaitedFor) {
  ClaimCharge charge = ChargeClaims(ClaimPod({"nope"}), Catalog(), {});
  EXPECT_EQ(charge.hold.kind, ClaimHold::Kind::kClaimNotKnown);
  EXPECT_EQ(charge.hold.reason,
            "pod spec.resourceClaims[0] (nope): waiting for "
            "ResourceClaimTemplate ml/nope: not known yet");
}

TEST(ChargeClaimsTest, AnInadmissibleRequestSpeaksBeforeAClaimNotKnown) {
  ClaimCharge charge =
      ChargeClaims(ClaimPod({"nope", "one-nic"}), Catalog(), {});
  EXPECT_EQ(charge.hold.kind, ClaimHold::Kind::kInadmissible);
  EXPECT_THAT(charge.hold.reason, HasSubstr("one-nic"));
}

// --- what the count does not say ---

TEST(DraPredicateTest, ARequestsOwnSelectorIsCheckedOnTheNodesDevices) {
  DraCatalog catalog = Catalog();
  ResourceClaimTemplate h100 = Template("ml/h100s", "gpu.nvidia.com", 2);
  h100.spec.requests[0].alternatives[0].selectors = {
      "device.attributes['gpu.nvidia.com'].productName == 'H100'"};
  catalog.templates["ml/h100s"] = h100;
  EXPECT_TRUE(CountSaysAll(DraDemandOf(ClaimPod({"two-gpus"}), catalog)));
  Pod pod = ClaimPod({"h100s"});
  DraDemand demand = DraDemandOf(pod, catalog);
  ASSERT_FALSE(CountSaysAll(demand));
  pod.claim_requests = ChargeClaims(pod, catalog, {}).requests;
  pod.dra_demand = std::make_shared<const DraDemand>(demand);

  auto devices = std::make_shared<DraNodeDevices>(*Dgx({}));
  for (DraDeviceState& state : devices->devices) {
    state.device.attributes["gpu.nvidia.com/productName"] = {
        DraAttribute::Kind::kString, "A100"};
  }
  NodeState a100(DraNode(devices));
  NodeFit fit = FitPodOnNode(PodView::Of(pod), a100);
  EXPECT_FALSE(fit.verdict.fits());
  EXPECT_THAT(fit.verdict.reason(), HasSubstr("h100s"));
  // New devices, as a refresh makes them: a node's devices never change
  // once shared (their selector answers are memoised with them).
  auto h100_devices = std::make_shared<DraNodeDevices>(*devices);
  for (DraDeviceState& state : h100_devices->devices) {
    state.device.attributes["gpu.nvidia.com/productName"].text = "H100";
  }
  NodeState h100_node(DraNode(h100_devices));
  fit = FitPodOnNode(PodView::Of(pod), h100_node);
  EXPECT_TRUE(fit.verdict.fits()) << fit.verdict.reason();
  EXPECT_EQ(fit.assignment.gpu_ids.size(), 2u);
  // Two pods that differ only in their claims never share a cached verdict.
  EXPECT_NE(FitSignature(PodView::Of(pod)),
            FitSignature(PodView::Of(MakePod("ml/a").Gpus(2).Build())));
}

}  // namespace
}  // namespace gpusched
