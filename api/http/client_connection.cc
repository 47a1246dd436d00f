#include "api/http/client_connection.h"

#include <openssl/ssl.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/buffer_body.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "api/http/beast_names.h"
#include "api/http/listen_address.h"
#include "api/http/run_to_completion.h"

namespace gpusched::http::internal {
namespace {

using Result = absl::StatusOr<Response>;

// An error body is only read for its message; more is not worth holding.
constexpr size_t kErrorBodyLimit = 1 << 20;

// Errors that mean a kept-alive connection was closed by the server before
// it saw our request, so sending it again on a new connection is safe.
bool IsStale(const error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe ||
         ec == asio::ssl::error::stream_truncated;
}

BeastRequest MakeRequest(const ClientRequest& out, const std::string& host) {
  BeastRequest request;
  bhttp::verb verb = bhttp::string_to_verb(out.method);
  if (verb == bhttp::verb::unknown) {
    request.method_string(out.method);
  } else {
    request.method(verb);
  }
  request.target(out.target);
  request.version(11);
  request.set(bhttp::field::host, host);
  request.set(bhttp::field::user_agent, "gpusched");
  if (!out.accept.empty()) request.set(bhttp::field::accept, out.accept);
  if (!out.authorization.empty()) {
    request.set(bhttp::field::authorization, out.authorization);
  }
  if (!out.body.empty() && !out.content_type.empty()) {
    request.set(bhttp::field::content_type, out.content_type);
  }
  request.body() = std::string(out.body);
  request.keep_alive(true);
  request.prepare_payload();
  return request;
}

// Status and headers; the body is the caller's.
Response HeadOf(const bhttp::response_header<>& head) {
  Response response;
  response.status = static_cast<int>(head.result_int());
  response.content_type = std::string(head[bhttp::field::content_type]);
  for (const auto& field : head) {
    response.headers.emplace_back(std::string(field.name_string()),
                                  std::string(field.value()));
  }
  return response;
}

Response FromBeast(bhttp::response<bhttp::string_body>&& message) {
  Response response = HeadOf(message.base());
  response.body = std::move(message.body());
  return response;
}

}  // namespace

class ClientConnection::Impl {
 public:
  explicit Impl(Endpoint endpoint)
      : endpoint_(std::move(endpoint)),
        host_header_(FormatHostPort(endpoint_.host, endpoint_.port)) {}

  absl::Status Open(Millis timeout, std::stop_token stop) {
    return Run(DoOpen(timeout), stop);
  }
  Result RoundTrip(const ClientRequest& out, Millis timeout,
                   std::stop_token stop, bool* stale) {
    BeastRequest request = MakeRequest(out, host_header_);
    if (tls_) return Run(ExchangeOn(*tls_, request, timeout, stale), stop);
    return Run(ExchangeOn(*plain_, request, timeout, stale), stop);
  }
  Result Stream(const ClientRequest& out, Millis header_timeout,
                Millis idle_timeout, const BodyHandler& on_data,
                std::stop_token stop) {
    BeastRequest request = MakeRequest(out, host_header_);
    if (tls_) {
      return Run(
          StreamOn(*tls_, request, header_timeout, idle_timeout, on_data),
          stop);
    }
    return Run(
        StreamOn(*plain_, request, header_timeout, idle_timeout, on_data),
        stop);
  }
  bool reusable() const { return reusable_ && (plain_ || tls_); }

 private:
  template <class T>
  T Run(asio::awaitable<T> op, std::stop_token stop);
  asio::awaitable<absl::Status> DoOpen(Millis timeout);
  asio::awaitable<absl::Status> Handshake(beast::tcp_stream tcp);
  template <class S>
  asio::awaitable<Result> ExchangeOn(S& stream, BeastRequest& request,
                                     Millis timeout, bool* stale);
  template <class S>
  asio::awaitable<Result> StreamOn(S& stream, BeastRequest& request,
                                   Millis header_timeout, Millis idle_timeout,
                                   const BodyHandler& on_data);
  absl::Status Failure(std::string_view step, const error_code& ec);
  void Close();

