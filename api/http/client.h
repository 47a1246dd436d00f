// A small blocking HTTP/1.1 client with keep-alive, for tests, benchmarks and
// the CLI. Not thread-safe: use one Client per thread.
#ifndef GPUSCHED_API_HTTP_CLIENT_H_
#define GPUSCHED_API_HTTP_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/http/message.h"

namespace gpusched::http {

struct ClientOptions {
  bool tls = false;
  // CA bundle to verify the server with; empty uses the system default paths.
  std::string ca_file;
  // Client certificate and key (PEM) for servers that require one.
  std::string cert_file, key_file;
  // Limit for connecting, and separately for each request's round trip.
  std::chrono::milliseconds timeout{10000};
};

class Client {
 public:
  // Connects (and for TLS completes the handshake) before returning.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      std::string host, uint16_t port, ClientOptions options = {});

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  // Sends one request on the kept-alive connection and reads the response.
  // If a reused connection turns out to have been closed by the server, it
  // reconnects and retries once; requests must therefore be safe to repeat.
  // A non-2xx status is a Response, not an error; errors are transport faults.
  absl::StatusOr<Response> Send(
      std::string_view method, std::string_view target, std::string_view body,
      std::string_view content_type = "application/json");

 private:
  class Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::http

#endif  // GPUSCHED_API_HTTP_CLIENT_H_
