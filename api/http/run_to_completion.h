// Blocking calls over Asio coroutines: how a blocking API (the HTTP client's
// connection) gets the per-operation timeouts of Beast's async streams.
#ifndef GPUSCHED_API_HTTP_RUN_TO_COMPLETION_H_
#define GPUSCHED_API_HTTP_RUN_TO_COMPLETION_H_

#include <boost/asio/awaitable.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <optional>
#include <utility>

#include "absl/status/status.h"

namespace gpusched::http {

// Runs `op` on `io` on this thread until nothing is left to run. T is an
// absl::Status or StatusOr: an exception the coroutine throws becomes an
// InternalError; nullopt when `op` did not complete (the context was
// stopped).
template <class T>
std::optional<T> RunToCompletion(boost::asio::io_context& io,
                                 boost::asio::awaitable<T> op) {
  std::optional<T> result;
  io.restart();
  boost::asio::co_spawn(io, std::move(op),
                        [&](std::exception_ptr error, T value) {
                          if (!error) {
                            result.emplace(std::move(value));
                            return;
                          }
                          try {
                            std::rethrow_exception(error);
                          } catch (const std::exception& e) {
                            result.emplace(absl::InternalError(e.what()));
                          }
                        });
  io.run();
  return result;
}

}  // namespace gpusched::http

#endif  // GPUSCHED_API_HTTP_RUN_TO_COMPLETION_H_
