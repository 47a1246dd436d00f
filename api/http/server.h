// HTTP/1.1 and HTTPS server that hands every request to one Handler.
//
// The transport is thin on purpose (DESIGN.md §4.9): it reads with size limits
// and timeouts, classifies errors into 400/413/431/500 responses, and calls
// the handler. Boost.Beast stays behind the pimpl so that including this
// header does not pull Asio into every translation unit.
#ifndef GPUSCHED_API_HTTP_SERVER_H_
#define GPUSCHED_API_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "api/http/message.h"

namespace gpusched::http {

struct ServerOptions {
  // "host:port"; port 0 picks an ephemeral port; "[::1]:port" for IPv6;
  // ":port" listens on all IPv4 addresses.
  std::string listen = "127.0.0.1:8888";
  // Both set: serve HTTPS (PEM files), TLS 1.2 or newer.
  std::string tls_cert_file, tls_key_file;
  // Or the same as PEM text, for a certificate the process made or fetched
  // itself (the admission webhook's, kept in a Secret), so that no key is
  // written to disk. Excludes the two file options.
  std::string tls_cert_pem, tls_key_pem;
  // Set: clients must present a certificate signed by this CA (PEM).
  std::string client_ca_file;
  // Ask clients for a certificate without verifying it in the handshake;
  // the handler gets it (Request::peer_certificates) to verify against a CA
  // that can change while serving (an aggregated API server's front-proxy
  // CA). Excludes client_ca_file; needs a serving certificate.
  bool ask_client_certificate = false;
  // Copy every request header into Request::headers (off: the extender's
  // hot path does not pay for headers it never reads).
  bool keep_headers = false;
  // A larger body gets a 413 JSON error and the connection is closed.
  size_t body_limit_bytes = 16 << 20;
  // The whole request (header and body) must arrive within this, counted from
  // its first byte (from the accept for a connection's first request).
  std::chrono::milliseconds read_timeout{10000};
  // Keep-alive connections with no request for this long are closed.
  std::chrono::milliseconds idle_timeout{90000};
  // I/O threads; handlers run on them.
  int threads = 2;
  // Requests for which this returns true may wait on another service (live
  // bind calls the API server): they run on a pool of `blocking_threads`
  // instead, so that they never hold an I/O thread and a quick request
  // never queues behind them. Unset: every handler runs on an I/O thread.
  std::function<bool(const Request&)> blocking;
  int blocking_threads = 16;
};

class Server {
 public:
  // Binds and listens before returning, then serves on `options.threads`
  // threads. A bad address or TLS file gives an error naming what failed.
  static absl::StatusOr<std::unique_ptr<Server>> Start(ServerOptions options,
                                                       Handler handler);

  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();  // Calls Shutdown().

  uint16_t port() const;  // The bound port (useful with port 0).
  // "http://127.0.0.1:PORT" or "https://..."; a wildcard listen address is
  // reported as loopback so the URL can be dialled.
  std::string url() const;

  // Stops accepting, lets requests whose handler is running finish and their
  // responses be written, closes idle and half-read connections, joins the
  // I/O threads, then returns. Idempotent and thread-safe, but must not be
  // called from a handler (it waits for handlers to finish).
  void Shutdown();

 private:
  class Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Blocks until SIGTERM or SIGINT arrives, then returns the signal number. Used
// by `gpusched serve` to shut down gracefully. The two signals are unblocked
// in the calling thread while waiting, so a program may block them in all
// other threads (and a signal already pending on this thread is received).
int WaitForTerminationSignal();

// As above, but also returns 0 once `stop` becomes ready.
int WaitForTerminationSignal(std::shared_future<void> stop);

}  // namespace gpusched::http

#endif  // GPUSCHED_API_HTTP_SERVER_H_
