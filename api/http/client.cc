#include "api/http/client.h"

#include <openssl/ssl.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
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
#include "api/http/listen_address.h"
#include "api/http/run_to_completion.h"
#include "api/http/tls.h"

namespace gpusched::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;
using BeastRequest = bhttp::request<bhttp::string_body>;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);

// Errors that mean a kept-alive connection was closed by the server before
// it saw our request, so sending it again on a new connection is safe.
bool IsStaleConnection(const error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe ||
         ec == asio::ssl::error::stream_truncated;
}

// RunToCompletion with "did not complete" as an error.
template <class T>
T RunSync(asio::io_context& io, asio::awaitable<T> op) {
  std::optional<T> result = RunToCompletion(io, std::move(op));
  if (!result) return T(absl::InternalError("request did not complete"));
  return std::move(*result);
}

Response FromBeast(bhttp::response<bhttp::string_body>&& message) {
  Response response;
  response.status = static_cast<int>(message.result_int());
  response.content_type = std::string(message[bhttp::field::content_type]);
  for (const auto& field : message) {
    response.headers.emplace_back(std::string(field.name_string()),
                                  std::string(field.value()));
  }
  response.body = std::move(message.body());
  return response;
}

BeastRequest MakeRequest(std::string_view method, std::string_view target,
                         std::string_view body, std::string_view content_type,
                         const std::string& host) {
  BeastRequest request;
  bhttp::verb verb = bhttp::string_to_verb(method);
  if (verb == bhttp::verb::unknown) {
    request.method_string(method);
  } else {
    request.method(verb);
  }
  request.target(target);
  request.version(11);
  request.set(bhttp::field::host, host);
  request.set(bhttp::field::user_agent, "gpusched-client");
  if (!body.empty() && !content_type.empty()) {
    request.set(bhttp::field::content_type, content_type);
  }
  request.body() = std::string(body);
  request.keep_alive(true);
  request.prepare_payload();
  return request;
}

// The result of one exchange; `stale` allows the caller one retry.
struct Exchange {
  absl::StatusOr<Response> response;
  bool stale = false;
};

}  // namespace

class Client::Impl {
 public:
  Impl(std::string host, uint16_t port, ClientOptions options,
       std::unique_ptr<asio::ssl::context> tls)
      : host_(std::move(host)),
        port_(port),
        options_(std::move(options)),
        tls_context_(std::move(tls)) {}

  absl::Status Connect() { return RunSync(io_, DoConnect()); }
  absl::StatusOr<Response> Send(std::string_view method,
                                std::string_view target, std::string_view body,
                                std::string_view content_type);

 private:
  asio::awaitable<absl::Status> DoConnect();
  asio::awaitable<absl::Status> Handshake(beast::tcp_stream tcp);
  asio::awaitable<Exchange> DoExchange(BeastRequest& request);
  template <class Stream>
  asio::awaitable<Exchange> ExchangeOn(Stream& stream, BeastRequest& request);
  absl::Status Failure(std::string_view step, const error_code& ec) const;
  void Disconnect();
  bool connected() const { return plain_ || tls_; }

  asio::io_context io_;
  const std::string host_;
  const uint16_t port_;
  const ClientOptions options_;
  const std::unique_ptr<asio::ssl::context> tls_context_;
  // At most one is set: the current connection.
  std::unique_ptr<beast::tcp_stream> plain_;
  std::unique_ptr<TlsStream> tls_;
  beast::flat_buffer buffer_;
};

absl::Status Client::Impl::Failure(std::string_view step,
                                   const error_code& ec) const {
  return absl::UnavailableError(absl::StrFormat(
      "%s %s: %s", step, internal::FormatHostPort(host_, port_), ec.message()));
}

