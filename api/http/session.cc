#include "api/http/session.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <spdlog/spdlog.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "api/http/beast_names.h"
#include "api/http/listen_address.h"

namespace gpusched::http::internal {
namespace {

using PlainStream = beast::tcp_stream;

// After an error response, how long to drain what the peer is still sending,
// so that closing does not reset the connection before it reads the response.
constexpr std::chrono::milliseconds kLingerTime{1000};
// How long a TLS close waits for the peer's close_notify.
constexpr std::chrono::milliseconds kTlsCloseTime{1000};
constexpr size_t kReadChunk = 4096;
// The first read of a request: room for a whole filter request (500 names,
// ~15 KB) at once, so that it takes one read instead of several. The
// buffer keeps this capacity for the connection's life.
constexpr size_t kRequestReadChunk = 64 * 1024;
constexpr size_t kBodyReadSlack = 64;

std::string RemoteOf(const tcp::socket& socket) {
  error_code ec;
  tcp::endpoint peer = socket.remote_endpoint(ec);
  if (ec) return "unknown";
  return FormatHostPort(peer.address().to_string(), peer.port());
}

// What a connection adds to each of its requests.
struct ConnectionFacts {
  const std::string& remote;
  bool keep_headers = false;
  std::shared_ptr<const std::vector<std::string>> peer_certificates;
};

void CopyHeaders(const BeastRequest& beast_request, Request& request) {
  for (const auto& field : beast_request) {
    std::string name(field.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(c));
    request.headers.emplace_back(std::move(name), std::string(field.value()));
  }
}

// The client's certificate and the chain it sent, as DER; null for none.
std::shared_ptr<const std::vector<std::string>> PeerCertificates(SSL* ssl) {
  X509* own = SSL_get0_peer_certificate(ssl);
  if (own == nullptr) return nullptr;
  auto der = std::make_shared<std::vector<std::string>>();
  auto add = [&der](X509* cert) {
    unsigned char* bytes = nullptr;
    const int size = i2d_X509(cert, &bytes);
    if (size <= 0) return;
    der->emplace_back(reinterpret_cast<char*>(bytes), size);
    OPENSSL_free(bytes);
  };
  add(own);
  // On a server the chain lacks the client's own certificate.
  STACK_OF(X509)* chain = SSL_get_peer_cert_chain(ssl);
  for (int i = 0; chain != nullptr && i < sk_X509_num(chain); ++i) {
    add(sk_X509_value(chain, i));
  }
  return der;
}

Request ToRequest(BeastRequest&& beast_request, const ConnectionFacts& facts) {
  Request request;
  request.method = std::string(beast_request.method_string());
  std::string_view target = beast_request.target();
  size_t question = target.find('?');
  request.target = std::string(target.substr(0, question));
  if (question != std::string_view::npos) {
    request.query = std::string(target.substr(question + 1));
  }
  request.content_type = std::string(beast_request[bhttp::field::content_type]);
  if (facts.keep_headers) CopyHeaders(beast_request, request);
  request.body = std::move(beast_request.body());
  request.remote = facts.remote;
  request.peer_certificates = facts.peer_certificates;
  return request;
}

bhttp::response<bhttp::string_body> ToBeast(Response&& response,
                                            unsigned version, bool keep_alive) {
  bhttp::response<bhttp::string_body> out;
  out.version(version);
  // Beast rejects codes outside 100..999; a handler bug must not crash us.
  bool valid = response.status >= 100 && response.status <= 999;
  out.result(valid ? static_cast<unsigned>(response.status) : 500u);
  out.set(bhttp::field::server, "gpusched");
  out.set(bhttp::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers) out.insert(name, value);
  out.body() = std::move(response.body);
  out.keep_alive(keep_alive);
  out.prepare_payload();
  return out;
}

// CPU time of the calling thread.
std::chrono::nanoseconds ThreadCpuTime() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) +
         std::chrono::nanoseconds(now.tv_nsec);
}

void AddMicros(Response& response, const char* header,
               std::chrono::nanoseconds elapsed) {
  char text[32];
  const int n = std::snprintf(text, sizeof(text), "%.1f",
                              static_cast<double>(elapsed.count()) / 1000.0);
  response.headers.emplace_back(header, std::string(text, n));
}

