// explain's human output for a workload with DRA claims: the requests
// with who checks them, the charge, each DRA node's devices, and an
// admitted member's devices by their DRA names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/cli/render.h"
#include "api/codec/visibility_decode.h"
#include "tests/cli/contract_samples.h"

namespace gpusched::cli {
namespace {

using testing::kNow;

constexpr std::string_view kPendingWithClaims = R"json({
  "kind": "WorkloadExplanation", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "metadata": {"name": "train", "namespace": "ml"},
  "state": "Pending", "localQueue": "lq", "clusterQueue": "gpu", "cohort": "",
  "positionInClusterQueue": 0, "pendingInClusterQueue": 1,
  "positionInLocalQueue": 0, "pendingInLocalQueue": 1,
  "reasonCode": "NoFit", "message": "no node fits", "members": 1, "minMember": 1,
  "quota": [],
  "placement": [{"verdict": "needs 2 nvidia.com/gpu; 1 free (GPU 6)", "nodes": 1,
                 "examples": ["dgx-1"],
                 "dra": "template ml/two-gpus request gpus wants 2 gpu.nvidia.com: 1 free, 6 allocated, 1 tainted (gpu-7 xid=79:NoExecute) of 8 matching"}],
  "preemption": "",
  "dra": {"pod": "ml/train-0",
          "requests": [{"claim": "template ml/two-gpus", "request": "gpus",
                        "deviceClass": "gpu.nvidia.com", "count": 2,
                        "selectors": ["device.driver == 'gpu.nvidia.com'"],
                        "checkedBy": "gpusched"},
                       {"claim": "template ml/two-gpus", "request": "all",
                        "deviceClass": "gpu.nvidia.com", "count": 1, "selectors": [],
                        "checkedBy": "kube-scheduler",
                        "reason": "allocationMode All takes every matching device"}],
          "allocatedClaims": [], "allocatedNode": "", "missing": [],
          "charged": [{"resource": "nvidia.com/gpu", "amount": 2}],
          "uncharged": ["template ml/two-gpus request all: allocation mode All is not counted"],
          "members": []},
  "ahead": []})json";

TEST(RenderDraTest, PendingExplainNamesRequestsChargeAndShortDevices) {
  absl::StatusOr<ExplainedWorkload> e =
      DecodeWorkloadExplanation(kPendingWithClaims);
  ASSERT_TRUE(e.ok()) << e.status();
  const std::string text = RenderExplanation(*e, kNow);
  EXPECT_THAT(text, ::testing::HasSubstr(R"(
DRA claims (of ml/train-0):
  CLAIM                  REQUEST   DEVICE CLASS     COUNT   CHECKED BY
  template ml/two-gpus   gpus      gpu.nvidia.com   2       gpusched
  template ml/two-gpus   all       gpu.nvidia.com   1       kube-scheduler
    template ml/two-gpus request gpus selects: device.driver == 'gpu.nvidia.com'
    template ml/two-gpus request all is left to kube-scheduler: allocationMode All takes every matching device
  Charged:        nvidia.com/gpu: 2
  Not charged:    template ml/two-gpus request all: allocation mode All is not counted
)")) << text;
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "DRA DEVICES\n  needs 2 nvidia.com/gpu; 1 free (GPU 6)"
                        "   1       dgx-1      template ml/two-gpus request "
                        "gpus wants 2 gpu.nvidia.com: 1 free, 6 allocated, 1 "
                        "tainted (gpu-7 xid=79:NoExecute) of 8 matching"))
      << text;
}

TEST(RenderDraTest, AdmittedExplainNamesEachMembersDraDevices) {
  const ExplainedWorkload e{
      .name = "train",
      .state = "Admitted",
      .dra = DraSection{.members = {{.pod = "ml/train-0",
                                     .node = "dgx-1",
                                     .allocated = {"gpu-4", "gpu-5"},
                                     .claims = {"ml/train-0-gpus"}},
                                    {.pod = "ml/train-1",
                                     .node = "dgx-1",
                                     .planned = {"gpu-6", "gpu-7"}}}}};
  EXPECT_THAT(RenderExplanation(e, kNow), ::testing::HasSubstr(R"(
DRA devices:
  POD          NODE    DRA DEVICES           CLAIMS
  ml/train-0   dgx-1   gpu-4,gpu-5           ml/train-0-gpus
  ml/train-1   dgx-1   planned gpu-6,gpu-7   (not allocated yet)
)"));
}

}  // namespace
}  // namespace gpusched::cli
