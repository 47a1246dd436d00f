#include "api/http/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "api/http/server.h"
#include "tests/http/test_server.h"

namespace gpusched::http {
namespace {

using std::chrono::milliseconds;
using testing::ConnectOrFail;
using ::testing::HasSubstr;
using testing::LocalOptions;
using testing::StartOrFail;

Handler EchoRemote() {
  return
      [](const Request& request) { return Response{.body = request.remote}; };
}

TEST(ClientTest, ReconnectsOnceWhenServerClosedTheIdleConnection) {
  ServerOptions options = LocalOptions();
  options.idle_timeout = milliseconds(100);
  auto server = StartOrFail(options, EchoRemote());
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto first = client->Send("GET", "/", "");
  ASSERT_TRUE(first.ok()) << first.status();
  std::this_thread::sleep_for(milliseconds(400));  // Server closes at 100.
  auto second = client->Send("GET", "/", "");
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->status, 200);
  EXPECT_NE(first->body, second->body);  // A new connection, new port.
}

TEST(ClientTest, ConnectionRefusedIsAnUnavailableError) {
  uint16_t port = 0;
  {
    auto server = StartOrFail(LocalOptions(), EchoRemote());
    ASSERT_NE(server, nullptr);
    port = server->port();
  }
  auto client = Client::Connect("127.0.0.1", port);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(client.status().message()), HasSubstr("connect"));
}

TEST(ClientTest, SlowResponseTimesOut) {
  auto server = StartOrFail(LocalOptions(), [](const Request&) {
    std::this_thread::sleep_for(milliseconds(500));
    return Response{};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port(), {.timeout = milliseconds(100)});
  ASSERT_NE(client, nullptr);
  auto start = std::chrono::steady_clock::now();
  auto response = client->Send("GET", "/", "");
  EXPECT_FALSE(response.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(450));
}

TEST(ClientTest, SendsCustomMethods) {
  auto server = StartOrFail(LocalOptions(), [](const Request& request) {
    return Response{.body = request.method};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  for (const char* method : {"GET", "PUT", "DELETE", "PATCH", "BIND"}) {
    auto response = client->Send(method, "/", "");
    ASSERT_TRUE(response.ok()) << method << ": " << response.status();
    EXPECT_EQ(response->body, method);
  }
}

}  // namespace
}  // namespace gpusched::http
