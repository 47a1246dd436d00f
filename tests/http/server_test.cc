#include "api/http/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "api/http/client.h"
#include "tests/http/raw_socket.h"
#include "tests/http/test_server.h"

namespace gpusched::http {
namespace {

using testing::ConnectOrFail;
using testing::Constant;
using ::testing::HasSubstr;
using testing::HeaderOf;
using testing::LocalOptions;
using testing::RawSocket;
using testing::StartOrFail;
using ::testing::StartsWith;

TEST(ServerTest, ResponseBodyIsExactlyTheHandlerBody) {
  using std::string_literals::operator""s;
  std::string body = "{\"x\":1}\r\n\0binary\xff tail\0"s;
  auto server = StartOrFail(LocalOptions(), Constant(body));
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response = client->Send("GET", "/", "");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, body);
  EXPECT_EQ(response->content_type, "application/json");
}

TEST(ServerTest, HandlerSeesMethodPathQueryBodyContentTypeAndRemote) {
  std::mutex mu;
  Request seen;
  auto server = StartOrFail(LocalOptions(), [&](const Request& request) {
    std::lock_guard lock(mu);
    seen = request;
    return Response{};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response =
      client->Send("POST", "/filter?a=1&b=2", "pod data", "text/plain");
  ASSERT_TRUE(response.ok()) << response.status();
  std::lock_guard lock(mu);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.target, "/filter");
  EXPECT_EQ(seen.query, "a=1&b=2");
  EXPECT_EQ(seen.body, "pod data");
  EXPECT_EQ(seen.content_type, "text/plain");
  EXPECT_THAT(seen.remote, StartsWith("127.0.0.1:"));
}

TEST(ServerTest, KeepAliveReusesTheConnection) {
  // The remote address names the client's port, so it stays the same only if
  // both requests arrive on one connection.
  auto server = StartOrFail(LocalOptions(), [](const Request& request) {
    return Response{.body = request.remote};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto first = client->Send("GET", "/", "");
  auto second = client->Send("GET", "/", "");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->body, second->body);
  EXPECT_EQ(HeaderOf(*second, "Connection"), "");  // Not "close".
}

TEST(ServerTest, ResponsesCarryContentTypeAndContentLength) {
  auto server = StartOrFail(LocalOptions(), [](const Request&) {
    return Response{.content_type = "text/plain", .body = "hello"};
  });
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.ok());
  ASSERT_TRUE(socket.Send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  std::string response = socket.ReadResponse(std::chrono::seconds(5));
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(response, HasSubstr("\r\nContent-Type: text/plain\r\n"));
  EXPECT_THAT(response, HasSubstr("\r\nContent-Length: 5\r\n"));
  EXPECT_THAT(response, ::testing::EndsWith("\r\n\r\nhello"));
}

TEST(ServerTest, HandlerHeadersAndStatusAreSent) {
  auto server = StartOrFail(LocalOptions(), [](const Request&) {
    return Response{.status = 202, .body = "{}", .headers = {{"X-Trace", "7"}}};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response = client->Send("GET", "/", "");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 202);
  EXPECT_EQ(HeaderOf(*response, "X-Trace"), "7");
}

TEST(ServerTest, HandlerExceptionIs500AndServerKeepsServing) {
  auto server = StartOrFail(LocalOptions(), [](const Request& request) {
    if (request.target == "/boom") throw std::runtime_error("kaput");
    return Response{.body = "fine"};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto failed = client->Send("GET", "/boom", "");
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(failed->status, 500);
  EXPECT_EQ(failed->content_type, "application/json");
  EXPECT_THAT(failed->body, HasSubstr("\"code\":500"));
  auto next = client->Send("GET", "/ok", "");
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_EQ(next->status, 200);
  EXPECT_EQ(next->body, "fine");
}

TEST(ServerTest, ManyKeepAliveClientsInParallelAllSucceed) {
  constexpr int kThreads = 16;
  constexpr int kRequestsPerThread = 200;
  ServerOptions options = LocalOptions();
  options.threads = 4;
  auto server = StartOrFail(options, [](const Request& request) {
    return Response{.body = "echo:" + request.body};
  });
  ASSERT_NE(server, nullptr);
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto client = Client::Connect("127.0.0.1", server->port());
      if (!client.ok()) return;
      for (int i = 0; i < kRequestsPerThread; ++i) {
        std::string body = std::to_string(t) + "-" + std::to_string(i);
        auto response = (*client)->Send("POST", "/echo", body);
        if (response.ok() && response->status == 200 &&
            response->body == "echo:" + body) {
          good.fetch_add(1);
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(good.load(), kThreads * kRequestsPerThread);  // 16 * 200 = 3200
}

TEST(ServerTest, PortZeroBindsAnEphemeralPortNamedByUrl) {
  auto server = StartOrFail(LocalOptions(), Constant(""));
  ASSERT_NE(server, nullptr);
  EXPECT_NE(server->port(), 0);
  EXPECT_EQ(server->url(),
            "http://127.0.0.1:" + std::to_string(server->port()));
}

TEST(ServerTest, WildcardAddressReportsLoopbackUrl) {
  ServerOptions options;
  options.listen = ":0";
  auto server = StartOrFail(options, Constant("any"));
  ASSERT_NE(server, nullptr);
  EXPECT_EQ(server->url(),
            "http://127.0.0.1:" + std::to_string(server->port()));
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response = client->Send("GET", "/", "");
  ASSERT_TRUE(response.ok());
  EXPECT_EQ(response->body, "any");
}

TEST(ServerTest, ServesIpv6Loopback) {
  ServerOptions options;
  options.listen = "[::1]:0";
  auto server = Server::Start(options, Constant("six"));
  if (!server.ok()) GTEST_SKIP() << "no IPv6 loopback: " << server.status();
  uint16_t port = (*server)->port();
  EXPECT_EQ((*server)->url(), "http://[::1]:" + std::to_string(port));
  auto client = Client::Connect("::1", port);
  ASSERT_TRUE(client.ok()) << client.status();
  auto response = (*client)->Send("GET", "/", "");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "six");
}

TEST(ServerTest, BadListenAddressIsAnErrorNamingIt) {
  ServerOptions options;
  options.listen = "127.0.0.1:notaport";
  auto server = Server::Start(options, Constant(""));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("127.0.0.1:notaport"));
}

TEST(ServerTest, PortInUseIsABindError) {
  auto first = StartOrFail(LocalOptions(), Constant(""));
  ASSERT_NE(first, nullptr);
  ServerOptions options;
  options.listen = "127.0.0.1:" + std::to_string(first->port());
  auto second = Server::Start(options, Constant(""));
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()), HasSubstr("bind"));
}

TEST(ServerTest, EmptyHandlerIsRejected) {
  auto server = Server::Start(LocalOptions(), Handler());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace gpusched::http