// The response a read error deserves, or nullopt to close without one
// (timeouts, resets, a peer that closed mid-request).
std::optional<Response> ErrorResponseFor(const error_code& ec,
                                         size_t body_limit) {
  if (ec == bhttp::error::body_limit) {
    return JsonError(413, absl::StrCat("request body exceeds the limit of ",
                                       body_limit, " bytes"));
  }
  if (ec == bhttp::error::header_limit) {
    return JsonError(431, "request header fields too large");
  }
  bool protocol_error =
      ec.category() ==
          bhttp::make_error_code(bhttp::error::bad_target).category() &&
      ec != bhttp::error::end_of_stream && ec != bhttp::error::partial_message;
  if (protocol_error) {
    return JsonError(400, absl::StrCat("malformed request: ", ec.message()));
  }
  return std::nullopt;
}

// What reading one request produced: a request, an error to answer before
// closing, or neither (close quietly).
struct ReadOutcome {
  std::optional<BeastRequest> request;
  std::optional<Response> error;
};

template <class Stream>
class HttpSession final
    : public Session,
      public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  HttpSession(Stream stream, std::string remote, const SessionConfig& config,
              SessionRegistry& registry)
      : stream_(std::move(stream)),
        remote_(std::move(remote)),
        config_(config),
        registry_(registry) {}

  void StopIfIdle() override {
    asio::post(stream_.get_executor(), [self = this->shared_from_this()] {
      if (!self->busy_) self->CloseSocket();
    });
  }

  asio::awaitable<void> Run() {
    if (!co_await Handshake()) co_return;
    for (bool first = true; co_await ServeOne(first); first = false) {
    }
  }

  void CloseSocket() {
    error_code ec;
    Tcp().socket().shutdown(tcp::socket::shutdown_both, ec);
    Tcp().close();
  }

  const std::string& remote() const { return remote_; }
  auto executor() { return stream_.get_executor(); }

 private:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  beast::tcp_stream& Tcp() { return beast::get_lowest_layer(stream_); }
  const ServerOptions& options() const { return config_.options; }

  void LogClose(std::string_view reason) {
    spdlog::debug("connection closed remote={} reason={}", remote_, reason);
  }

  asio::awaitable<bool> Handshake() {
    if constexpr (kTls) {
      Tcp().expires_after(options().read_timeout);
      auto [ec] = co_await stream_.async_handshake(
          asio::ssl::stream_base::server, kAwait);
      if (ec) {
        spdlog::debug("tls handshake failed remote={} error={}", remote_,
                      ec.message());
        CloseSocket();
        co_return false;
      }
      if (options().ask_client_certificate) {
        peer_certificates_ = PeerCertificates(stream_.native_handle());
      }
    }
    co_return true;
  }

  ConnectionFacts ConnectionOf() const {
    return {.remote = remote_,
            .keep_headers = options().keep_headers,
            .peer_certificates = peer_certificates_};
  }

  // Serves one request; true to keep the connection for another.
  asio::awaitable<bool> ServeOne(bool first) {
    if (!co_await WaitForRequestStart(first)) co_return false;
    ReadOutcome in = co_await ReadRequest();
    if (in.error) {
      co_await Write(std::move(*in.error), 11, /*keep_alive=*/false);
      co_await LingeringClose();
      co_return false;
    }
    if (!in.request) {
      CloseSocket();
      co_return false;
    }
    co_return co_await HandleAndReply(std::move(*in.request));
  }

  // Waits, up to idle_timeout, for the first byte of the next request, then
  // starts the read_timeout clock. The first request on a connection gets
  // only read_timeout, so a silent new connection cannot linger.
  asio::awaitable<bool> WaitForRequestStart(bool first) {
    if (registry_.stopping()) {
      CloseSocket();
      co_return false;
    }
    if (!first && buffer_.size() == 0) {
      Tcp().expires_after(options().idle_timeout);
      auto [ec, n] = co_await stream_.async_read_some(
          buffer_.prepare(kRequestReadChunk), kAwait);
      if (ec) {
        LogClose(ec.message());
        CloseSocket();
        co_return false;
      }
      buffer_.commit(n);
    }
    Tcp().expires_after(options().read_timeout);
    co_return true;
  }

  asio::awaitable<ReadOutcome> ReadRequest() {
    bhttp::request_parser<bhttp::string_body> parser;
    parser.body_limit(options().body_limit_bytes);
    auto [ec, n] =
        co_await bhttp::async_read_header(stream_, buffer_, parser, kAwait);
    // Beast applies body_limit to Content-Length already; checking here too
    // keeps the up-front rejection explicit rather than a parser detail.
    // content_length() requires a complete header: after a failed read
    // (malformed, oversized, timed out) Beast asserts in debug builds.
    boost::optional<std::uint64_t> length;
    if (!ec) length = parser.content_length();
    if (!ec && length && *length > options().body_limit_bytes) {
      ec = bhttp::error::body_limit;
    }
    if (!ec && !parser.is_done()) {
      // Spare capacity past the body lets a JSON parser read it in place
      // (simdjson reads up to 64 bytes past the end); the body is still
      // empty here, so this costs no copy.
      if (length) parser.get().body().reserve(*length + kBodyReadSlack);
      if (parser.get()[bhttp::field::expect] == "100-continue") {
        co_await SendContinue();
      }
      std::tie(ec, n) =
          co_await bhttp::async_read(stream_, buffer_, parser, kAwait);
    }
    ReadOutcome outcome;
    if (!ec) {
      outcome.request = parser.release();
    } else {
      LogClose(ec.message());
      outcome.error = ErrorResponseFor(ec, options().body_limit_bytes);
    }
    co_return outcome;
  }

  // Curl and others wait a second for this before sending a large body.
  asio::awaitable<void> SendContinue() {
    bhttp::response<bhttp::empty_body> interim{bhttp::status::continue_, 11};
    co_await bhttp::async_write(stream_, interim, kAwait);
  }

  asio::awaitable<bool> HandleAndReply(BeastRequest beast_request) {
    busy_ = true;  // From here Shutdown lets the exchange finish.
    unsigned version = beast_request.version();
    bool keep_alive = beast_request.keep_alive();
    // Server time of the exchange: from the whole request read to the
    // response built (conversion, routing, handler; not the socket I/O), so
    // a load generator can tell our time from the network's and its own.
    const auto start = std::chrono::steady_clock::now();
    const auto cpu_start = ThreadCpuTime();
    // Built before the co_await, not as a temporary inside it: GCC 12
    // destroys such a temporary twice, and this one owns a shared_ptr.
    const ConnectionFacts facts = ConnectionOf();
    Request request = ToRequest(std::move(beast_request), facts);
    Response response = co_await Handle(std::move(request));
    AddMicros(response, kServerCpuHeader, ThreadCpuTime() - cpu_start);
    AddMicros(response, kServerTimeHeader,
              std::chrono::steady_clock::now() - start);
    // Tell the client we are closing rather than let it reuse a dead socket.
    keep_alive = keep_alive && !registry_.stopping();
    bool written = co_await Write(std::move(response), version, keep_alive);
    busy_ = false;
    if (written && keep_alive) co_return true;
    if (written) co_await GracefulClose();
    CloseSocket();
    co_return false;
  }

  // The handler's answer: on this I/O thread, or for a blocking request on
  // the blocking pool while this coroutine waits without holding the thread.
  asio::awaitable<Response> Handle(Request request) {
    if (config_.blocking_pool == nullptr || !options().blocking(request)) {
      co_return CallHandler(request);
    }
    // The pool wakes the session by cancelling a timer on the session's
    // strand; `done` covers a wake-up that could come before the wait.
    struct Pending {
      explicit Pending(asio::any_io_executor executor)
          : timer(executor, asio::steady_timer::time_point::max()) {}
      asio::steady_timer timer;
      Response response;
      bool done = false;
    };
    auto pending = std::make_shared<Pending>(stream_.get_executor());
    asio::post(*config_.blocking_pool, [self = this->shared_from_this(),
                                        pending, request = std::move(request)] {
      Response response = self->CallHandler(request);
      asio::post(pending->timer.get_executor(),
                 [pending, response = std::move(response)]() mutable {
                   pending->response = std::move(response);
                   pending->done = true;
                   pending->timer.cancel();
                 });
    });
    while (!pending->done) co_await pending->timer.async_wait(kAwait);
    co_return std::move(pending->response);
  }

  Response CallHandler(const Request& request) {
    try {
      return config_.handler(request);
    } catch (const std::exception& e) {
      spdlog::error("handler failed method={} target={} remote={} error={}",
                    request.method, request.target, remote_, e.what());
    } catch (...) {
      spdlog::error("handler failed method={} target={} remote={} error={}",
                    request.method, request.target, remote_,
                    "non-standard exception");
    }
    return JsonError(500, "internal error while handling the request");
  }

  // A peer that stops reading is treated like an idle one, hence
  // idle_timeout bounds the write.
  asio::awaitable<bool> Write(Response response, unsigned version,
                              bool keep_alive) {
    auto message = ToBeast(std::move(response), version, keep_alive);
    Tcp().expires_after(options().idle_timeout);
    auto [ec, n] = co_await bhttp::async_write(stream_, message, kAwait);
    if (ec) LogClose(ec.message());
    co_return !ec;
  }

  asio::awaitable<void> GracefulClose() {
    if constexpr (kTls) {
      Tcp().expires_after(kTlsCloseTime);
      co_await stream_.async_shutdown(kAwait);
    } else {
      error_code ec;
      Tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
    }
  }

  // Half-closes, then discards input for a while: closing with unread data
  // would send a reset that can destroy our error response in flight.
  asio::awaitable<void> LingeringClose() {
    error_code ec;
    Tcp().socket().shutdown(tcp::socket::shutdown_send, ec);
    Tcp().expires_after(kLingerTime);
    std::array<char, kReadChunk> sink;
    for (;;) {
      auto [read_ec, n] =
          co_await Tcp().async_read_some(asio::buffer(sink), kAwait);
      if (read_ec) break;
    }
    CloseSocket();
  }

  Stream stream_;
  beast::flat_buffer buffer_;
  const std::string remote_;
  // ServerOptions::ask_client_certificate: what the handshake received.
  std::shared_ptr<const std::vector<std::string>> peer_certificates_;
  const SessionConfig& config_;
  SessionRegistry& registry_;
  // A handler is running or its response is being written. Touched only on
  // the session's strand.
  bool busy_ = false;
};

