#include "api/http/client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <stop_token>
#include <string>
#include <thread>

#include "api/http/server.h"
#include "tests/http/test_server.h"

namespace gpusched::http {
namespace {

using std::chrono::milliseconds;
using testing::ConnectOrFail;
using testing::Constant;
using ::testing::HasSubstr;
using testing::LocalOptions;
using testing::StartOrFail;

// Answers after `delay`, holding the request that long.
Handler Slow(milliseconds delay) {
  return [delay](const Request&) {
    std::this_thread::sleep_for(delay);
    return Response{};
  };
}

Handler EchoRemote() {
  return
      [](const Request& request) { return Response{.body = request.remote}; };
}

// A loopback port a server listened on a moment ago; 0 if none started.
uint16_t ClosedPort() {
  auto server = StartOrFail(LocalOptions(), EchoRemote());
  return server ? server->port() : 0;
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
  const uint16_t port = ClosedPort();
  ASSERT_NE(port, 0);
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

TEST(ClientTest, TimeoutIsDeadlineExceeded) {
  auto server = StartOrFail(LocalOptions(), Slow(milliseconds(500)));
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response =
      client->RoundTrip({.method = "GET", .target = "/"}, milliseconds(100));
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(ClientTest, CreateDoesNotConnectAndAnUnopenedCallIsMarkedNotSent) {
  const uint16_t port = ClosedPort();
  ASSERT_NE(port, 0);
  auto client = Client::Create("127.0.0.1", port);
  ASSERT_TRUE(client.ok()) << client.status();
  auto response = (*client)->Send("GET", "/", "");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_TRUE(response.status().GetPayload(kNotSentPayload).has_value());
}

TEST(ClientTest, StopCancelsABlockedCallPromptly) {
  auto server = StartOrFail(LocalOptions(), Slow(milliseconds(1000)));
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  std::stop_source stop;
  std::jthread stopper([&stop] {
    std::this_thread::sleep_for(milliseconds(100));
    stop.request_stop();
  });
  auto start = std::chrono::steady_clock::now();
  auto response = client->RoundTrip({.method = "GET", .target = "/"},
                                    milliseconds(5000), stop.get_token());
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kCancelled);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(900));
}

TEST(ClientTest, StreamHandsASuccessfulBodyToTheHandler) {
  const std::string big(100000, 'x');  // several reads of 16 KiB
  auto server = StartOrFail(
      LocalOptions(), [&big](const Request&) { return Response{.body = big}; });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  std::string received;
  auto response =
      client->Stream({.method = "GET", .target = "/"}, milliseconds(5000),
                     milliseconds(5000), [&received](std::string_view data) {
                       received.append(data);
                       return absl::OkStatus();
                     });
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "");  // all of it went to the handler
  EXPECT_EQ(received, big);
}

TEST(ClientTest, StreamReturnsAnErrorAnswerWhole) {
  auto server = StartOrFail(LocalOptions(), [](const Request&) {
    return Response{.status = 410, .body = "gone"};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  bool handled = false;
  auto response =
      client->Stream({.method = "GET", .target = "/"}, milliseconds(5000),
                     milliseconds(5000), [&handled](std::string_view) {
                       handled = true;
                       return absl::OkStatus();
                     });
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 410);
  EXPECT_EQ(response->body, "gone");
  EXPECT_FALSE(handled);
}

TEST(ClientTest, HandlerErrorEndsTheStream) {
  auto server = StartOrFail(LocalOptions(), Constant("data"));
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response = client->Stream(
      {.method = "GET", .target = "/"}, milliseconds(5000), milliseconds(5000),
      [](std::string_view) { return absl::AbortedError("enough"); });
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), absl::StatusCode::kAborted);
}

}  // namespace
}  // namespace gpusched::http
