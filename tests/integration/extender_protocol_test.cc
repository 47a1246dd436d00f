// The extender verbs over real HTTP, with requests shaped exactly as
// kube-scheduler builds them (shared/fixtures/extender-v1), in both
// nodeCacheCapable modes, on the embedded demo cluster.
#include <algorithm>

#include "tests/integration/harness.h"

namespace gpusched::testing {
namespace {

using nlohmann::json;

const std::vector<std::string> kDemoNodes = {
    "a100-mig-0", "a100-mig-1", "a100-mig-2", "dgx-h100-0",
    "dgx-h100-1", "dgx-h100-2", "dgx-h100-3", "l4-0",
    "l4-1",       "l4-2",       "t4-0",       "t4-1"};

class ExtenderProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_ = StartApp();
    ASSERT_NE(app_, nullptr);
    client_ = Connect(*app_);
    ASSERT_NE(client_, nullptr);
  }
  json Post(const std::string& path, const json& body, int status = 200) {
    return PostJson(*client_, path, body.dump(), status);
  }
  std::unique_ptr<ServeApp> app_;
  std::unique_ptr<http::Client> client_;
};

// The same, for the tests that read shared/fixtures (GPUSCHED_SHARED_DIR):
// a suite named *SharedFixtureTest is labelled shared_fixtures
// (tests/CMakeLists.txt), which a build without that folder leaves out.
class ExtenderSharedFixtureTest : public ExtenderProtocolTest {};

TEST_F(ExtenderSharedFixtureTest, ConstructedFilterFixtureFailsUnknownNodes) {
  json result = PostJson(
      *client_, "/filter",
      SharedFixture("extender-v1/constructed-filter-request-nodecache.json"));
  EXPECT_TRUE(result["Nodes"].is_null());
  EXPECT_EQ(result["NodeNames"], json::array());
  EXPECT_EQ(result["Error"], "");
  for (const char* node : {"gpu-node-a", "gpu-node-b", "gpu-node-c"}) {
    EXPECT_EQ(result["FailedNodes"][node], "node not known to gpusched");
  }
}

TEST_F(ExtenderSharedFixtureTest, UpstreamExtenderArgsFixtureIsAccepted) {
  // types_test.go fills both Nodes and NodeNames; both come back.
  json result = PostJson(*client_, "/filter",
                         SharedFixture("extender-v1/extender-args.json"));
  EXPECT_EQ(result["Error"], "");
  EXPECT_TRUE(result["Nodes"].is_object());
  EXPECT_TRUE(result["NodeNames"].is_array());
}

TEST_F(ExtenderProtocolTest, FilterSortsNodesIntoVerdictsWithReasons) {
  json result = Post("/filter", FilterArgs(GpuPod("train-0", 4), kDemoNodes));
  std::vector<std::string> passed = result["NodeNames"];
  // dgx-h100-0 has 6 free, -1/-3 have 8, -2 has 4; A100s have 4 whole GPUs;
  // l4-0 has 4; time-sliced l4-1 gives 4 replicas on 4 GPUs.
  EXPECT_EQ(passed,
            (std::vector<std::string>{"a100-mig-0", "a100-mig-1", "a100-mig-2",
                                      "dgx-h100-0", "dgx-h100-1", "dgx-h100-2",
                                      "dgx-h100-3", "l4-0", "l4-1"}));
  json unresolvable = result["FailedAndUnresolvableNodes"];
  EXPECT_EQ(unresolvable["l4-2"], "node is cordoned (spec.unschedulable)");
  EXPECT_EQ(unresolvable["t4-0"],
            "needs 4 nvidia.com/gpu; node has 2 Tesla-T4");
  EXPECT_EQ(unresolvable["t4-1"],
            "node has taint dedicated=inference:NoSchedule that the pod does "
            "not tolerate");
}