template <class Stream>
asio::awaitable<void> RunSession(std::shared_ptr<HttpSession<Stream>> session,
                                 SessionRegistry& registry) {
  try {
    co_await session->Run();
  } catch (const std::exception& e) {
    spdlog::warn("connection failed remote={} error={}", session->remote(),
                 e.what());
    session->CloseSocket();
  }
  registry.Remove(session.get());
}

template <class Stream>
void Spawn(std::shared_ptr<HttpSession<Stream>> session,
           SessionRegistry& registry) {
  if (!registry.Add(session)) return;  // Shutting down: drop the connection.
  auto executor = session->executor();
  asio::co_spawn(executor, RunSession(std::move(session), registry),
                 asio::detached);
}

}  // namespace

void StartSession(tcp::socket socket, const SessionConfig& config,
                  SessionRegistry& registry) {
  error_code ec;
  // Small JSON responses should not wait for Nagle's algorithm.
  socket.set_option(tcp::no_delay(true), ec);
  std::string remote = RemoteOf(socket);
  spdlog::debug("connection accepted remote={}", remote);
  if (config.tls != nullptr) {
    TlsStream stream(PlainStream(std::move(socket)), *config.tls);
    Spawn(std::make_shared<HttpSession<TlsStream>>(
              std::move(stream), std::move(remote), config, registry),
          registry);
  } else {
    Spawn(std::make_shared<HttpSession<PlainStream>>(
              PlainStream(std::move(socket)), std::move(remote), config,
              registry),
          registry);
  }
}

}  // namespace gpusched::http::internal