  asio::io_context io_;
  const Endpoint endpoint_;
  const std::string host_header_;
  // At most one is set: the connection once open.
  std::unique_ptr<beast::tcp_stream> plain_;
  std::unique_ptr<TlsStream> tls_;
  beast::flat_buffer buffer_;
  bool reusable_ = true;
};

// Runs `op` on this thread until it completes. A stop request posts a close
// of the socket onto the same io_context, so the pending read or write fails
// at once and no Asio object is touched from two threads.
template <class T>
T ClientConnection::Impl::Run(asio::awaitable<T> op, std::stop_token stop) {
  std::optional<T> result;
  {
    std::stop_callback on_stop(
        stop, [this] { asio::post(io_, [this] { Close(); }); });
    result = RunToCompletion(io_, std::move(op));
  }
  if (stop.stop_requested()) {
    reusable_ = false;
    return T(absl::CancelledError("stopped"));
  }
  if (!result) return T(absl::InternalError("request did not complete"));
  if (!result->ok()) reusable_ = false;
  return std::move(*result);
}

// A timeout is DeadlineExceeded so that callers can tell "out of time, the
// server may still act on the request" from a connection that failed.
absl::Status ClientConnection::Impl::Failure(std::string_view step,
                                             const error_code& ec) {
  reusable_ = false;
  if (ec == beast::error::timeout) {
    return absl::DeadlineExceededError(
        absl::StrFormat("%s %s: timed out", step, host_header_));
  }
  return absl::UnavailableError(
      absl::StrFormat("%s %s: %s", step, host_header_, ec.message()));
}

asio::awaitable<absl::Status> ClientConnection::Impl::DoOpen(Millis timeout) {
  tcp::resolver resolver(io_);
  auto [resolve_ec, endpoints] = co_await resolver.async_resolve(
      endpoint_.host, std::to_string(endpoint_.port), kAwait);
  if (resolve_ec) co_return Failure("resolve", resolve_ec);
  beast::tcp_stream tcp(io_);
  tcp.expires_after(timeout);
  auto [connect_ec, endpoint] = co_await tcp.async_connect(endpoints, kAwait);
  if (connect_ec) co_return Failure("connect to", connect_ec);
  error_code ignored;
  tcp.socket().set_option(tcp::no_delay(true), ignored);
  if (endpoint_.tls == nullptr) {
    plain_ = std::make_unique<beast::tcp_stream>(std::move(tcp));
    co_return absl::OkStatus();
  }
  co_return co_await Handshake(std::move(tcp));
}

asio::awaitable<absl::Status> ClientConnection::Impl::Handshake(
    beast::tcp_stream tcp) {
  auto stream = std::make_unique<TlsStream>(std::move(tcp), *endpoint_.tls);
  const std::string& name = endpoint_.server_name;
  error_code not_ip;
  asio::ip::make_address(name, not_ip);
  if (not_ip) {  // SNI carries names only, never addresses.
    SSL_set_tlsext_host_name(stream->native_handle(), name.c_str());
  }
  stream->set_verify_callback(asio::ssl::host_name_verification(name));
  auto [ec] =
      co_await stream->async_handshake(asio::ssl::stream_base::client, kAwait);
  if (ec) co_return Failure("TLS handshake with", ec);
  tls_ = std::move(stream);
  co_return absl::OkStatus();
}

template <class S>
asio::awaitable<Result> ClientConnection::Impl::ExchangeOn(
    S& stream, BeastRequest& request, Millis timeout, bool* stale) {
  beast::get_lowest_layer(stream).expires_after(timeout);
  auto [write_ec, written] =
      co_await bhttp::async_write(stream, request, kAwait);
  bhttp::response_parser<bhttp::string_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  if (write_ec) {
    // A server may answer early (413) and close while the body is still
    // being sent: the answer may already be readable, and is the better
    // report than the broken pipe.
    auto [early_ec, early] =
        co_await bhttp::async_read(stream, buffer_, parser, kAwait);
    reusable_ = false;
    if (!early_ec) co_return FromBeast(parser.release());
    *stale = IsStale(write_ec);
    co_return Failure("write to", write_ec);
  }
  auto [read_ec, read] =
      co_await bhttp::async_read(stream, buffer_, parser, kAwait);
  if (read_ec) {
    *stale = IsStale(read_ec);
    co_return Failure("read from", read_ec);
  }
  reusable_ = parser.get().keep_alive();
  co_return FromBeast(parser.release());
}

template <class S>
asio::awaitable<Result> ClientConnection::Impl::StreamOn(
    S& stream, BeastRequest& request, Millis header_timeout,
    Millis idle_timeout, const BodyHandler& on_data) {
  auto& socket = beast::get_lowest_layer(stream);
  socket.expires_after(header_timeout);
  auto [write_ec, written] =
      co_await bhttp::async_write(stream, request, kAwait);
  if (write_ec) co_return Failure("write to", write_ec);
  bhttp::response_parser<bhttp::buffer_body> parser;
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());
  auto [header_ec, header_bytes] =
      co_await bhttp::async_read_header(stream, buffer_, parser, kAwait);
  if (header_ec) co_return Failure("read from", header_ec);
  Response response = HeadOf(parser.get().base());
  const bool success = response.status / 100 == 2;
  char piece[16384];
  while (!parser.is_done()) {
    parser.get().body().data = piece;
    parser.get().body().size = sizeof(piece);
    socket.expires_after(success ? idle_timeout : header_timeout);
    auto [ec, n] =
        co_await bhttp::async_read_some(stream, buffer_, parser, kAwait);
    if (ec == bhttp::error::need_buffer) ec = {};
    if (ec) co_return Failure("read from", ec);
    std::string_view data(piece, sizeof(piece) - parser.get().body().size);
    if (!success) {
      if (response.body.size() < kErrorBodyLimit) response.body.append(data);
    } else if (!data.empty()) {
      absl::Status handled = on_data(data);
      if (!handled.ok()) {
        reusable_ = false;  // the rest of the body is left unread
        co_return handled;
      }
    }
  }
  reusable_ = parser.keep_alive();
  co_return response;
}