TEST_F(ExtenderProtocolTest, FilterReportsFreeGpusWhenNodeIsBusy) {
  // dgx-h100-2 runs a 4-GPU pod on GPUs 4-7: an 8-GPU pod must wait there.
  json result = Post("/filter", FilterArgs(GpuPod("big", 8), {"dgx-h100-2"}));
  EXPECT_EQ(result["FailedNodes"]["dgx-h100-2"],
            "needs 8 nvidia.com/gpu; 4 free (GPUs 0,1,2,3)");
}

TEST_F(ExtenderProtocolTest, GoFieldNamesAreMatchedCaseInsensitively) {
  json args = {{"pod", GpuPod("lower", 1)}, {"nodenames", {"dgx-h100-1"}}};
  json result = Post("/filter", args);
  EXPECT_EQ(result["NodeNames"], json::array({"dgx-h100-1"}));
}

TEST_F(ExtenderProtocolTest, NullListsAndMapsAreAccepted) {
  json pod = GpuPod("nulls", 1);
  pod["metadata"]["labels"] = nullptr;
  pod["spec"]["initContainers"] = nullptr;
  pod["spec"]["tolerations"] = nullptr;
  json result = Post(
      "/filter", {{"Pod", pod}, {"Nodes", nullptr}, {"NodeNames", nullptr}});
  EXPECT_EQ(result["Error"], "");
  EXPECT_TRUE(result["NodeNames"].is_null());
}

TEST_F(ExtenderSharedFixtureTest, FullNodeObjectsComeBackAndUpdateTheModel) {
  json node =
      json::parse(SharedFixture("node-h20-8gpu-mig-mixed-partial.json"));
  json other = node;
  other["metadata"]["name"] = "h20-tainted";
  other["spec"]["taints"] = {{{"key", "maint"}, {"effect", "NoSchedule"}}};
  json args = {
      {"Pod", GpuPod("h20-job", 2)},
      {"Nodes", {{"metadata", json::object()}, {"items", {node, other}}}},
      {"NodeNames", nullptr}};
  json result = Post("/filter", args);
  EXPECT_TRUE(result["NodeNames"].is_null());
  ASSERT_EQ(result["Nodes"]["items"].size(), 1u);
  EXPECT_EQ(result["Nodes"]["items"][0]["metadata"]["name"],
            "zkj-pa-uat-gpu-004");
  EXPECT_EQ(
      result["Nodes"]["items"][0]["status"]["allocatable"]["nvidia.com/gpu"],
      "7");
  EXPECT_TRUE(result["FailedAndUnresolvableNodes"].contains("h20-tainted"));
  // The nodes are in the model now: the names-only mode knows them.
  json by_name = Post(
      "/filter", FilterArgs(GpuPod("h20-job-2", 7), {"zkj-pa-uat-gpu-004"}));
  EXPECT_EQ(by_name["NodeNames"], json::array({"zkj-pa-uat-gpu-004"}));
}

TEST_F(ExtenderProtocolTest, PrioritizeReturnsABareArrayInRange) {
  json scores = Post("/prioritize", FilterArgs(GpuPod("score", 4), kDemoNodes));
  ASSERT_TRUE(scores.is_array());
  ASSERT_EQ(scores.size(), kDemoNodes.size());
  std::map<std::string, int> by_host;
  for (const json& s : scores) {
    EXPECT_GE(s["Score"].get<int>(), 0);
    EXPECT_LE(s["Score"].get<int>(), 10);
    by_host[s["Host"]] = s["Score"];
  }
  EXPECT_EQ(by_host["t4-0"], 0);  // does not fit
  // Whole-GPU pods pack onto the partly used DGX, keeping whole nodes free.
  EXPECT_GT(by_host["dgx-h100-2"], by_host["dgx-h100-1"]);
  EXPECT_GT(by_host["dgx-h100-0"], by_host["dgx-h100-3"]);
}

