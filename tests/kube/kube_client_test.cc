#include "api/kube/kube_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "api/kube/watch_stream.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::unique_ptr<KubeClient> ClientFor(KubeConfig config) {
  absl::StatusOr<std::unique_ptr<KubeClient>> client =
      KubeClient::Create(std::move(config));
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

std::string Msg(const absl::Status& status) {
  return std::string(status.message());
}

TEST(KubeClientTest, ListReturnsBodyAndResourceVersion) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));  // version 2
  auto client = ClientFor(server.Config());
  absl::StatusOr<ListResult> list = client->List("/api/v1/nodes");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "2");
  EXPECT_THAT(list->body, HasSubstr("\"n1\""));
  EXPECT_TRUE(list->continue_token.empty());
}

TEST(KubeClientTest, WrongTokenIsAClearUnauthenticatedError) {
  FakeApiServer server;
  KubeConfig config = server.Config();
  config.token = "stale";
  auto client = ClientFor(config);
  absl::StatusOr<ListResult> list = client->List("/api/v1/pods");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_EQ(Msg(list.status()), "GET /api/v1/pods: HTTP 401: Unauthorized");
  EXPECT_EQ(server.Count("DENIED"), 1);
}

TEST(KubeClientTest, ErrorsCarryTheServersMessage) {
  FakeApiServer server;
  auto client = ClientFor(server.Config());
  absl::StatusOr<std::string> got =
      client->Get("/api/v1/namespaces/a/pods/missing");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Msg(got.status()), HasSubstr("pods \"missing\" not found"));
}

TEST(KubeClientTest, AnAnswersCodeAndMessageTellApartWhatOneStatusCodeJoins) {
  FakeApiServer server;
  server.FailNext(1, 503);
  auto client = ClientFor(server.Config());
  absl::StatusOr<std::string> got = client->Get("/api/v1/namespaces/a/pods/x");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  std::optional<HttpFailure> answer = HttpFailureOf(got.status());
  ASSERT_TRUE(answer.has_value());
  EXPECT_EQ(answer->code, 503);
  EXPECT_EQ(answer->message, "the server is going away");
}

TEST(KubeClientTest, PatchSendsAMergePatch) {
  FakeApiServer server;
  server.AddPod(GpuPod("a/p", 1));
  auto client = ClientFor(server.Config());
  absl::StatusOr<std::string> patched =
      client->Patch("/api/v1/namespaces/a/pods/p",
                    R"({"metadata":{"annotations":{"k":"v"}}})");
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ(server.Pod("a/p")["metadata"]["annotations"]["k"], "v");
}

TEST(KubeClientTest, ConnectionsAreKeptAliveAcrossCalls) {
  FakeApiServer server;
  server.AddPod(GpuPod("a/p", 1));
  auto client = ClientFor(server.Config());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(client->Get("/api/v1/namespaces/a/pods/p").ok());
  }
  EXPECT_EQ(server.Count("GET pod"), 20);
}

TEST(KubeClientTest, WatchDeliversEventsWhileTheStreamIsOpen) {
  FakeApiServer server({.watch_hold = 10s});
  auto client = ClientFor(server.Config());
  std::promise<std::string> first;
  std::stop_source stop;
  std::thread watcher([&] {
    bool delivered = false;
    // Ends Cancelled when the test stops it; only the event matters here.
    client
        ->Watch(
            "/api/v1/nodes", "1",
            [&](const WatchEvent& event) {
              if (!delivered) {
                first.set_value(std::string(WatchEventTypeName(event.type)) +
                                " " + std::string(event.resource_version));
                delivered = true;
              }
              return absl::OkStatus();
            },
            stop.get_token())
        .IgnoreError();
  });
  server.AddNode(GpuNode("n1", 8));
  // Arrives long before the server would end the watch (10 s).
  auto future = first.get_future();
  ASSERT_EQ(future.wait_for(3s), std::future_status::ready);
  EXPECT_EQ(future.get(), "ADDED 2");
  stop.request_stop();
  watcher.join();
}

