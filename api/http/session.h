// One connection's life: TLS handshake, then read request / call handler /
// write response until the peer, a timeout, an error or Shutdown ends it.
// Internal to the http library.
#ifndef GPUSCHED_API_HTTP_SESSION_H_
#define GPUSCHED_API_HTTP_SESSION_H_

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "api/http/message.h"
#include "api/http/server.h"
#include "api/http/session_registry.h"

namespace gpusched::http::internal {

// Shared by all sessions of one server; outlives them.
struct SessionConfig {
  const ServerOptions& options;
  const Handler& handler;
  boost::asio::ssl::context* tls;  // nullptr for plain HTTP.
  // Where options.blocking requests run; nullptr when it is unset.
  boost::asio::thread_pool* blocking_pool = nullptr;
};

// Serves `socket` on its own executor (which must be a strand, because the
// session's state is touched only from its coroutine and StopIfIdle). Drops
// the connection at once if the registry is already stopping.
void StartSession(boost::asio::ip::tcp::socket socket,
                  const SessionConfig& config, SessionRegistry& registry);

}  // namespace gpusched::http::internal

#endif  // GPUSCHED_API_HTTP_SESSION_H_
