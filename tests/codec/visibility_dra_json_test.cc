// explain's DRA part on the wire: what the server encodes is what the
// plugin decodes, and a workload without claims carries none.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/codec/visibility_decode.h"
#include "api/codec/visibility_status_json.h"

namespace gpusched {
namespace {

using Json = nlohmann::json;

ExplainAnswer WithDra() {
  DraExplanation dra{
      .pod = "ml/train-0",
      .requests = {{.claim = "template ml/two-gpus",
                    .request = "gpus",
                    .device_class = "gpu.nvidia.com",
                    .count = 2,
                    .selectors = {"device.driver == 'gpu.nvidia.com'"}},
                   {.claim = "ml/all",
                    .request = "all",
                    .device_class = "gpu.nvidia.com",
                    .count = 1,
                    .left_to_kube_scheduler = "allocationMode All takes "
                                              "every matching device"}},
      .allocated_claims = {"ml/pinned"},
      .allocated_node = "dgx-1",
      .uncharged = {"claim ml/all request all: allocation mode All is not "
                    "counted"},
      .members = {{.pod = "ml/train-0",
                   .node = "dgx-1",
                   .allocated = {"gpu-2", "gpu-3"},
                   .claims = {"ml/train-0-gpus"}}}};
  dra.charged.Add("nvidia.com/gpu", 2);
  return {.name = "train",
          .explanation = {.key = "ml/train",
                          .namespace_name = "ml",
                          .placement = {{.verdict = "needs 2 nvidia.com/gpu",
                                         .nodes = 1,
                                         .examples = {"dgx-1"},
                                         .dra = "1 free of 8 matching"}},
                          .dra = std::move(dra)}};
}

TEST(VisibilityDraJsonTest, RequestsSayWhoChecksThemAndWhy) {
  const Json e = Json::parse(EncodeWorkloadExplanation(WithDra()));
  EXPECT_EQ(e["dra"]["requests"][0],
            Json::parse(R"({"claim":"template ml/two-gpus","request":"gpus",)"
                        R"("deviceClass":"gpu.nvidia.com","count":2,)"
                        R"("selectors":["device.driver == 'gpu.nvidia.com'"],)"
                        R"("checkedBy":"gpusched"})"));
  EXPECT_EQ(e["dra"]["requests"][1]["checkedBy"], "kube-scheduler");
  EXPECT_EQ(e["dra"]["charged"],
            Json::parse(R"([{"resource":"nvidia.com/gpu","amount":2}])"));
  EXPECT_EQ(e["placement"][0]["dra"], "1 free of 8 matching");
}

TEST(VisibilityDraJsonTest, ThePluginDecodesWhatTheServerEncodes) {
  absl::StatusOr<ExplainedWorkload> decoded =
      DecodeWorkloadExplanation(EncodeWorkloadExplanation(WithDra()));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_TRUE(decoded->dra.has_value());
  const DraSection& dra = *decoded->dra;
  EXPECT_EQ(dra.pod, "ml/train-0");
  ASSERT_EQ(dra.requests.size(), 2u);
  EXPECT_EQ(dra.requests[0].claim, "template ml/two-gpus");
  EXPECT_EQ(dra.requests[0].device_class, "gpu.nvidia.com");
  EXPECT_EQ(dra.requests[0].count, 2);
  EXPECT_EQ(dra.requests[0].selectors.size(), 1u);
  EXPECT_EQ(dra.requests[1].checked_by, "kube-scheduler");
  EXPECT_EQ(dra.requests[1].reason,
            "allocationMode All takes every matching device");
  EXPECT_EQ(dra.allocated_node, "dgx-1");
  EXPECT_EQ(
      dra.charged,
      (std::vector<std::pair<std::string, int64_t>>{{"nvidia.com/gpu", 2}}));
  EXPECT_EQ(dra.uncharged.size(), 1u);
  ASSERT_EQ(dra.members.size(), 1u);
  EXPECT_EQ(dra.members[0].allocated,
            (std::vector<std::string>{"gpu-2", "gpu-3"}));
  EXPECT_EQ(decoded->placement[0].dra, "1 free of 8 matching");
}

TEST(VisibilityDraJsonTest, AWorkloadWithoutClaimsCarriesNoDra) {
  ExplainAnswer answer = WithDra();
  answer.explanation.dra.reset();
  answer.explanation.placement[0].dra.clear();
  const Json e = Json::parse(EncodeWorkloadExplanation(answer));
  EXPECT_FALSE(e.contains("dra"));
  EXPECT_FALSE(e["placement"][0].contains("dra"));
}

}  // namespace
}  // namespace gpusched
