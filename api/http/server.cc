#include "api/http/server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "api/http/listen_address.h"
#include "api/http/session.h"
#include "api/http/session_registry.h"
#include "api/http/tls.h"

namespace gpusched::http {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using error_code = boost::system::error_code;

constexpr auto kAwait = asio::as_tuple(asio::use_awaitable);
// Pause after a failed accept (e.g. out of file descriptors) so the loop
// does not spin while the condition lasts.
constexpr std::chrono::milliseconds kAcceptRetryDelay{50};

absl::StatusOr<tcp::endpoint> ResolveListen(const std::string& listen) {
  auto host_port = internal::ParseHostPort(listen);
  if (!host_port.ok()) return host_port.status();
  if (host_port->host.empty()) return tcp::endpoint(tcp::v4(), host_port->port);
  error_code ec;
  auto address = asio::ip::make_address(host_port->host, ec);
  if (!ec) return tcp::endpoint(address, host_port->port);
  asio::io_context io;
  tcp::resolver resolver(io);
  auto results =
      resolver.resolve(host_port->host, std::to_string(host_port->port),
                       tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "listen address \"", listen,
        "\": cannot resolve host: ", ec ? ec.message() : "no addresses"));
  }
  return results.begin()->endpoint();
}

}  // namespace

class Server::Impl {
 public:
  Impl(ServerOptions options, Handler handler,
       std::unique_ptr<asio::ssl::context> tls)
      : options_(std::move(options)),
        handler_(std::move(handler)),
        tls_(std::move(tls)),
        blocking_pool_(options_.blocking
                           ? std::make_unique<asio::thread_pool>(
                                 std::max(1, options_.blocking_threads))
                           : nullptr),
        config_{.options = options_,
                .handler = handler_,
                .tls = tls_.get(),
                .blocking_pool = blocking_pool_.get()},
        io_(options_.threads),
        work_(asio::make_work_guard(io_)),
        acceptor_(asio::make_strand(io_)) {}

  ~Impl() { Shutdown(); }

  absl::Status Listen(const tcp::endpoint& endpoint);
  void Run();
  void Shutdown();

  uint16_t port() const { return bound_.port(); }
  std::string url() const;

 private:
  asio::awaitable<void> AcceptLoop();
  void CloseAcceptor();

  const ServerOptions options_;
  const Handler handler_;
  const std::unique_ptr<asio::ssl::context> tls_;
  const std::unique_ptr<asio::thread_pool> blocking_pool_;
  const internal::SessionConfig config_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  tcp::acceptor acceptor_;
  tcp::endpoint bound_;
  internal::SessionRegistry registry_;
  std::vector<std::thread> threads_;
  std::mutex shutdown_mu_;  // Serializes Shutdown; guards shut_down_.
  bool shut_down_ = false;
};

absl::Status Server::Impl::Listen(const tcp::endpoint& endpoint) {
  std::string where =
      internal::FormatHostPort(endpoint.address().to_string(), endpoint.port());
  error_code ec;
  auto fail = [&](std::string_view step) {
    return absl::UnavailableError(
        absl::StrFormat("%s %s: %s", step, where, ec.message()));
  };
  if (acceptor_.open(endpoint.protocol(), ec); ec) return fail("open");
  // Lets a restarted server rebind while old connections sit in TIME_WAIT.
  acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (acceptor_.bind(endpoint, ec); ec) return fail("bind");
  if (acceptor_.listen(asio::socket_base::max_listen_connections, ec); ec) {
    return fail("listen");
  }
  bound_ = acceptor_.local_endpoint(ec);
  if (ec) return fail("local address of");
  return absl::OkStatus();
}

void Server::Impl::Run() {
  asio::co_spawn(acceptor_.get_executor(), AcceptLoop(), asio::detached);
  int count = std::max(1, options_.threads);
  threads_.reserve(count);
  for (int i = 0; i < count; ++i) threads_.emplace_back([this] { io_.run(); });
}

asio::awaitable<void> Server::Impl::AcceptLoop() {
  for (;;) {
    auto [ec, socket] =
        co_await acceptor_.async_accept(asio::make_strand(io_), kAwait);
    if (!acceptor_.is_open() || ec == asio::error::operation_aborted) {
      co_return;
    }
    if (ec) {
      spdlog::warn("accept failed url={} error={}", url(), ec.message());
      asio::steady_timer pause(io_, kAcceptRetryDelay);
      co_await pause.async_wait(kAwait);
      continue;
    }
    internal::StartSession(std::move(socket), config_, registry_);
  }
}

// Runs the close on the acceptor's strand and waits, so that once Shutdown
// returns the port refuses connections.
void Server::Impl::CloseAcceptor() {
  std::promise<void> closed;
  asio::post(acceptor_.get_executor(), [this, &closed] {
    error_code ec;
    acceptor_.close(ec);
    closed.set_value();
  });
  closed.get_future().wait();
}

void Server::Impl::Shutdown() {
  std::lock_guard lock(shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  if (threads_.empty()) return;  // Never started serving.
  spdlog::info("shutting down url={} connections={}", url(), registry_.size());
  CloseAcceptor();
  registry_.StopAll();
  registry_.WaitUntilEmpty();
  work_.reset();
  io_.stop();
  for (auto& thread : threads_) thread.join();
  // Every session has ended, so no blocking handler is left to run.
  if (blocking_pool_ != nullptr) blocking_pool_->join();
  spdlog::info("stopped url={}", url());
}

std::string Server::Impl::url() const {
  asio::ip::address address = bound_.address();
  // A wildcard address cannot be dialled; loopback reaches the same server.
  if (address.is_unspecified()) {
    address = address.is_v6()
                  ? asio::ip::address(asio::ip::address_v6::loopback())
                  : asio::ip::address(asio::ip::address_v4::loopback());
  }
  return absl::StrCat(
      tls_ ? "https://" : "http://",
      internal::FormatHostPort(address.to_string(), bound_.port()));
}

absl::StatusOr<std::unique_ptr<Server>> Server::Start(ServerOptions options,
                                                      Handler handler) {
  if (!handler) return absl::InvalidArgumentError("handler is empty");
  auto endpoint = ResolveListen(options.listen);
  if (!endpoint.ok()) return endpoint.status();
  auto tls = internal::MakeServerTlsContext(options);
  if (!tls.ok()) return tls.status();
  auto impl = std::make_unique<Impl>(std::move(options), std::move(handler),
                                     std::move(*tls));
  if (auto status = impl->Listen(*endpoint); !status.ok()) return status;
  impl->Run();
  spdlog::info("listening url={}", impl->url());
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Shutdown(); }
uint16_t Server::port() const { return impl_->port(); }
std::string Server::url() const { return impl_->url(); }
void Server::Shutdown() { impl_->Shutdown(); }

}  // namespace gpusched::http