void ClientConnection::Impl::Close() {
  reusable_ = false;
  error_code ignored;
  if (plain_) plain_->socket().close(ignored);
  if (tls_) beast::get_lowest_layer(*tls_).socket().close(ignored);
}

absl::StatusOr<std::unique_ptr<ClientConnection>> ClientConnection::Open(
    const Endpoint& endpoint, Millis timeout, std::stop_token stop) {
  auto impl = std::make_unique<Impl>(endpoint);
  if (absl::Status s = impl->Open(timeout, stop); !s.ok()) return s;
  return std::unique_ptr<ClientConnection>(
      new ClientConnection(std::move(impl)));
}

ClientConnection::ClientConnection(std::unique_ptr<Impl> impl)
    : impl_(std::move(impl)) {}
ClientConnection::~ClientConnection() = default;

absl::StatusOr<Response> ClientConnection::RoundTrip(
    const ClientRequest& request, Millis timeout, std::stop_token stop,
    bool* stale) {
  *stale = false;
  return impl_->RoundTrip(request, timeout, stop, stale);
}

absl::StatusOr<Response> ClientConnection::Stream(const ClientRequest& request,
                                                  Millis header_timeout,
                                                  Millis idle_timeout,
                                                  const BodyHandler& on_data,
                                                  std::stop_token stop) {
  return impl_->Stream(request, header_timeout, idle_timeout, on_data, stop);
}

bool ClientConnection::reusable() const { return impl_->reusable(); }

}  // namespace gpusched::http::internal
