// Small helpers shared by the http tests.
#ifndef GPUSCHED_TESTS_HTTP_TEST_SERVER_H_
#define GPUSCHED_TESTS_HTTP_TEST_SERVER_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "api/http/client.h"
#include "api/http/server.h"

namespace gpusched::http::testing {

// Loopback, ephemeral port, short timeouts so failures do not hang.
inline ServerOptions LocalOptions() {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  return options;
}

// Null (with a test failure recorded) if the server did not start.
inline std::unique_ptr<Server> StartOrFail(ServerOptions options,
                                           Handler handler) {
  auto server = Server::Start(std::move(options), std::move(handler));
  if (!server.ok()) {
    ADD_FAILURE() << "Server::Start: " << server.status();
    return nullptr;
  }
  return std::move(*server);
}

inline std::unique_ptr<Client> ConnectOrFail(uint16_t port,
                                             ClientOptions options = {}) {
  auto client = Client::Connect("127.0.0.1", port, std::move(options));
  if (!client.ok()) {
    ADD_FAILURE() << "Client::Connect: " << client.status();
    return nullptr;
  }
  return std::move(*client);
}

// Handler answering every request with `body`.
inline Handler Constant(std::string body) {
  return [body = std::move(body)](const Request&) {
    return Response{.body = body};
  };
}

// Value of header `name` in `response`, or "" if absent.
inline std::string HeaderOf(const Response& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (key.size() == name.size() &&
        std::equal(key.begin(), key.end(), name.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return value;
    }
  }
  return "";
}

}  // namespace gpusched::http::testing

#endif  // GPUSCHED_TESTS_HTTP_TEST_SERVER_H_
