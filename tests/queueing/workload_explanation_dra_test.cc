// explain of a workload with DRA claims: its requests as the DRA sync
// resolves them, how each refusing DRA node's devices stand, and an
// admitted member's devices by their DRA names.
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "queueing/workload_explanation.h"
#include "tests/queueing/engine_fixture.h"
#include "tests/scheduler/dra_builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::GpuTemplateCatalog;
using ::gpusched::testing::MakeDraDevices;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A DGX H100 whose GPUs only NVIDIA's DRA driver publishes.
Node DraDgx(std::shared_ptr<const DraNodeDevices> devices) {
  Node node = Dgx("dgx-dra");
  node.allocatable = {{"cpu", 224000}, {"pods", 110}};
  node.capacity = node.allocatable;
  node.dra_devices = std::move(devices);
  return node;
}

// A gang member asking 2 GPUs through a claim template, charged as the
// sync charges it.
Pod ClaimPod(const std::string& group) {
  Pod pod = GangPod("team-a", group, 0, 0, 1);
  pod.containers[0].requests = {};
  pod.resource_claims.push_back({.name = "gpus", .template_name = "two-gpus"});
  pod.claim_requests = {{"nvidia.com/gpu", 2}};
  return pod;
}

// The DRA sync's answers, from a catalog of the class and the template.
DraLookup Lookup() {
  auto catalog = std::make_shared<const DraCatalog>(
      GpuTemplateCatalog("team-a", "two-gpus", 2));
  return {.claims = [catalog](const Pod& pod,
                              const std::vector<DeviceClassMapping>& m) {
    return DraPodClaims{.demand = DraDemandOf(pod, *catalog),
                        .charge = ChargeClaims(pod, *catalog, m)};
  }};
}

class WorkloadExplanationDraTest : public EngineFixture {
 protected:
  WorkloadExplanation Explain(const std::string& key) {
    absl::StatusOr<WorkloadExplanation> out =
        ExplainWorkload(*engine_, model_, key, Lookup());
    EXPECT_TRUE(out.ok()) << out.status();
    return out.ok() ? *out : WorkloadExplanation{};
  }
};

TEST_F(WorkloadExplanationDraTest, PendingNamesItsRequestsAndTheShortDevices) {
  auto devices = MakeDraDevices("dgx-dra").Gpus(8).Taint(
      "gpu-7", {"xid", "79", "NoExecute"});
  for (int i = 0; i < 6; ++i) {
    devices.Claim("gpu-" + std::to_string(i), "team-b/other");
  }
  model_.UpsertNode(DraDgx(devices));
  Start(TwoTeams(), 0);
  engine_->AddPod(ClaimPod("train"), 0);
  engine_->Schedule(0);

  const WorkloadExplanation e = Explain("team-a/train");
  EXPECT_EQ(e.state, WorkloadExplanation::State::kPending);
  ASSERT_TRUE(e.dra.has_value());
  EXPECT_EQ(e.dra->pod, "team-a/train-0");
  ASSERT_EQ(e.dra->requests.size(), 1u);
  EXPECT_EQ(e.dra->requests[0].claim, "template team-a/two-gpus");
  EXPECT_EQ(e.dra->requests[0].device_class, "gpu.nvidia.com");
  EXPECT_EQ(e.dra->requests[0].count, 2);
  EXPECT_EQ(e.dra->charged.Get("nvidia.com/gpu"), 2);
  ASSERT_EQ(e.placement.size(), 1u);
  EXPECT_THAT(e.placement[0].verdict, HasSubstr("needs 2 nvidia.com/gpu"));
  // 8 GPUs match the class: 6 allocated to another claim, gpu-7 tainted.
  EXPECT_EQ(e.placement[0].dra,
            "template team-a/two-gpus request gpus wants 2 gpu.nvidia.com: "
            "1 free, 6 allocated, 1 tainted (gpu-7 xid=79:NoExecute) of 8 "
            "matching");
}

TEST_F(WorkloadExplanationDraTest, AdmittedNamesEachMembersDraDevices) {
  model_.UpsertNode(DraDgx(MakeDraDevices("dgx-dra").Gpus(8)));
  Start(TwoTeams(), 0);
  engine_->AddPod(ClaimPod("train"), 0);
  engine_->Schedule(0);

  WorkloadExplanation e = Explain("team-a/train");
  ASSERT_EQ(e.state, WorkloadExplanation::State::kAdmitted);
  ASSERT_TRUE(e.dra.has_value());
  ASSERT_EQ(e.dra->members.size(), 1u);
  EXPECT_EQ(e.dra->members[0].node, "dgx-dra");
  // Planned by gpusched: kube-scheduler has not allocated the claim yet.
  EXPECT_EQ(e.dra->members[0].planned.size(), 2u);
  EXPECT_TRUE(e.dra->members[0].allocated.empty());

  // kube-scheduler allocates gpu-4 and gpu-5 and reserves them for the pod.
  model_.UpsertNode(
      DraDgx(MakeDraDevices("dgx-dra")
                 .Gpus(8)
                 .Claim("gpu-4", "team-a/train-0-gpus", "team-a-train-0")
                 .Claim("gpu-5", "team-a/train-0-gpus", "team-a-train-0")));
  e = Explain("team-a/train");
  ASSERT_EQ(e.dra->members.size(), 1u);
  EXPECT_THAT(e.dra->members[0].allocated, ElementsAre("gpu-4", "gpu-5"));
  EXPECT_THAT(e.dra->members[0].claims, ElementsAre("team-a/train-0-gpus"));
}

TEST_F(WorkloadExplanationDraTest, AWorkloadWithoutClaimsHasNoDraPart) {
  Start(TwoTeams(), 1);
  SubmitGang("team-a", "plain", 1, 2, 0);
  engine_->Schedule(0);
  EXPECT_FALSE(Explain("team-a/plain").dra.has_value());
}

}  // namespace
}  // namespace gpusched
