#include "api/http/client.h"

#include <algorithm>
#include <boost/asio/ssl/context.hpp>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/cord.h"
#include "api/http/client_connection.h"
#include "api/http/tls.h"

namespace gpusched::http {

using internal::ClientConnection;

// The pool of kept-alive connections around ClientConnection.
class Client::Impl {
 public:
  Impl(std::string host, uint16_t port, ClientOptions options,
       std::unique_ptr<boost::asio::ssl::context> tls)
      : options_(std::move(options)),
        tls_(std::move(tls)),
        endpoint_{.host = host,
                  .port = port,
                  .server_name = options_.server_name.empty()
                                     ? host
                                     : options_.server_name,
                  .tls = tls_.get()} {}

  const ClientOptions& options() const { return options_; }

  // A new connection, opened within min(timeout, options.timeout). Its
  // error carries kNotSentPayload.
  absl::StatusOr<std::unique_ptr<ClientConnection>> Open(Millis timeout,
                                                         std::stop_token stop);
  absl::StatusOr<Response> RoundTrip(const ClientRequest& request,
                                     Millis timeout, std::stop_token stop);
  // Keeps `connection` for the next request if it can be reused and the
  // pool has room.
  void Release(std::unique_ptr<ClientConnection> connection);

 private:
  std::unique_ptr<ClientConnection> TakeIdle();
  void DropIdle();

  const ClientOptions options_;
  const std::unique_ptr<boost::asio::ssl::context> tls_;
  const internal::Endpoint endpoint_;

  std::mutex mu_;
  std::vector<std::unique_ptr<ClientConnection>> idle_;  // guarded by mu_
};

absl::StatusOr<std::unique_ptr<ClientConnection>> Client::Impl::Open(
    Millis timeout, std::stop_token stop) {
  auto opened = ClientConnection::Open(
      endpoint_, std::min(timeout, options_.timeout), stop);
  if (!opened.ok()) {
    absl::Status not_sent = opened.status();
    not_sent.SetPayload(kNotSentPayload, absl::Cord("1"));
    return not_sent;
  }
  return opened;
}

std::unique_ptr<ClientConnection> Client::Impl::TakeIdle() {
  std::lock_guard lock(mu_);
  if (idle_.empty()) return nullptr;
  std::unique_ptr<ClientConnection> connection = std::move(idle_.back());
  idle_.pop_back();
  return connection;
}

void Client::Impl::DropIdle() {
  std::lock_guard lock(mu_);
  idle_.clear();
}

void Client::Impl::Release(std::unique_ptr<ClientConnection> connection) {
  if (!connection->reusable()) return;
  std::lock_guard lock(mu_);
  if (idle_.size() < options_.max_idle_connections) {
    idle_.push_back(std::move(connection));
  }
}

// A kept-alive connection the server has closed meanwhile fails with a
// "stale" error before the server saw the request; that one is resent once
// on a fresh connection.
absl::StatusOr<Response> Client::Impl::RoundTrip(const ClientRequest& request,
                                                 Millis timeout,
                                                 std::stop_token stop) {
  for (int attempt = 0;; ++attempt) {
    // A retry never takes another idle connection: when the server closed
    // one (a restart, a reset), it closed them all.
    std::unique_ptr<ClientConnection> connection =
        attempt == 0 ? TakeIdle() : nullptr;
    const bool reused = connection != nullptr;
    if (!reused) {
      auto opened = Open(timeout, stop);
      if (!opened.ok()) return opened.status();
      connection = *std::move(opened);
    }
    bool stale = false;
    absl::StatusOr<Response> response =
        connection->RoundTrip(request, timeout, stop, &stale);
    if (!response.ok() && stale && reused && attempt == 0) {
      DropIdle();
      continue;
    }
    if (response.ok()) Release(std::move(connection));
    return response;
  }
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(std::string host,
                                                       uint16_t port,
                                                       ClientOptions options) {
  auto tls = internal::MakeClientTlsContext(options);
  if (!tls.ok()) return tls.status();
  auto impl = std::make_unique<Impl>(std::move(host), port, std::move(options),
                                     *std::move(tls));
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(std::string host,
                                                        uint16_t port,
                                                        ClientOptions options) {
  auto client = Create(std::move(host), port, std::move(options));
  if (!client.ok()) return client.status();
  Impl& impl = *(*client)->impl_;
  auto connection = impl.Open(impl.options().timeout, {});
  if (!connection.ok()) return connection.status();
  impl.Release(*std::move(connection));
  return client;
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

absl::StatusOr<Response> Client::Send(std::string_view method,
                                      std::string_view target,
                                      std::string_view body,
                                      std::string_view content_type) {
  return impl_->RoundTrip(ClientRequest{.method = method,
                                        .target = target,
                                        .body = body,
                                        .content_type = content_type},
                          impl_->options().timeout, {});
}

absl::StatusOr<Response> Client::RoundTrip(const ClientRequest& request,
                                           Millis timeout,
                                           std::stop_token stop) {
  return impl_->RoundTrip(request, timeout, stop);
}

absl::StatusOr<Response> Client::Stream(const ClientRequest& request,
                                        Millis header_timeout,
                                        Millis idle_timeout,
                                        const BodyHandler& on_data,
                                        std::stop_token stop) {
  auto connection = impl_->Open(header_timeout, stop);
  if (!connection.ok()) return connection.status();
  return (*connection)
      ->Stream(request, header_timeout, idle_timeout, on_data, stop);
}

}  // namespace gpusched::http
