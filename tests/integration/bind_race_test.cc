// Many clients racing filter+bind for the last free GPUs get exactly as
// many successes as there are GPUs, and no GPU is ever assigned twice.
#include <atomic>
#include <set>
#include <thread>

#include "tests/integration/harness.h"

namespace gpusched::testing {
namespace {

using nlohmann::json;

TEST(BindRaceTest, ThirtyTwoClientsGetExactlyTheEightFreeGpus) {
  ServeConfig config;
  config.cluster_file = TestData("integration/one-dgx-h100.yaml");
  config.threads = 4;
  auto app = StartApp(config);
  ASSERT_NE(app, nullptr);
  constexpr int kClients = 32;
  std::atomic<int> bound{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      auto client = Connect(*app);
      json pod = GpuPod("racer-" + std::to_string(i), 1);
      json filtered =
          PostJson(*client, "/filter", FilterArgs(pod, {"dgx-race"}).dump());
      if (filtered["NodeNames"].empty()) {
        ++refused;
        return;
      }
      json result =
          PostJson(*client, "/bind", BindArgs(pod, "dgx-race").dump());
      if (result["Error"] == "") {
        ++bound;
      } else {
        ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bound.load(), 8);
  EXPECT_EQ(refused.load(), kClients - 8);
  auto client = Connect(*app);
  auto nodes = client->Send("GET", "/v1/nodes", "");
  ASSERT_TRUE(nodes.ok());
  json gpus = json::parse(nodes->body)["nodes"][0]["gpus"];
  std::set<std::string> holders;
  for (const json& gpu : gpus) {
    ASSERT_EQ(gpu["pods"].size(), 1u) << gpu.dump();  // never two per GPU
    holders.insert(gpu["pods"][0].get<std::string>());
  }
  EXPECT_EQ(holders.size(), 8u);
}

TEST(BindRaceTest, ConcurrentSharesNeverOverfillATimeSlicedGpu) {
  // l4-1: 4 GPUs x 4 replicas, GPU 0 already has 250 milli taken. 40
  // clients each want a 300-milli share: at most 3 fit per GPU (900 <=
  // 1000), and GPU 0 takes 2 (250 + 600 <= 1000): 2 + 3 * 3 = 11.
  auto app = StartApp();
  ASSERT_NE(app, nullptr);
  std::atomic<int> bound{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      auto client = Connect(*app);
      json pod = GpuPod("share-" + std::to_string(i), 1, "inference");
      pod["metadata"]["annotations"] = {{"gpusched.io/gpu-milli", "300"}};
      PostJson(*client, "/filter", FilterArgs(pod, {"l4-1"}).dump());
      json result = PostJson(*client, "/bind", BindArgs(pod, "l4-1").dump());
      if (result["Error"] == "") ++bound;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bound.load(), 11);
  auto client = Connect(*app);
  json nodes = json::parse(client->Send("GET", "/v1/nodes", "")->body);
  for (const json& node : nodes["nodes"]) {
    if (node["name"] != "l4-1") continue;
    for (const json& gpu : node["gpus"])
      EXPECT_GE(gpu["freeMilli"].get<int>(), 0);
  }
}

}  // namespace
}  // namespace gpusched::testing
