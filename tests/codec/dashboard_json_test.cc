// The wire formats of gpunodes and decisions.
#include "api/codec/dashboard_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace gpusched {
namespace {

using Json = nlohmann::json;

// dgx: GPU 0 held by a queued pod, GPU 1 by a pod outside the queues and
// unhealthy, and a MIG pool with one of two instances held.
GpuMap OneNode() {
  GpuMapNode node{.name = "dgx",
                  .labels = {{"nvidia.com/gpu.product", "H100"}},
                  .product = "H100",
                  .memory_mib = 81920,
                  .not_ready = true,
                  .pods = {"team-a/train-0", "team-b/solo"},
                  .gpus = {{.index = 0,
                            .used_milli = 1000,
                            .holders = {{.pod = 0, .amount = 1000}}},
                           {.index = 1,
                            .healthy = false,
                            .used_milli = 250,
                            .holders = {{.pod = 1, .amount = 250}}}},
                  .mig = {{.profile = "3g.20gb",
                           .capacity = 2,
                           .used = 1,
                           .holders = {{.pod = 1, .amount = 1}}}}};
  GpuMap map{.generation = 7};
  map.nodes.push_back(std::make_shared<const GpuMapNode>(std::move(node)));
  return map;
}

TEST(DashboardJsonTest, GpuNodesNameEachHoldersQueue) {
  const AdmittedWorkload train{.key = "team-a/train",
                               .name = "train",
                               .local_queue = "lq",
                               .cluster_queue = "cq"};
  const Json list = Json::parse(EncodeGpuNodeList(
      OneNode(), "7.3", [&](std::string_view pod) -> const AdmittedWorkload* {
        return pod == "team-a/train-0" ? &train : nullptr;
      }));
  EXPECT_EQ(list["kind"], "GPUNodeList");
  EXPECT_EQ(list["metadata"]["resourceVersion"], "7.3");
  const Json& node = list["items"][0];
  EXPECT_EQ(node["metadata"]["name"], "dgx");
  EXPECT_EQ(node["metadata"]["labels"]["nvidia.com/gpu.product"], "H100");
  const Json& status = node["status"];
  EXPECT_EQ(status["ready"], false);
  EXPECT_EQ(status["memoryMiB"], 81920);
  EXPECT_EQ(status["pods"][0],
            Json::parse(R"({"namespace":"team-a","name":"train-0",)"
                        R"("workload":"train","clusterQueue":"cq",)"
                        R"("localQueue":"lq"})"));
  EXPECT_EQ(status["pods"][1],
            Json::parse(R"({"namespace":"team-b","name":"solo"})"));
  EXPECT_EQ(status["gpus"][1],
            Json::parse(R"({"index":1,"healthy":false,"usedMilli":250,)"
                        R"("holders":[{"pod":1,"milli":250}]})"));
  EXPECT_EQ(status["mig"][0],
            Json::parse(R"({"profile":"3g.20gb","capacity":2,"used":1,)"
                        R"("holders":[{"pod":1,"instances":1}]})"));
}

TEST(DashboardJsonTest, DraNodesNameTheirDevicesClaimsAndTaints) {
  GpuMapNode node{
      .name = "dgx-1",
      .gpus = {{.index = 0,
                .used_milli = 1000,
                .dra_name = "gpu-0",
                .claim = "ml/a-gpus"},
               {.index = 1,
                .healthy = false,
                .dra_name = "gpu-1",
                .taints = {"xid=79:NoExecute"}}},
      .mig = {{.profile = "1g.10gb",
               .capacity = 1,
               .dra_devices = {"gpu-2-mig-1g.10gb-0"}}},
      .gpu_source = GpuSource::kDra,
      .dra_tainted = {"gpu-1 xid=79:NoExecute"},
      .dra_problems = {"pool gpu.nvidia.com/x: generation 3 has 1 of 2"}};
  GpuMap map{.generation = 1};
  map.nodes.push_back(std::make_shared<const GpuMapNode>(std::move(node)));
  const Json status = Json::parse(EncodeGpuNodeList(map, "1", [](auto) {
    return static_cast<const AdmittedWorkload*>(nullptr);
  }))["items"][0]["status"];
  EXPECT_EQ(status["gpuSource"], "DRA");
  EXPECT_EQ(status["gpus"][0],
            Json::parse(R"({"index":0,"healthy":true,"usedMilli":1000,)"
                        R"("holders":[],"draDevice":"gpu-0",)"
                        R"("claim":"ml/a-gpus"})"));
  EXPECT_EQ(status["gpus"][1]["taints"],
            Json::parse(R"(["xid=79:NoExecute"])"));
  EXPECT_EQ(status["mig"][0]["draDevices"],
            Json::parse(R"(["gpu-2-mig-1g.10gb-0"])"));
  EXPECT_EQ(status["draTainted"][0], "gpu-1 xid=79:NoExecute");
  EXPECT_EQ(status["draProblems"][0],
            "pool gpu.nvidia.com/x: generation 3 has 1 of 2");
}

TEST(DashboardJsonTest, DeviceGpusCarryNoDraFields) {
  const Json status = Json::parse(EncodeGpuNodeList(OneNode(), "1", [](auto) {
    return static_cast<const AdmittedWorkload*>(nullptr);
  }))["items"][0]["status"];
  EXPECT_FALSE(status.contains("gpuSource"));  // kNone in the fixture
  EXPECT_FALSE(status["gpus"][0].contains("draDevice"));
  EXPECT_FALSE(status.contains("draTainted"));
}

TEST(DashboardJsonTest, DecisionsKeepTheirOrderAndFields) {
  const RecentDecision preempted{.at_ms = 1'764'295'200'000,
                                 .kind = RecentDecision::Kind::kPreempted,
                                 .namespace_name = "team-b",
                                 .name = "low",
                                 .cluster_queue = "cq",
                                 .reason_code = "InClusterQueue",
                                 .message = "InClusterQueue: lower priority"};
  const RecentDecision admitted{.name = "solo", .reason_code = "Admitted"};
  const std::vector<const RecentDecision*> shown = {&preempted, &admitted};
  const Json list = Json::parse(EncodeDecisionList(shown));
  EXPECT_EQ(list["kind"], "DecisionList");
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0],
            Json::parse(R"({"metadata":{"name":"low","namespace":"team-b"},)"
                        R"("time":"2025-11-28T02:00:00Z",)"
                        R"("decision":"Preempted","clusterQueue":"cq",)"
                        R"("reasonCode":"InClusterQueue",)"
                        R"("message":"InClusterQueue: lower priority"})"));
  EXPECT_EQ(list["items"][1]["decision"], "Admitted");
}

}  // namespace
}  // namespace gpusched
