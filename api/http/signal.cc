// WaitForTerminationSignal, declared in server.h.
#include <pthread.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <chrono>
#include <csignal>

#include "api/http/server.h"

namespace gpusched::http {
namespace {

// How often the wait checks `stop`; only bounds how late a stop is noticed.
constexpr std::chrono::milliseconds kStopPollInterval{50};

sigset_t TerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

int WaitForTerminationSignal(std::shared_future<void> stop) {
  boost::asio::io_context io;
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  int received = 0;
  bool done = false;
  signals.async_wait([&](const boost::system::error_code& ec, int number) {
    if (!ec) received = number;
    done = true;
  });
  // Unblock only once the handler is installed: a signal pending on this
  // thread is then delivered to it rather than to the default action.
  sigset_t set = TerminationSignals();
  sigset_t previous;
  pthread_sigmask(SIG_UNBLOCK, &set, &previous);
  while (!done) {
    if (!stop.valid()) {
      io.run();
      continue;
    }
    io.run_for(kStopPollInterval);
    if (stop.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      break;
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return received;
}

int WaitForTerminationSignal() { return WaitForTerminationSignal({}); }

}  // namespace gpusched::http
