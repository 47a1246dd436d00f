// Parsing of ServerOptions::listen ("host:port", "[v6]:port", ":port").
// Internal to the http library; kept free of Asio so it is cheap to test.
#ifndef GPUSCHED_API_HTTP_LISTEN_ADDRESS_H_
#define GPUSCHED_API_HTTP_LISTEN_ADDRESS_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpusched::http::internal {

struct HostPort {
  std::string host;  // Without IPv6 brackets; empty means "all IPv4".
  uint16_t port = 0;
};

absl::StatusOr<HostPort> ParseHostPort(std::string_view listen);

// "host:port", bracketing IPv6 literals.
std::string FormatHostPort(std::string_view host, uint16_t port);

// True for a host only this machine reaches: an IPv4 address in
// 127.0.0.0/8, ::1, or the name localhost. Empty (every IPv4 address) and
// other names are not: a name may resolve anywhere.
bool IsLoopbackHost(std::string_view host);

}  // namespace gpusched::http::internal

#endif  // GPUSCHED_API_HTTP_LISTEN_ADDRESS_H_
