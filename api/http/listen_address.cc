#include "api/http/listen_address.h"

#include <arpa/inet.h>

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace gpusched::http::internal {
namespace {

absl::Status BadListen(std::string_view listen, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("listen address \"%s\": %s", listen, why));
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(std::string_view listen) {
  size_t colon = listen.rfind(':');
  if (colon == std::string_view::npos) {
    return BadListen(listen, "expected host:port");
  }
  std::string_view host = listen.substr(0, colon);
  std::string_view port_text = listen.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return BadListen(listen, "IPv6 addresses must be bracketed, e.g. [::1]:80");
  }
  uint32_t port = 0;
  if (port_text.empty() ||
      !absl::SimpleAtoi(absl::string_view(port_text.data(), port_text.size()),
                        &port) ||
      port > 65535) {
    return BadListen(listen, "port must be a number from 0 to 65535");
  }
  return HostPort{.host = std::string(host),
                  .port = static_cast<uint16_t>(port)};
}

std::string FormatHostPort(std::string_view host, uint16_t port) {
  if (host.find(':') != std::string_view::npos) {
    return absl::StrFormat("[%s]:%d", host, port);
  }
  return absl::StrFormat("%s:%d", host, port);
}

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  const std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  return inet_pton(AF_INET6, text.c_str(), &v6) == 1 &&
         IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace gpusched::http::internal
