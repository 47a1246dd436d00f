#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "api/http/client.h"
#include "api/http/server.h"
#include "tests/http/raw_socket.h"
#include "tests/http/test_server.h"

namespace gpusched::http {
namespace {

using std::chrono::milliseconds;
using testing::ConnectOrFail;
using testing::Constant;
using testing::HeaderOf;
using testing::LocalOptions;
using testing::RawSocket;
using testing::StartOrFail;
using Clock = std::chrono::steady_clock;

TEST(ShutdownTest, InFlightRequestCompletesWithItsFullResponse) {
  std::promise<void> entered;
  auto server = StartOrFail(LocalOptions(), [&](const Request&) {
    entered.set_value();
    std::this_thread::sleep_for(milliseconds(300));
    return Response{.body = std::string(100000, 'r')};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto pending = std::async(std::launch::async,
                            [&] { return client->Send("POST", "/slow", "x"); });
  entered.get_future().wait();
  auto start = Clock::now();
  server->Shutdown();
  // Shutdown waited for the handler: about 300 ms minus scheduling slack.
  EXPECT_GE(Clock::now() - start, milliseconds(200));
  auto response = pending.get();
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, std::string(100000, 'r'));
  // The client is told not to reuse a connection that is going away.
  EXPECT_EQ(HeaderOf(*response, "Connection"), "close");
}

TEST(ShutdownTest, NewConnectionsAreRefusedAfterShutdown) {
  auto server = StartOrFail(LocalOptions(), Constant("ok"));
  ASSERT_NE(server, nullptr);
  uint16_t port = server->port();
  server->Shutdown();
  auto client = Client::Connect("127.0.0.1", port);
  EXPECT_FALSE(client.ok());
  EXPECT_FALSE(RawSocket(port).ok());
}

TEST(ShutdownTest, IdleKeepAliveConnectionsAreClosedPromptly) {
  ServerOptions options = LocalOptions();
  options.idle_timeout = std::chrono::minutes(5);
  auto server = StartOrFail(options, Constant("ok"));
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_FALSE(socket.ReadResponse(milliseconds(5000)).empty());
  auto start = Clock::now();
  server->Shutdown();  // Must not wait for the five-minute idle timeout.
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
  bool closed = false;
  socket.ReadUntilClose(milliseconds(2000), &closed);
  EXPECT_TRUE(closed);
}

TEST(ShutdownTest, HalfReadRequestIsNotWaitedFor) {
  ServerOptions options = LocalOptions();
  options.read_timeout = std::chrono::minutes(5);
  auto server = StartOrFail(options, Constant("ok"));
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Send("GET / HTTP/1.1\r\nHo"));
  std::this_thread::sleep_for(milliseconds(50));  // Let the server read it.
  auto start = Clock::now();
  server->Shutdown();
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(ShutdownTest, IsIdempotentAndSafeFromSeveralThreads) {
  auto server = StartOrFail(LocalOptions(), Constant("ok"));
  ASSERT_NE(server, nullptr);
  std::thread other([&] { server->Shutdown(); });
  server->Shutdown();
  other.join();
  server->Shutdown();
  server.reset();  // The destructor shuts down once more.
}

TEST(ShutdownTest, DestructorShutsDown) {
  uint16_t port = 0;
  {
    auto server = StartOrFail(LocalOptions(), Constant("ok"));
    ASSERT_NE(server, nullptr);
    port = server->port();
  }
  EXPECT_FALSE(RawSocket(port).ok());
}

}  // namespace
}  // namespace gpusched::http
