// `gpusched serve --dashboard-listen` as a newcomer runs it: the demo
// cluster's GPU map with its queued pods coloured by queue, on loopback
// only.
#include <signal.h>

#include <cstdint>
#include <regex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "scheduler/base/strings.h"
#include "tests/integration/harness.h"
#include "tests/integration/subprocess.h"

namespace gpusched::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

constexpr std::string_view kApi = "/apis/visibility.gpusched.io/v1alpha1";

uint16_t DashboardPort(const std::string& line) {
  std::smatch match;
  if (!std::regex_search(
          line, match,
          std::regex(R"(Dashboard: http://127\.0\.0\.1:(\d+)/)"))) {
    return 0;
  }
  return static_cast<uint16_t>(std::stoi(match[1]));
}

// The demo cluster's llm-pretrain-worker-0 is in team-a's LocalQueue: with
// the example policy its GPUs are coloured by ClusterQueue team-a.
TEST(DashboardProcessTest, TheDemoClusterHasAMapColouredByQueue) {
  Subprocess serve(
      {GPUSCHED_BINARY, "serve", "--listen", "127.0.0.1:0", "--policy",
       std::string(GPUSCHED_SOURCE_DIR) + "/deploy/examples/policy.yaml",
       "--dashboard-listen", "127.0.0.1:0"});
  const uint16_t port = DashboardPort(
      serve.ReadLineContaining("Dashboard:", milliseconds(20000)));
  ASSERT_NE(port, 0) << serve.stdout_text();
  auto client = http::Client::Connect("127.0.0.1", port);
  ASSERT_TRUE(client.ok()) << client.status();
  auto root = (*client)->Send("GET", "/", "");
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_EQ(root->status, 302);
  auto page = (*client)->Send("GET", absl::StrCat(Sv(kApi), "/dashboard/"), "");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->status, 200);
  json colour;
  for (int tries = 0; tries < 50 && colour.is_null(); ++tries) {
    auto nodes =
        (*client)->Send("GET", absl::StrCat(Sv(kApi), "/gpunodes"), "");
    ASSERT_TRUE(nodes.ok()) << nodes.status();
    const json list = json::parse(nodes->body);
    ASSERT_EQ(list["items"].size(), 12u) << nodes->body;
    for (const json& node : list["items"]) {
      for (const json& pod : node["status"]["pods"]) {
        if (pod["name"] == "llm-pretrain-worker-0" &&
            pod.contains("clusterQueue")) {
          colour = pod;
        }
      }
    }
    if (colour.is_null()) std::this_thread::sleep_for(milliseconds(100));
  }
  EXPECT_EQ(colour["clusterQueue"], "team-a") << serve.stdout_text();
  EXPECT_EQ(colour["localQueue"], "training");
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(milliseconds(10000)), 0);
}

TEST(DashboardProcessTest, ANonLoopbackAddressIsRefusedAtStart) {
  Subprocess serve(
      {GPUSCHED_BINARY, "serve", "--dashboard-listen", "0.0.0.0:8090"});
  EXPECT_EQ(serve.Wait(milliseconds(10000)), 2);
  EXPECT_NE(serve.stdout_text().find("is not a loopback address"),
            std::string::npos)
      << serve.stdout_text();
}

}  // namespace
}  // namespace gpusched::testing
