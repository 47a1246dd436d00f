#include <gtest/gtest.h>
#include <pthread.h>

#include <chrono>
#include <csignal>
#include <future>
#include <thread>

#include "api/http/server.h"

namespace gpusched::http {
namespace {

// Blocks `number` in this thread, then raises it so it is pending here: the
// wait must then receive it without a race against handler installation.
void RaisePending(int number) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, number);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  raise(number);
}

void Unblock(int number) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, number);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

TEST(WaitForTerminationSignalTest, ReturnsSigterm) {
  RaisePending(SIGTERM);
  EXPECT_EQ(WaitForTerminationSignal(), SIGTERM);
  Unblock(SIGTERM);
}

TEST(WaitForTerminationSignalTest, ReturnsSigint) {
  RaisePending(SIGINT);
  EXPECT_EQ(WaitForTerminationSignal(), SIGINT);
  Unblock(SIGINT);
}

TEST(WaitForTerminationSignalTest, ReturnsZeroWhenStopBecomesReady) {
  std::promise<void> stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.set_value();
  });
  EXPECT_EQ(WaitForTerminationSignal(stop.get_future().share()), 0);
  stopper.join();
}

}  // namespace
}  // namespace gpusched::http
