#include "api/controller/forecaster.h"

#include <algorithm>
#include <utility>

#include "spdlog/spdlog.h"

namespace gpusched {

Forecaster::Forecaster(AdmissionLoop& loop, ForecasterOptions options)
    : loop_(loop), options_(std::move(options)) {}

Forecaster::~Forecaster() { Stop(); }

void Forecaster::Start() {
  thread_ = std::jthread([this](std::stop_token stop) { Run(stop); });
}

void Forecaster::Stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<const StartForecast> Forecaster::Latest() const {
  std::lock_guard lock(mu_);
  return latest_;
}

absl::StatusOr<std::shared_ptr<const StartForecast>> Forecaster::RunOnce() {
  const RuntimeHistory* history = options_.history;
  absl::StatusOr<ForecastSnapshot> snapshot = loop_.Ask<ForecastSnapshot>(
      [history](const QueueingEngine& engine, const ClusterModel& model,
                int64_t now) {
        return TakeForecastSnapshot(engine, model, now, history);
      },
      options_.snapshot_timeout);
  if (!snapshot.ok()) return snapshot.status();
  auto forecast = std::make_shared<const StartForecast>(
      RunForecast(*snapshot, options_.forecast));
  std::lock_guard lock(mu_);
  latest_ = forecast;
  return forecast;
}

// Once per interval, when the queues moved since the last forecast: a
// quiet cluster costs nothing, and a busy one at most one forecast a
// second however many passes it runs. A forecast that took longer than
// the interval is followed by a rest as long as it took, so forecasts
// keep at most half a core busy on a large cluster.
void Forecaster::Run(std::stop_token stop) {
  while (!stop.stop_requested()) {
    const uint64_t passes = loop_.passes();
    std::chrono::milliseconds took{0};
    // A standby's engine is not the one deciding: nothing to forecast.
    if (passes != forecast_after_pass_ && loop_.deciding()) {
      forecast_after_pass_ = passes;
      took = ForecastAndLog();
    }
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, stop, std::max(options_.interval, took),
                 [] { return false; });
  }
}

std::chrono::milliseconds Forecaster::ForecastAndLog() {
  const auto began = std::chrono::steady_clock::now();
  absl::StatusOr<std::shared_ptr<const StartForecast>> made = RunOnce();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - began);
  if (!made.ok()) {
    spdlog::warn("start forecast: {}", made.status().ToString());
  } else {
    spdlog::debug("start forecast: {} pending, {} passes in {} ms",
                  (*made)->starts.size(), (*made)->steps, took.count());
  }
  return took;
}

}  // namespace gpusched
