// What the load tools in bench/ rely on from a running extender: every
// response carries its server time, and in standalone mode a finished pod
// can be completed over HTTP so that filter + bind traffic reaches a steady
// state; nodeCacheCapable=false requests answer the same whether or not the
// model already knows the nodes.
#include <cstdlib>
#include <string>

#include "api/http/message.h"
#include "gtest/gtest.h"
#include "tests/http/test_server.h"
#include "tests/integration/harness.h"

namespace gpusched::testing {
namespace {

using http::testing::HeaderOf;

std::string DemoNode(const ServeApp& app) {
  return const_cast<ServeApp&>(app).service().Read(
      [](const ClusterModel& model) { return model.SortedNodes()[0]->name(); });
}

TEST(LoadSupportTest, EveryResponseCarriesItsServerTime) {
  auto app = StartApp();
  ASSERT_NE(app, nullptr);
  auto client = Connect(*app);
  ASSERT_NE(client, nullptr);
  const std::string body =
      FilterArgs(GpuPod("timed", 1), {DemoNode(*app)}).dump();
  for (const char* path : {"/filter", "/prioritize", "/no-such-path"}) {
    auto response = client->Send("POST", path, body);
    ASSERT_TRUE(response.ok()) << response.status();
    for (const char* header :
         {http::kServerTimeHeader, http::kServerCpuHeader}) {
      const std::string micros = HeaderOf(*response, header);
      ASSERT_FALSE(micros.empty()) << path << " " << header;
      EXPECT_GE(std::strtod(micros.c_str(), nullptr), 0.0) << micros;
    }
  }
}

TEST(LoadSupportTest, CompletingABoundPodFreesItsGpus) {
  auto app = StartApp();
  ASSERT_NE(app, nullptr);
  auto client = Connect(*app);
  ASSERT_NE(client, nullptr);
  const std::string node = DemoNode(*app);
  const nlohmann::json pod = GpuPod("done-soon", 1);
  auto free_gpus = [&] { return app->service().CountGpus().free; };
  const int64_t before = free_gpus();
  PostJson(*client, "/filter", FilterArgs(pod, {node}).dump());
  nlohmann::json bound = PostJson(*client, "/bind", BindArgs(pod, node).dump());
  ASSERT_EQ(bound["Error"], "") << bound.dump();
  EXPECT_EQ(free_gpus(), before - 1);

  nlohmann::json done = PostJson(*client, "/v1/pods/complete",
                                 R"({"PodUID":"uid-team-a-done-soon"})");
  EXPECT_EQ(done["Removed"], true);
  EXPECT_EQ(free_gpus(), before);
  // Idempotent: a second completion finds nothing.
  done = PostJson(*client, "/v1/pods/complete",
                  R"({"PodUID":"uid-team-a-done-soon"})");
  EXPECT_EQ(done["Removed"], false);
  PostJson(*client, "/v1/pods/complete", R"({"PodName":"x"})", 400);
}

class RecordingSink : public BindSink {
 public:
  absl::Status Bind(const Pod&, const std::string&,
                    const GpuAssignment&) override {
    return absl::OkStatus();
  }
};

TEST(LoadSupportTest, CompletionIsRefusedInLiveMode) {
  RecordingSink sink;
  ExtenderService service(ServiceOptions{.bind_sink = &sink});
  Metrics metrics;
  ExtenderApi api(service, metrics, ExtenderApiOptions{});
  http::Response response =
      api.CompletePod(http::Request{.method = "POST",
                                    .target = "/v1/pods/complete",
                                    .body = R"({"PodUID":"u"})"});
  EXPECT_EQ(response.status, 409);
}

TEST(LoadSupportTest, NodeListFilterAnswersTheSameForKnownAndNewNodes) {
  auto app = StartApp();
  ASSERT_NE(app, nullptr);
  auto client = Connect(*app);
  ASSERT_NE(client, nullptr);
  const nlohmann::json node = {
      {"metadata", {{"name", "fresh-1"}, {"resourceVersion", "5"}}},
      {"status",
       {{"allocatable",
         {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}}},
        {"capacity",
         {{"cpu", "64"}, {"memory", "256Gi"}, {"nvidia.com/gpu", "4"}}}}}};
  const nlohmann::json args = {{"Pod", GpuPod("listed", 2)},
                               {"Nodes", {{"items", {node}}}},
                               {"NodeNames", nullptr}};
  // First call: the node is new and decoded; second: known, only named.
  nlohmann::json first = PostJson(*client, "/filter", args.dump());
  nlohmann::json second = PostJson(*client, "/filter", args.dump());
  EXPECT_EQ(first, second);
  ASSERT_EQ(second["Nodes"]["items"].size(), 1u) << second.dump();
  EXPECT_EQ(second["Nodes"]["items"][0], node);
}

}  // namespace
}  // namespace gpusched::testing
