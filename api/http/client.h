// The one HTTP/1.1 client, plain or TLS: the Kubernetes API client, the
// tests and the benchmarks all talk through it.
//
// It keeps up to `max_idle_connections` connections alive between requests,
// can add an Authorization header, hands over the body of a response that
// never ends (a watch) piece by piece as it arrives, and lets a stop_token
// cancel a call from any thread. Send() is the short form for "one request,
// whole answer" that tests and benchmarks use.
//
// Thread-safety: all methods may be called concurrently; each call uses a
// connection of its own for as long as it runs.
#ifndef GPUSCHED_API_HTTP_CLIENT_H_
#define GPUSCHED_API_HTTP_CLIENT_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "api/http/message.h"

namespace gpusched::http {

using Millis = std::chrono::milliseconds;

struct ClientOptions {
  bool tls = false;
  // The CA to verify the server with: a PEM file, or PEM text held in
  // memory (kubeconfig *-data fields); neither uses the system store.
  std::string ca_file;
  std::string ca_pem;
  // Client certificate and key for servers that require one: two files or
  // two PEM texts.
  std::string cert_file, key_file;
  std::string cert_pem, key_pem;
  // Name the server certificate must carry; empty: the host connected to.
  std::string server_name;
  // Limit for connecting, and for each Send's round trip.
  Millis timeout{10000};
  // Connections kept alive between requests; more only help callers that
  // send from several threads at once.
  size_t max_idle_connections = 1;
};

struct ClientRequest {
  std::string_view method;
  std::string_view target;
  std::string_view body;
  std::string_view content_type;   // sent only with a body
  std::string_view authorization;  // full header value; empty: none
  std::string_view accept;         // empty: no Accept header
};

// Receives the body of a streamed response as it arrives; an error stops
// the stream and is what Client::Stream returns.
using BodyHandler = std::function<absl::Status(std::string_view)>;

// Set on the error of a call whose request never left this process (no
// connection could be opened): the server cannot have acted on it.
inline constexpr char kNotSentPayload[] = "gpusched.io/request-not-sent";

class Client {
 public:
  // Does not connect: the first request does, so that a process can start
  // before its server is reachable. Fails only on unusable TLS options.
  static absl::StatusOr<std::unique_ptr<Client>> Create(
      std::string host, uint16_t port, ClientOptions options = {});
  // As Create, and connects (for TLS completes the handshake) before
  // returning.
  static absl::StatusOr<std::unique_ptr<Client>> Connect(
      std::string host, uint16_t port, ClientOptions options = {});

  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;
  ~Client();

  // RoundTrip within options.timeout, without Authorization.
  absl::StatusOr<Response> Send(
      std::string_view method, std::string_view target, std::string_view body,
      std::string_view content_type = "application/json");

  // Sends one request on a kept-alive connection (or a new one, connected
  // within min(timeout, options.timeout)) and reads the whole response
  // within `timeout`. If a reused connection turns out to have been closed
  // by the server before it read the request, the request is sent once more
  // on a new connection; requests must therefore be safe to repeat.
  // A non-2xx status is a Response, not an error. Errors are transport
  // faults (Unavailable), running out of time (DeadlineExceeded: the server
  // may still act on the request) and a stop (Cancelled).
  absl::StatusOr<Response> RoundTrip(const ClientRequest& request,
                                     Millis timeout, std::stop_token stop = {});

  // Sends one request on a connection of its own. A 2xx body goes to
  // `on_data` as it arrives, each read waiting at most `idle_timeout`; the
  // returned body is then empty. Any other status is returned with its body
  // (for the error message). Connecting and the response head must come
  // within `header_timeout`.
  absl::StatusOr<Response> Stream(const ClientRequest& request,
                                  Millis header_timeout, Millis idle_timeout,
                                  const BodyHandler& on_data,
                                  std::stop_token stop = {});

 private:
  class Impl;
  explicit Client(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpusched::http

#endif  // GPUSCHED_API_HTTP_CLIENT_H_