asio::awaitable<absl::Status> Client::Impl::DoConnect() {
  Disconnect();
  tcp::resolver resolver(io_);
  auto [resolve_ec, endpoints] =
      co_await resolver.async_resolve(host_, std::to_string(port_), kAwait);
  if (resolve_ec) co_return Failure("resolve", resolve_ec);
  beast::tcp_stream tcp(io_);
  tcp.expires_after(options_.timeout);
  auto [connect_ec, endpoint] = co_await tcp.async_connect(endpoints, kAwait);
  if (connect_ec) co_return Failure("connect", connect_ec);
  error_code ignored;
  tcp.socket().set_option(tcp::no_delay(true), ignored);
  if (!tls_context_) {
    plain_ = std::make_unique<beast::tcp_stream>(std::move(tcp));
    co_return absl::OkStatus();
  }
  co_return co_await Handshake(std::move(tcp));
}

asio::awaitable<absl::Status> Client::Impl::Handshake(beast::tcp_stream tcp) {
  auto stream = std::make_unique<TlsStream>(std::move(tcp), *tls_context_);
  error_code not_ip;
  asio::ip::make_address(host_, not_ip);
  if (not_ip) {  // SNI carries names only, never addresses.
    SSL_set_tlsext_host_name(stream->native_handle(), host_.c_str());
  }
  stream->set_verify_callback(asio::ssl::host_name_verification(host_));
  auto [ec] =
      co_await stream->async_handshake(asio::ssl::stream_base::client, kAwait);
  if (ec) co_return Failure("TLS handshake with", ec);
  tls_ = std::move(stream);
  co_return absl::OkStatus();
}

asio::awaitable<Exchange> Client::Impl::DoExchange(BeastRequest& request) {
  if (tls_) co_return co_await ExchangeOn(*tls_, request);
  co_return co_await ExchangeOn(*plain_, request);
}

template <class Stream>
asio::awaitable<Exchange> Client::Impl::ExchangeOn(Stream& stream,
                                                   BeastRequest& request) {
  beast::get_lowest_layer(stream).expires_after(options_.timeout);
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
    if (!early_ec) {
      Exchange exchange{FromBeast(parser.release())};
      Disconnect();
      co_return exchange;
    }
    co_return Exchange{Failure("write to", write_ec),
                       IsStaleConnection(write_ec)};
  }
  auto [read_ec, read] =
      co_await bhttp::async_read(stream, buffer_, parser, kAwait);
  if (read_ec) {
    co_return Exchange{Failure("read from", read_ec),
                       IsStaleConnection(read_ec)};
  }
  bool keep_alive = parser.get().keep_alive();
  Exchange exchange{FromBeast(parser.release())};
  if (!keep_alive) Disconnect();
  co_return exchange;
}

absl::StatusOr<Response> Client::Impl::Send(std::string_view method,
                                            std::string_view target,
                                            std::string_view body,
                                            std::string_view content_type) {
  BeastRequest request = MakeRequest(method, target, body, content_type,
                                     internal::FormatHostPort(host_, port_));
  bool reused = connected();
  if (!reused) {
    if (auto status = Connect(); !status.ok()) return status;
  }
  Exchange exchange = RunSync(io_, DoExchange(request));
  if (!exchange.response.ok() && exchange.stale && reused) {
    if (auto status = Connect(); !status.ok()) return status;
    exchange = RunSync(io_, DoExchange(request));
  }
  if (!exchange.response.ok()) Disconnect();
  return std::move(exchange.response);
}

void Client::Impl::Disconnect() {
  error_code ignored;
  if (plain_) plain_->socket().close(ignored);
  if (tls_) beast::get_lowest_layer(*tls_).socket().close(ignored);
  plain_.reset();
  tls_.reset();
  buffer_.clear();
}

absl::StatusOr<std::unique_ptr<Client>> Client::Connect(std::string host,
                                                        uint16_t port,
                                                        ClientOptions options) {
  auto tls = internal::MakeClientTlsContext(options);
  if (!tls.ok()) return tls.status();
  auto impl = std::make_unique<Impl>(std::move(host), port, std::move(options),
                                     std::move(*tls));
  if (auto status = impl->Connect(); !status.ok()) return status;
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

absl::StatusOr<Response> Client::Send(std::string_view method,
                                      std::string_view target,
                                      std::string_view body,
                                      std::string_view content_type) {
  return impl_->Send(method, target, body, content_type);
}

}  // namespace gpusched::http
