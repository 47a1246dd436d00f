// Malformed input, size limits and timeouts: what the transport does to
// protect the scheduler from bad or slow clients.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
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
using ::testing::HasSubstr;
using testing::LocalOptions;
using testing::RawSocket;
using testing::StartOrFail;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

constexpr milliseconds kPatience{5000};  // Upper bound for "promptly".

ServerOptions SmallLimits() {
  ServerOptions options = LocalOptions();
  options.body_limit_bytes = 1024;
  return options;
}

// Sends `request` on a fresh connection and returns everything the server
// wrote before closing; fails the test if it does not close.
std::string ExchangeAndExpectClose(uint16_t port, const std::string& request) {
  RawSocket socket(port);
  EXPECT_TRUE(socket.ok());
  EXPECT_TRUE(socket.Send(request));
  bool closed = false;
  std::string reply = socket.ReadUntilClose(kPatience, &closed);
  EXPECT_TRUE(closed) << "server kept the connection open";
  return reply;
}

TEST(LimitsTest, MalformedRequestGets400ThenClose) {
  auto server = StartOrFail(LocalOptions(), Constant("never"));
  ASSERT_NE(server, nullptr);
  std::string reply =
      ExchangeAndExpectClose(server->port(), "this is not http\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 "));
  EXPECT_THAT(reply, HasSubstr("Content-Type: application/json"));
  EXPECT_THAT(reply, HasSubstr("\"code\":400"));
}

TEST(LimitsTest, HeaderLineWithoutColonGets400) {
  auto server = StartOrFail(LocalOptions(), Constant("never"));
  ASSERT_NE(server, nullptr);
  std::string reply = ExchangeAndExpectClose(
      server->port(), "GET / HTTP/1.1\r\nHost t\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 400 "));
}

TEST(LimitsTest, OversizedContentLengthGets413BeforeTheBodyIsSent) {
  auto server = StartOrFail(SmallLimits(), Constant("never"));
  ASSERT_NE(server, nullptr);
  // Only the header: the rejection must come from Content-Length alone.
  std::string reply = ExchangeAndExpectClose(
      server->port(),
      "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1000000\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 "));
  EXPECT_THAT(reply, HasSubstr("\"code\":413"));
}

TEST(LimitsTest, OversizedChunkedBodyGets413) {
  auto server = StartOrFail(SmallLimits(), Constant("never"));
  ASSERT_NE(server, nullptr);
  std::string chunk(600, 'x');
  // Two 600-byte chunks: 1200 > 1024.
  std::string request =
      "POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"
      "258\r\n" +
      chunk + "\r\n258\r\n" + chunk + "\r\n0\r\n\r\n";
  std::string reply = ExchangeAndExpectClose(server->port(), request);
  EXPECT_THAT(reply, StartsWith("HTTP/1.1 413 "));
}

TEST(LimitsTest, ClientSendingOversizedBodyReads413) {
  // The server must drain the body it refused, or closing would reset the
  // connection before the client reads the 413. 8 MiB is more than loopback
  // socket buffers hold, so the client is still writing when the 413 comes.
  auto server = StartOrFail(SmallLimits(), Constant("never"));
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response = client->Send("POST", "/", std::string(8 << 20, 'x'));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 413);
}

TEST(LimitsTest, BodyExactlyAtLimitIsServed) {
  auto server = StartOrFail(SmallLimits(), [](const Request& request) {
    return Response{.body = std::to_string(request.body.size())};
  });
  ASSERT_NE(server, nullptr);
  auto client = ConnectOrFail(server->port());
  ASSERT_NE(client, nullptr);
  auto response = client->Send("POST", "/", std::string(1024, 'x'));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "1024");
}

TEST(LimitsTest, StalledRequestIsDisconnectedAfterReadTimeout) {
  ServerOptions options = LocalOptions();
  options.read_timeout = milliseconds(300);
  auto server = StartOrFail(options, Constant("never"));
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.ok());
  auto start = Clock::now();
  ASSERT_TRUE(socket.Send(
      "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc"));
  bool closed = false;
  std::string reply = socket.ReadUntilClose(kPatience, &closed);
  auto elapsed = Clock::now() - start;
  EXPECT_TRUE(closed);
  EXPECT_EQ(reply, "");  // Dropped, not answered.
  EXPECT_GE(elapsed, milliseconds(250));
  EXPECT_LT(elapsed, milliseconds(3000));
}

TEST(LimitsTest, TricklingBytesDoesNotExtendReadTimeout) {
  // The limit covers the whole request, not each read: a client sending a
  // byte every 50 ms must still be cut off near 300 ms.
  ServerOptions options = LocalOptions();
  options.read_timeout = milliseconds(300);
  auto server = StartOrFail(options, Constant("never"));
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Send("GET / HTTP/1.1\r\n"));
  auto start = Clock::now();
  bool sent = true;
  while (sent && Clock::now() - start < milliseconds(3000)) {
    std::this_thread::sleep_for(milliseconds(50));
    sent = socket.Send("X");
  }
  bool closed = false;
  socket.ReadUntilClose(kPatience, &closed);
  EXPECT_TRUE(closed);
  EXPECT_LT(Clock::now() - start, milliseconds(2000));
}

TEST(LimitsTest, IdleKeepAliveConnectionIsClosedAfterIdleTimeout) {
  ServerOptions options = LocalOptions();
  options.idle_timeout = milliseconds(300);
  auto server = StartOrFail(options, Constant("ok"));
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  ASSERT_TRUE(socket.Send("GET / HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_THAT(socket.ReadResponse(kPatience), StartsWith("HTTP/1.1 200"));
  auto start = Clock::now();
  bool closed = false;
  socket.ReadUntilClose(kPatience, &closed);
  auto elapsed = Clock::now() - start;
  EXPECT_TRUE(closed);
  EXPECT_GE(elapsed, milliseconds(250));
  EXPECT_LT(elapsed, milliseconds(3000));
}

TEST(LimitsTest, IdleTimeoutNotReadTimeoutGovernsTheGapBetweenRequests) {
  ServerOptions options = LocalOptions();
  options.read_timeout = milliseconds(200);
  options.idle_timeout = milliseconds(5000);
  auto server = StartOrFail(options, Constant("ok"));
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  const std::string request = "GET / HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_TRUE(socket.Send(request));
  ASSERT_THAT(socket.ReadResponse(kPatience), StartsWith("HTTP/1.1 200"));
  std::this_thread::sleep_for(milliseconds(600));  // 3x read_timeout.
  ASSERT_TRUE(socket.Send(request));
  EXPECT_THAT(socket.ReadResponse(kPatience), StartsWith("HTTP/1.1 200"));
}

TEST(LimitsTest, SilentNewConnectionIsClosedAfterReadTimeout) {
  ServerOptions options = LocalOptions();
  options.read_timeout = milliseconds(300);
  auto server = StartOrFail(options, Constant("ok"));
  ASSERT_NE(server, nullptr);
  RawSocket socket(server->port());
  bool closed = false;
  socket.ReadUntilClose(milliseconds(3000), &closed);
  EXPECT_TRUE(closed);
}

TEST(LimitsTest, Http10RequestIsAnsweredThenClosed) {
  auto server = StartOrFail(LocalOptions(), Constant("old"));
  ASSERT_NE(server, nullptr);
  std::string reply =
      ExchangeAndExpectClose(server->port(), "GET / HTTP/1.0\r\n\r\n");
  EXPECT_THAT(reply, StartsWith("HTTP/1.0 200 "));
  EXPECT_THAT(reply, ::testing::EndsWith("\r\n\r\nold"));
}

}  // namespace
}  // namespace gpusched::http
