// /v1/nodes on a node served by DRA: the GPUs carry the driver's device
// names, and the node says what its drivers publish that is not offered.
#include <memory>
#include <string>

#include "api/server/nodes_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "scheduler/cluster_model.h"
#include "scheduler/dra_inventory.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;

TEST(NodesJsonDraTest, NamesDraDevicesTheirTaintsAndProblems) {
  auto dra = std::make_shared<DraNodeDevices>();
  for (int i = 0; i < 2; ++i) {
    DraDeviceState gpu{.driver = "gpu.nvidia.com", .pool = "dgx-1"};
    gpu.device.name = "gpu-" + std::to_string(i);
    gpu.device.attributes["gpu.nvidia.com/type"] = {DraAttribute::Kind::kString,
                                                    "gpu"};
    dra->devices.push_back(std::move(gpu));
  }
  dra->devices[1].device.taints.push_back({"xid", "79", "NoExecute"});
  dra->problems.push_back("pool gpu.nvidia.com/x: generation 3 has 1 of 2");
  Node node = MakeNode("dgx-1");
  node.dra_devices = dra;
  ClusterModel model;
  model.UpsertNode(node);
  model.UpsertNode(MakeNode("plain").Gpus(1));

  const nlohmann::json nodes = nlohmann::json::parse(EncodeNodes(model));
  const nlohmann::json& dgx = nodes["nodes"][0];
  ASSERT_EQ(dgx["name"], "dgx-1");
  EXPECT_EQ(dgx["gpus"][0]["draDevice"], "gpu-0");
  EXPECT_EQ(dgx["gpus"][1]["healthy"], false);
  EXPECT_EQ(dgx["dra"]["devices"], 2);
  EXPECT_EQ(dgx["dra"]["taints"][0],
            "gpu.nvidia.com/dgx-1/gpu-1 xid=79:NoExecute");
  EXPECT_EQ(dgx["dra"]["problems"][0],
            "pool gpu.nvidia.com/x: generation 3 has 1 of 2");
  const nlohmann::json& plain = nodes["nodes"][1];
  EXPECT_FALSE(plain.contains("dra"));
  EXPECT_FALSE(plain["gpus"][0].contains("draDevice"));
  EXPECT_FALSE(nodes.contains("dra"));  // no selector outside the subset
}

TEST(NodesJsonDraTest, ListsTheSelectorsLeftToKubeScheduler) {
  ClusterModel model;
  model.UpsertNode(MakeNode("plain").Gpus(1));
  DraUndecidedSelector fancy{
      .expression =
          "device.attributes['gpu.nvidia.com'].productName."
          "startsWith('NVIDIA H')",
      .error = "outside the supported CEL subset at byte 52: a call",
      .written_in = {"ResourceClaimTemplate ml/h request gpus"},
      .objects = 3};
  const nlohmann::json nodes =
      nlohmann::json::parse(EncodeNodes(model, {fancy}));
  const nlohmann::json& listed = nodes["dra"]["selectorsOutsideSubset"];
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["expression"], fancy.expression);
  EXPECT_EQ(listed[0]["error"], fancy.error);
  EXPECT_EQ(listed[0]["writtenIn"][0],
            "ResourceClaimTemplate ml/h request gpus");
  EXPECT_EQ(listed[0]["objects"], 3);
  EXPECT_EQ(listed[0]["decidedBy"], "kube-scheduler");
}

}  // namespace
}  // namespace gpusched
