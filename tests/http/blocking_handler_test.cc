// Requests marked blocking (a live bind waiting on the API server) run on
// their own pool: they never hold an I/O thread, so quick requests are
// answered while they wait.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "api/http/client.h"
#include "api/http/server.h"
#include "tests/http/test_server.h"

namespace gpusched::http {
namespace {

using testing::LocalOptions;
using testing::StartOrFail;

TEST(BlockingHandlerTest, QuickRequestsAreAnsweredWhileBlockingOnesWait) {
  constexpr int kBlocked = 3;  // more than the one I/O thread
  std::atomic<int> started{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  ServerOptions options = LocalOptions();
  options.threads = 1;
  options.blocking = [](const Request& r) { return r.target == "/bind"; };
  auto server = StartOrFail(options, [&](const Request& request) {
    if (request.target == "/bind") {
      started.fetch_add(1);
      // Bounded, so that a server that ran this on its I/O thread fails
      // the test instead of hanging it.
      released.wait_for(std::chrono::seconds(10));
      return Response{.body = "bound"};
    }
    return Response{.body = "filtered"};
  });
  ASSERT_NE(server, nullptr);
  std::vector<std::future<std::string>> binds;
  for (int i = 0; i < kBlocked; ++i) {
    binds.push_back(std::async(std::launch::async, [&] {
      auto client = Client::Connect("127.0.0.1", server->port());
      if (!client.ok()) return std::string("no connection");
      auto response = (*client)->Send("POST", "/bind", "{}");
      return response.ok() ? response->body : std::string("failed");
    }));
  }
  // Every bind gets into its handler at once only if none holds the one
  // I/O thread.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (started.load() < kBlocked &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(started.load(), kBlocked);
  auto client = Client::Connect("127.0.0.1", server->port());
  ASSERT_TRUE(client.ok());
  auto filtered = (*client)->Send("POST", "/filter", "{}");
  const bool answered_while_binds_wait =
      released.wait_for(std::chrono::seconds(0)) == std::future_status::timeout;
  release.set_value();
  ASSERT_TRUE(filtered.ok()) << filtered.status();
  EXPECT_EQ(filtered->body, "filtered");
  EXPECT_TRUE(answered_while_binds_wait);
  for (auto& bind : binds) EXPECT_EQ(bind.get(), "bound");
}

TEST(BlockingHandlerTest, ShutdownWaitsForABlockingHandlerToAnswer) {
  std::promise<void> entered;
  ServerOptions options = LocalOptions();
  options.blocking = [](const Request&) { return true; };
  auto server = StartOrFail(options, [&](const Request&) {
    entered.set_value();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    return Response{.body = "done"};
  });
  ASSERT_NE(server, nullptr);
  auto reply = std::async(std::launch::async, [&] {
    auto client = Client::Connect("127.0.0.1", server->port());
    if (!client.ok()) return std::string("no connection");
    auto response = (*client)->Send("POST", "/bind", "{}");
    return response.ok() ? response->body : std::string("failed");
  });
  entered.get_future().wait();
  server->Shutdown();  // in-flight exchanges finish
  EXPECT_EQ(reply.get(), "done");
}

}  // namespace
}  // namespace gpusched::http