TEST(KubeClientTest, WatchEndsOkWithABookmarkWhenTheServerCloses) {
  FakeApiServer server;  // closes watches after 200 ms
  server.AddNode(GpuNode("n1", 8));
  server.AddNode(GpuNode("n2", 8));
  auto client = ClientFor(server.Config());
  std::vector<std::string> seen;
  absl::Status status =
      client->Watch("/api/v1/nodes", "2", [&](const WatchEvent& event) {
        seen.push_back(std::string(WatchEventTypeName(event.type)) + " " +
                       std::string(event.resource_version));
        return absl::OkStatus();
      });
  EXPECT_TRUE(status.ok()) << status;
  EXPECT_THAT(seen, ElementsAre("ADDED 3", "BOOKMARK 3"));
}

TEST(KubeClientTest, WatchFromACompactedVersionIsGone) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.DeleteNodeUnwatched("n1");
  auto client = ClientFor(server.Config());
  absl::Status status = client->Watch(
      "/api/v1/nodes", "2", [](const WatchEvent&) { return absl::OkStatus(); });
  EXPECT_TRUE(IsGone(status)) << status;
  EXPECT_THAT(Msg(status), HasSubstr("too old resource version"));
}

TEST(KubeClientTest, StopClosesABlockedWatchPromptly) {
  FakeApiServer server({.watch_hold = 30s});
  auto client = ClientFor(server.Config());
  std::stop_source stop;
  std::promise<absl::Status> result;
  std::thread watcher([&] {
    result.set_value(client->Watch(
        "/api/v1/pods", "1", [](const WatchEvent&) { return absl::OkStatus(); },
        stop.get_token()));
  });
  ASSERT_TRUE(WaitUntil([&] { return server.Count("WATCH pods") == 1; }));
  const auto start = std::chrono::steady_clock::now();
  stop.request_stop();
  auto future = result.get_future();
  ASSERT_EQ(future.wait_for(2s), std::future_status::ready);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
  EXPECT_EQ(future.get().code(), absl::StatusCode::kCancelled);
  watcher.join();
}

TEST(KubeClientTest, ListPagesWithContinue) {
  FakeApiServer server;
  server.AddPod(GpuPod("a/p1", 1));
  server.AddPod(GpuPod("a/p2", 1));
  auto client = ClientFor(server.Config());
  absl::StatusOr<ListResult> page = client->List("/api/v1/pods?limit=1");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->continue_token, "a/p1");
}

TEST(KubeClientTest, UnreachableServerIsUnavailable) {
  KubeConfig config;
  config.host = "127.0.0.1";
  config.port = 1;  // nothing listens there
  config.tls = false;
  auto client = ClientFor(config);
  absl::StatusOr<ListResult> list = client->List("/api/v1/nodes");
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(Msg(list.status()), HasSubstr("GET /api/v1/nodes"));
  EXPECT_EQ(HttpFailureOf(list.status()), std::nullopt);  // no answer
}

TEST(KubeClientTest, BadCaPemIsRejectedAtCreate) {
  KubeConfig config;
  config.host = "api";
  config.ca_pem = "not a certificate";
  config.source = "kubeconfig x";
  absl::StatusOr<std::unique_ptr<KubeClient>> client =
      KubeClient::Create(config);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(Msg(client.status()),
              HasSubstr("kubeconfig x: certificate authority"));
}

// The reader decodes an event's type once; a type the API server never
// sends is a broken stream, not an event to guess at.
TEST(WatchLineReaderTest, DecodesTheTypeAndRejectsOnesKubernetesDoesNotSend) {
  std::vector<WatchEventType> types;
  const WatchHandler handler = [&](const WatchEvent& event) {
    types.push_back(event.type);
    return absl::OkStatus();
  };
  internal::WatchLineReader reader(handler, "test watch");
  ASSERT_TRUE(reader.Feed("{\"type\":\"DELETED\",\"object\":{}}\n").ok());
  EXPECT_THAT(types, ElementsAre(WatchEventType::kDeleted));
  const absl::Status unknown =
      reader.Feed("{\"type\":\"RENAMED\",\"object\":{}}\n");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(unknown.message()),
              HasSubstr("unknown event type RENAMED"));
  EXPECT_THAT(types, ElementsAre(WatchEventType::kDeleted));
}

}  // namespace
}  // namespace gpusched::kube::testing
