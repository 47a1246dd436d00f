// One HTTP/1.1 connection to the API server, plain or TLS. Internal to the
// kube library (it exposes Asio types); KubeClient is the public face.
//
// Why not http::Client: the API server needs an Authorization header, and a
// watch is a response that never ends, so its body must be handed over piece
// by piece as it arrives instead of read whole.
#ifndef GPUSCHED_API_KUBE_CONNECTION_H_
#define GPUSCHED_API_KUBE_CONNECTION_H_

#include <boost/asio/ssl/context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "api/kube/kube_config.h"

namespace gpusched::kube::internal {

using Millis = std::chrono::milliseconds;

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string server_name;  // verified against the certificate (TLS only)
  boost::asio::ssl::context* tls = nullptr;  // null: plain HTTP; not owned
};

struct OutgoingRequest {
  std::string_view method;
  std::string_view target;
  std::string_view body;
  std::string_view content_type;
  std::string_view authorization;  // full header value; empty: none
};

struct WholeResponse {
  int status = 0;
  std::string body;
};

// Receives the body of a streamed response as it arrives; an error stops
// the stream and is returned by Connection::Stream.
using DataHandler = std::function<absl::Status(std::string_view)>;

// A TLS 1.2+ client context that verifies the server with `config.ca_pem`
// (or the system store) and presents the client certificate if any.
absl::StatusOr<std::unique_ptr<boost::asio::ssl::context>> MakeTlsContext(
    const KubeConfig& config);

// Not thread-safe, except that `stop` may be requested from any thread: it
// closes the socket, so a blocked call returns Cancelled promptly.
class Connection {
 public:
  static absl::StatusOr<std::unique_ptr<Connection>> Open(
      const Endpoint& endpoint, Millis timeout, std::stop_token stop);
  ~Connection();

  // Sends one request and reads the whole response within `timeout`. Sets
  // `*stale` when the failure shows the server had closed a kept-alive
  // connection before reading the request (safe to resend on a new one).
  absl::StatusOr<WholeResponse> RoundTrip(const OutgoingRequest& request,
                                          Millis timeout, std::stop_token stop,
                                          bool* stale);

  // Sends one request. A 2xx body goes to `on_data` as it arrives, each read
  // waiting at most `idle_timeout`; the returned body is then empty. Any
  // other status is returned with its whole body (for the error message).
  absl::StatusOr<WholeResponse> Stream(const OutgoingRequest& request,
                                       Millis header_timeout,
                                       Millis idle_timeout,
                                       const DataHandler& on_data,
                                       std::stop_token stop);

  // False after an error, a cancellation or a "Connection: close".
  bool reusable() const;

 private:
  class Impl;
  explicit Connection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::kube::internal

#endif  // GPUSCHED_API_KUBE_CONNECTION_H_
