// The API client with an exec credential plugin (exec_credential.h): the
// plugin's token on every request, and a 401 answered by one more run of
// the plugin and one retry.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/http/client.h"
#include "api/kube/kube_client.h"
#include "tests/kube/exec_plugin_util.h"
#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::HasSubstr;

// The fake server's configuration with the token replaced by `plugin`.
KubeConfig WithPlugin(const FakeApiServer& server, std::string plugin) {
  KubeConfig config = server.Config();
  config.token.clear();
  config.exec = PluginSpec(std::move(plugin));
  return config;
}

std::unique_ptr<KubeClient> ExecClientFor(KubeConfig config) {
  absl::StatusOr<std::unique_ptr<KubeClient>> client =
      KubeClient::Create(std::move(config));
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

TEST(KubeClientExecTest, RequestsCarryThePluginsToken) {
  FakeApiServer server;  // accepts "Bearer test-token" only
  PluginDir dir;
  auto client = ExecClientFor(WithPlugin(
      server,
      dir.Script("plugin", PrintCredential(R"({"token":"test-token"})"))));
  EXPECT_EQ(dir.Runs(), 0);  // creating the client runs nothing
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<ListResult> list = client->List("/api/v1/nodes");
    ASSERT_TRUE(list.ok()) << list.status();
  }
  absl::Status watched = client->Watch(
      "/api/v1/nodes", "1", [](const WatchEvent&) { return absl::OkStatus(); });
  EXPECT_TRUE(watched.ok()) << watched;
  EXPECT_EQ(server.Count("DENIED"), 0);
  EXPECT_EQ(dir.Runs(), 1);  // cached: no expiry
}

TEST(KubeClientExecTest, A401RunsThePluginAgainAndRetriesOnce) {
  FakeApiServer server;
  PluginDir dir;
  // The first run's token is stale; later runs give the good one.
  const std::string plugin =
      dir.Script("plugin", "token=test-token\n[ $(wc -l < '" + dir.path() +
                               "/runs') -gt 1 ] || token=stale\n" +
                               PrintCredential(R"({"token":"$token"})"));
  auto client = ExecClientFor(WithPlugin(server, plugin));
  absl::StatusOr<ListResult> list = client->List("/api/v1/nodes");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(server.Count("DENIED"), 1);
  EXPECT_EQ(dir.Runs(), 2);
  ASSERT_TRUE(client->List("/api/v1/nodes").ok());
  EXPECT_EQ(dir.Runs(), 2);  // the new token is kept
}

TEST(KubeClientExecTest, ATokenRefusedTwiceIsUnauthenticated) {
  FakeApiServer server;
  PluginDir dir;
  auto client = ExecClientFor(WithPlugin(
      server, dir.Script("plugin", PrintCredential(R"({"token":"wrong"})"))));
  absl::StatusOr<ListResult> list = client->List("/api/v1/nodes");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(server.Count("DENIED"), 2);  // the request and one retry
  EXPECT_EQ(dir.Runs(), 2);
}

TEST(KubeClientExecTest, AWatchRefusedOnceIsRetriedWithANewToken) {
  FakeApiServer server;
  PluginDir dir;
  const std::string plugin =
      dir.Script("plugin", "token=test-token\n[ $(wc -l < '" + dir.path() +
                               "/runs') -gt 1 ] || token=stale\n" +
                               PrintCredential(R"({"token":"$token"})"));
  auto client = ExecClientFor(WithPlugin(server, plugin));
  absl::Status watched = client->Watch(
      "/api/v1/nodes", "1", [](const WatchEvent&) { return absl::OkStatus(); });
  EXPECT_TRUE(watched.ok()) << watched;
  EXPECT_EQ(server.Count("DENIED"), 1);
  EXPECT_EQ(dir.Runs(), 2);
}

TEST(KubeClientExecTest, AFailingPluginIsAnErrorMarkedNotSent) {
  FakeApiServer server;
  PluginDir dir;
  auto client =
      ExecClientFor(WithPlugin(server, dir.Script("plugin",
                                                  "echo 'log in first' >&2\n"
                                                  "exit 2")));
  absl::StatusOr<std::string> got = client->Get("/api/v1/namespaces/a/pods/p");
  ASSERT_FALSE(got.ok());
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("GET /api/v1/namespaces/a/pods/p: getting credentials: "
                        "exec: "
                        "executable "));
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("failed with exit code 2; stderr: log in first"));
  // Not NotFound or another code callers read as the server's answer.
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_TRUE(got.status().GetPayload(http::kNotSentPayload).has_value());
  EXPECT_EQ(server.Count("GET pod"), 0);
}

TEST(KubeClientExecTest, AMissingPluginIsNotMistakenForAMissingObject) {
  FakeApiServer server;
  KubeConfig config = server.Config();
  config.token.clear();
  config.exec = PluginSpec("gpusched-no-such-plugin");
  auto client = ExecClientFor(config);
  absl::StatusOr<std::string> got = client->Get("/api/v1/namespaces/a/pods/p");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(got.status().message()),
              HasSubstr("exec: executable gpusched-no-such-plugin not found"));
}

TEST(KubeClientExecTest, AFixedTokenTakesPrecedenceOverThePlugin) {
  FakeApiServer server;
  PluginDir dir;
  KubeConfig config = WithPlugin(
      server, dir.Script("plugin", PrintCredential(R"({"token":"wrong"})")));
  config.token = "test-token";
  auto client = ExecClientFor(config);
  ASSERT_TRUE(client->List("/api/v1/nodes").ok());
  EXPECT_EQ(dir.Runs(), 0);
}

}  // namespace
}  // namespace gpusched::kube::testing
