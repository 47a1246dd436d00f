// Runs the start forecast (queueing/start_forecast.h) off the admission
// loop: at most once per interval, and only when a pass ran since the last
// one, it asks the loop for a copy of the state (taken on the loop thread,
// between passes) and runs the engine forward on its own thread. Readers
// get the last forecast and never wait for one.
#ifndef GPUSCHED_API_CONTROLLER_FORECASTER_H_
#define GPUSCHED_API_CONTROLLER_FORECASTER_H_

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"
#include "api/controller/admission_loop.h"
#include "queueing/start_forecast.h"

namespace gpusched {

struct ForecasterOptions {
  std::chrono::milliseconds interval{1000};
  // How long to wait for the loop to hand over the copy.
  std::chrono::milliseconds snapshot_timeout{5000};
  ForecastOptions forecast;
  // Observed runtimes (the history arm); null: none. Must outlive it.
  const RuntimeHistory* history = nullptr;
};

class Forecaster {
 public:
  Forecaster(AdmissionLoop& loop, ForecasterOptions options = {});
  ~Forecaster();  // Stop()

  void Start();
  void Stop();  // idempotent
  // The last forecast; null before the first.
  std::shared_ptr<const StartForecast> Latest() const;
  // One forecast now, published and returned (tests, benchmarks).
  absl::StatusOr<std::shared_ptr<const StartForecast>> RunOnce();

 private:
  void Run(std::stop_token stop);
  // RunOnce, logged; how long it took.
  std::chrono::milliseconds ForecastAndLog();

  AdmissionLoop& loop_;
  const ForecasterOptions options_;
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::shared_ptr<const StartForecast> latest_;  // guarded by mu_
  uint64_t forecast_after_pass_ = 0;             // forecaster thread only
  std::jthread thread_;
};

}  // namespace gpusched

#endif  // GPUSCHED_API_CONTROLLER_FORECASTER_H_
