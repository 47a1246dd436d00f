#include "api/http/listen_address.h"

#include <gtest/gtest.h>

namespace gpusched::http::internal {
namespace {

struct GoodCase {
  const char* listen;
  const char* host;
  uint16_t port;
};

TEST(ParseHostPortTest, AcceptsHostPortForms) {
  const GoodCase cases[] = {
      {"127.0.0.1:8888", "127.0.0.1", 8888},
      {"0.0.0.0:0", "0.0.0.0", 0},
      {"[::1]:443", "::1", 443},
      {"[::]:65535", "::", 65535},
      {"localhost:80", "localhost", 80},
      {":9000", "", 9000},
  };
  for (const auto& c : cases) {
    auto parsed = ParseHostPort(c.listen);
    ASSERT_TRUE(parsed.ok()) << c.listen << ": " << parsed.status();
    EXPECT_EQ(parsed->host, c.host) << c.listen;
    EXPECT_EQ(parsed->port, c.port) << c.listen;
  }
}

TEST(ParseHostPortTest, RejectsMalformedAddresses) {
  for (const char* listen :
       {"", "8888", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536",
        "127.0.0.1:-1", "127.0.0.1:http", "::1:80"}) {
    auto parsed = ParseHostPort(listen);
    EXPECT_FALSE(parsed.ok()) << listen;
    EXPECT_NE(parsed.status().message().find("listen address"),
              absl::string_view::npos)
        << parsed.status();
  }
}

TEST(FormatHostPortTest, BracketsIpv6) {
  EXPECT_EQ(FormatHostPort("127.0.0.1", 80), "127.0.0.1:80");
  EXPECT_EQ(FormatHostPort("::1", 80), "[::1]:80");
}

}  // namespace
}  // namespace gpusched::http::internal