TEST_F(ExtenderProtocolTest, BindRecordsDevicesAndFilterSeesLessCapacity) {
  json pod = GpuPod("bound", 4);
  Post("/filter", FilterArgs(pod, {"dgx-h100-2"}));
  json bound = Post("/bind", BindArgs(pod, "dgx-h100-2"));
  EXPECT_EQ(bound, json({{"Error", ""}}));
  json again = Post("/filter", FilterArgs(GpuPod("next", 1), {"dgx-h100-2"}));
  EXPECT_EQ(again["FailedNodes"]["dgx-h100-2"],
            "needs 1 nvidia.com/gpu; 0 free");
  auto nodes = client_->Send("GET", "/v1/nodes", "");
  ASSERT_TRUE(nodes.ok());
  json model = json::parse(nodes->body);
  for (const json& n : model["nodes"]) {
    if (n["name"] != "dgx-h100-2") continue;
    for (int gpu = 0; gpu < 4; ++gpu) {
      EXPECT_EQ(n["gpus"][gpu]["pods"], json::array({"team-a/bound"}));
    }
  }
}

TEST_F(ExtenderProtocolTest, BindIsIdempotentOnUidAndNode) {
  json pod = GpuPod("twice", 2);
  Post("/filter", FilterArgs(pod, {"dgx-h100-3"}));
  EXPECT_EQ(Post("/bind", BindArgs(pod, "dgx-h100-3"))["Error"], "");
  EXPECT_EQ(Post("/bind", BindArgs(pod, "dgx-h100-3"))["Error"], "");
  std::string error = Post("/bind", BindArgs(pod, "dgx-h100-1"))["Error"];
  EXPECT_NE(error.find("already bound to node dgx-h100-3"), std::string::npos)
      << error;
  // Recorded once: 8 - 2 = 6 GPUs remain.
  json result = Post("/filter", FilterArgs(GpuPod("rest", 7), {"dgx-h100-3"}));
  EXPECT_EQ(result["FailedNodes"]["dgx-h100-3"],
            "needs 7 nvidia.com/gpu; 6 free (GPUs 2,3,4,5,6,7)");
}

TEST_F(ExtenderProtocolTest, BindOfAPodNeverFilteredIsAnError) {
  json result = Post("/bind", BindArgs(GpuPod("ghost", 1), "dgx-h100-1"));
  EXPECT_NE(result["Error"].get<std::string>().find("never sent to filter"),
            std::string::npos);
}

TEST_F(ExtenderSharedFixtureTest, ConstructedPreemptFixtureDropsUnknownNode) {
  json result = PostJson(
      *client_, "/preempt",
      SharedFixture("extender-v1/constructed-preempt-request-nodecache.json"));
  EXPECT_EQ(result, json({{"NodeNameToMetaVictims", json::object()}}));
}

TEST_F(ExtenderProtocolTest, PreemptKeepsOnlyNodesWhereVictimsFreeAGpuSet) {
  // Fill dgx-h100-1 with two 4-GPU pods; then an 8-GPU pod proposes victims.
  json a = GpuPod("low-a", 4), b = GpuPod("low-b", 4);
  for (const json& pod : {a, b}) {
    Post("/filter", FilterArgs(pod, {"dgx-h100-1"}));
    ASSERT_EQ(Post("/bind", BindArgs(pod, "dgx-h100-1"))["Error"], "");
  }
  json args = {
      {"Pod", GpuPod("high", 8)},
      {"NodeNameToVictims", nullptr},
      {"NodeNameToMetaVictims",
       {// Both victims: frees all 8 GPUs.
        {"dgx-h100-1",
         {{"Pods",
           {{{"UID", a["metadata"]["uid"]}}, {{"UID", b["metadata"]["uid"]}}}},
          {"NumPDBViolations", 0}}},
        // The 2-GPU pod on dgx-h100-0 frees 2: 6 + 2 = 8 GPUs, so it stays.
        {"dgx-h100-0",
         {{"Pods", {{{"UID", "c8de8cbb-4331-5bfa-a563-71243638dec9"}}}},
          {"NumPDBViolations", 0}}},
        // The victim named does not run on dgx-h100-2, so nothing is freed
        // there: 4 free GPUs stay too few.
        {"dgx-h100-2",
         {{"Pods", {{{"UID", "c8de8cbb-4331-5bfa-a563-71243638dec9"}}}},
          {"NumPDBViolations", 1}}}}}};
  json result = Post("/preempt", args);
  json victims = result["NodeNameToMetaVictims"];
  EXPECT_EQ(victims.size(), 2u) << result.dump();
  EXPECT_EQ(victims["dgx-h100-1"]["Pods"].size(), 2u);
  EXPECT_EQ(victims["dgx-h100-0"]["Pods"],
            json::array({{{"UID", "c8de8cbb-4331-5bfa-a563-71243638dec9"}}}));
  EXPECT_FALSE(victims.contains("dgx-h100-2"));
}

