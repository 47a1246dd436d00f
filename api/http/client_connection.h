// One client HTTP/1.1 connection, plain or TLS: the only code that speaks
// the client side of the wire. Internal to the http library (it exposes Asio
// types); http::Client is the public face and pools these.
#ifndef GPUSCHED_API_HTTP_CLIENT_CONNECTION_H_
#define GPUSCHED_API_HTTP_CLIENT_CONNECTION_H_

#include <boost/asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <stop_token>
#include <string>

#include "absl/status/statusor.h"
#include "api/http/client.h"
#include "api/http/message.h"

namespace gpusched::http::internal {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
  std::string server_name;  // verified against the certificate (TLS only)
  boost::asio::ssl::context* tls = nullptr;  // null: plain HTTP; not owned
};

// Not thread-safe, except that `stop` may be requested from any thread: it
// closes the socket, so a blocked call returns Cancelled promptly.
class ClientConnection {
 public:
  static absl::StatusOr<std::unique_ptr<ClientConnection>> Open(
      const Endpoint& endpoint, Millis timeout, std::stop_token stop);
  ~ClientConnection();

  // Sends one request and reads the whole response within `timeout`. Sets
  // `*stale` when the failure shows the server had closed a kept-alive
  // connection before reading the request (safe to resend on a new one).
  absl::StatusOr<Response> RoundTrip(const ClientRequest& request,
                                     Millis timeout, std::stop_token stop,
                                     bool* stale);

  // Sends one request. A 2xx body goes to `on_data` as it arrives, each read
  // waiting at most `idle_timeout`; the returned body is then empty. Any
  // other status is returned with its body (for the error message).
  absl::StatusOr<Response> Stream(const ClientRequest& request,
                                  Millis header_timeout, Millis idle_timeout,
                                  const BodyHandler& on_data,
                                  std::stop_token stop);

  // False after an error, a cancellation or a "Connection: close".
  bool reusable() const;

 private:
  class Impl;
  explicit ClientConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::http::internal

#endif  // GPUSCHED_API_HTTP_CLIENT_CONNECTION_H_
