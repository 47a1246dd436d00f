// The forecaster: the copy taken on the loop thread, the forecast run on
// its own, the last one published.
#include "api/controller/forecaster.h"

#include <atomic>
#include <chrono>

#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

constexpr int64_t kMinute = 60'000;

Pod Expected(Pod pod, const std::string& runtime) {
  pod.meta.annotations["gpusched.io/expected-runtime"] = runtime;
  pod.scheduling_gates.push_back(kAdmissionGate);
  ReadPodAdmissionState(pod);
  return pod;
}

class ForecasterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = AdmissionLoop::Create(
        TwoTeams(), {.clock = [this] { return now_.load(); }});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(ServiceOptions{
        .gate = loop_.get(), .clock = [this] { return now_.load(); }});
    service_->UpsertNodes({Dgx("dgx-0")});
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override { loop_->Stop(); }

  std::atomic<int64_t> now_{0};
  RecordingSink sink_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
};

TEST_F(ForecasterTest, ForecastSaysWhenTheWaitingGangStarts) {
  loop_->PodUpserted(Expected(GangPod("team-a", "running", 0, 8, 1), "10m"));
  loop_->WaitIdle();
  now_ = 2 * kMinute;
  loop_->PodUpserted(Expected(GangPod("team-b", "next", 0, 4, 2), "5m"));
  loop_->PodUpserted(Expected(GangPod("team-b", "next", 1, 4, 2), "5m"));
  loop_->WaitIdle();

  Forecaster forecaster(*loop_);
  EXPECT_EQ(forecaster.Latest(), nullptr);
  absl::StatusOr<std::shared_ptr<const StartForecast>> made =
      forecaster.RunOnce();
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ((*made)->made_at_ms, 2 * kMinute);
  ASSERT_TRUE((*made)->starts.contains("team-b/next"));
  EXPECT_EQ((*made)->starts.at("team-b/next").expected_start_ms, 10 * kMinute);
  EXPECT_EQ(forecaster.Latest(), *made);
}

TEST_F(ForecasterTest, ItsThreadForecastsOnceTheQueuesMove) {
  Forecaster forecaster(*loop_, {.interval = std::chrono::milliseconds(5)});
  forecaster.Start();
  loop_->PodUpserted(Expected(GangPod("team-a", "running", 0, 8, 1), "10m"));
  loop_->WaitIdle();
  now_ = kMinute;
  loop_->PodUpserted(Expected(GangPod("team-a", "next", 0, 8, 1), "1m"));
  loop_->WaitIdle();
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(10);
  std::shared_ptr<const StartForecast> latest;
  while (std::chrono::steady_clock::now() < deadline) {
    latest = forecaster.Latest();
    if (latest != nullptr && latest->starts.contains("team-a/next")) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_NE(latest, nullptr);
  ASSERT_TRUE(latest->starts.contains("team-a/next"))
      << "forecasts: " << latest->starts.size();
  EXPECT_EQ(latest->starts.at("team-a/next").expected_start_ms, 10 * kMinute);
  forecaster.Stop();
}

}  // namespace
}  // namespace gpusched