TEST_F(ExtenderProtocolTest, VerbsAreServedUnderAPrefixToo) {
  ServeConfig config;
  config.prefix = "/gpusched/v1";
  auto app = StartApp(config);
  auto client = Connect(*app);
  json result = PostJson(*client, "/gpusched/v1/filter",
                         FilterArgs(GpuPod("p", 1), {"dgx-h100-1"}).dump());
  EXPECT_EQ(result["NodeNames"], json::array({"dgx-h100-1"}));
}

TEST_F(ExtenderProtocolTest, HealthAndMetricsEndpoints) {
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    auto response = client_->Send("GET", path, "");
    ASSERT_TRUE(response.ok());
    EXPECT_EQ(response->status, 200) << path;
  }
  Post("/filter", FilterArgs(GpuPod("m", 1), {"dgx-h100-1"}));
  auto metrics = client_->Send("GET", "/metrics", "");
  ASSERT_TRUE(metrics.ok());
  const std::string& text = metrics->body;
  EXPECT_NE(
      text.find(
          "gpusched_extender_requests_total{verb=\"filter\",code=\"200\"} 1"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("gpusched_extender_request_duration_seconds_bucket{verb="
                      "\"filter\",le=\"+Inf\"} 1"),
            std::string::npos);
  EXPECT_NE(text.find("gpusched_nodes 12"), std::string::npos);
  // Demo: 4x8 H100 + 3x4 A100 + 3x4 L4 + 2x2 T4 = 60 whole GPUs; the pods
  // hold 2 + 4 (H100), 1 replica share (L4) and 1 T4.
  EXPECT_NE(text.find("gpusched_gpus{state=\"free\"} 52"), std::string::npos);
  // The demo's GPUs all come from the device plugin; no DRA devices.
  EXPECT_NE(
      text.find("gpusched_nodes_by_gpu_source{source=\"device_plugin\"} 12"),
      std::string::npos);
  EXPECT_NE(text.find("gpusched_dra_pool_problems 0"), std::string::npos);
  EXPECT_NE(text.find("gpusched_gpus{state=\"shared\"} 1"), std::string::npos);
}

TEST_F(ExtenderProtocolTest, NodesViewShowsTopologyAndMig) {
  auto response = client_->Send("GET", "/v1/nodes", "");
  ASSERT_TRUE(response.ok());
  json model = json::parse(response->body);
  ASSERT_EQ(model["nodes"].size(), 12u);
  std::map<std::string, json> by_name;
  for (const json& n : model["nodes"]) by_name[n["name"]] = n;
  EXPECT_EQ(by_name["dgx-h100-0"]["topology"]["source"], "annotation");
  EXPECT_EQ(by_name["dgx-h100-0"]["topology"]["summary"],
            "8 GPUs, NVLink all-to-all (NV18), 2 NUMA nodes");
  EXPECT_EQ(by_name["dgx-h100-0"]["gpus"][0]["model"], "NVIDIA-H100-80GB-HBM3");
  EXPECT_EQ(by_name["dgx-h100-0"]["gpus"][0]["state"], "used");
  bool saw_3g = false;
  for (const json& pool : by_name["a100-mig-0"]["mig"]) {
    if (pool["profile"] != "3g.20gb") continue;
    saw_3g = true;
    EXPECT_EQ(pool["used"], 1);
    EXPECT_EQ(pool["capacity"], 4);
  }
  EXPECT_TRUE(saw_3g);
  EXPECT_EQ(by_name["l4-1"]["gpus"][0]["freeMilli"], 750);
}

}  // namespace
}  // namespace gpusched::testing
