// The start forecast: the engine run forward from a copy of the state,
// running workloads ending after their expected runtime.
#include "queueing/start_forecast.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMinuteMs = 60'000;

Pod WithRuntime(Pod pod, const std::string& expected,
                std::optional<int64_t> deadline_ms = std::nullopt) {
  if (!expected.empty()) {
    pod.meta.annotations["gpusched.io/expected-runtime"] = expected;
  }
  pod.runtime.deadline_ms = deadline_ms;
  ReadPodAdmissionState(pod);
  return pod;
}

class StartForecastTest : public EngineFixture {
 protected:
  StartForecast Forecast(int64_t now, const RuntimeHistory* history = nullptr) {
    return RunForecast(TakeForecastSnapshot(*engine_, model_, now, history));
  }
  // team-a's whole quota runs for 10 minutes from 0; "next" (5 minutes)
  // waits behind it from minute 1.
  void RunningThenNext() {
    Start(TwoTeams(), 1);
    engine_->AddPod(WithRuntime(GangPod("team-a", "running", 0, 8, 1), "10m"),
                    0);
    engine_->Schedule(0);
    engine_->AddPod(WithRuntime(GangPod("team-a", "next", 0, 8, 1), "5m"),
                    kMinuteMs);
    engine_->Schedule(kMinuteMs);
  }
};

TEST_F(StartForecastTest, WaitingWorkloadStartsWhenTheRunningOneEnds) {
  Start(TwoTeams(), 1);
  engine_->AddPod(WithRuntime(GangPod("team-a", "running", 0, 8, 1), "10m"), 0);
  engine_->Schedule(0);
  engine_->AddPod(WithRuntime(GangPod("team-a", "next", 0, 8, 1), "5m"),
                  kMinuteMs);
  engine_->AddPod(WithRuntime(GangPod("team-a", "last", 0, 8, 1), "5m"),
                  2 * kMinuteMs);
  engine_->Schedule(2 * kMinuteMs);

  const StartForecast f = Forecast(2 * kMinuteMs);
  EXPECT_EQ(f.made_at_ms, 2 * kMinuteMs);
  ASSERT_TRUE(f.starts.contains("team-a/next"));
  EXPECT_EQ(f.starts.at("team-a/next").expected_start_ms, 10 * kMinuteMs);
  EXPECT_EQ(f.starts.at("team-a/last").expected_start_ms, 15 * kMinuteMs);
  // No deadlines: nothing bounds the latest start.
  EXPECT_FALSE(f.starts.at("team-a/next").latest_start_ms.has_value());
  EXPECT_FALSE(f.starts.contains("team-a/running"));
}

TEST_F(StartForecastTest, APassBudgetLeavesLaterStartsUnknownAndSaysWhy) {
  RunningThenNext();
  // One pass: the running workload has not ended yet.
  const StartForecast f =
      RunForecast(TakeForecastSnapshot(*engine_, model_, kMinuteMs, nullptr),
                  {.max_steps = 1});
  EXPECT_EQ(f.steps, 1);
  EXPECT_FALSE(f.starts.at("team-a/next").expected_start_ms.has_value());
  EXPECT_THAT(f.starts.at("team-a/next").why_unknown,
              HasSubstr("within the forecast's 1 passes"));
}

TEST_F(StartForecastTest, ASpentTimeBudgetLeavesStartsUnknownAndSaysWhy) {
  RunningThenNext();
  const StartForecast f =
      RunForecast(TakeForecastSnapshot(*engine_, model_, kMinuteMs, nullptr),
                  {.wall_budget = std::chrono::milliseconds(-1)});
  EXPECT_EQ(f.steps, 0);
  EXPECT_THAT(f.starts.at("team-a/next").why_unknown, HasSubstr("time budget"));
}

TEST_F(StartForecastTest, DeadlinesGiveTheLatestStart) {
  Start(TwoTeams(), 1);
  engine_->AddPod(
      WithRuntime(GangPod("team-a", "running", 0, 8, 1), "10m", 30 * kMinuteMs),
      0);
  engine_->Schedule(0);
  engine_->AddPod(WithRuntime(GangPod("team-b", "next", 0, 8, 1), ""),
                  kMinuteMs);
  engine_->Schedule(kMinuteMs);

  const ForecastStart start = Forecast(kMinuteMs).starts.at("team-b/next");
  EXPECT_EQ(start.expected_start_ms, 10 * kMinuteMs);
  EXPECT_EQ(start.latest_start_ms, 30 * kMinuteMs);
}

TEST_F(StartForecastTest, UnknownRuntimeAheadMakesTheStartUnknownAndSaysWhose) {
  Start(TwoTeams(), 1);
  engine_->AddPod(GangPod("team-a", "forever", 0, 8, 1), 0);
  engine_->Schedule(0);
  engine_->AddPod(WithRuntime(GangPod("team-a", "next", 0, 8, 1), "5m"),
                  kMinuteMs);
  engine_->Schedule(kMinuteMs);

  const ForecastStart start = Forecast(kMinuteMs).starts.at("team-a/next");
  EXPECT_FALSE(start.expected_start_ms.has_value());
  EXPECT_THAT(start.why_unknown, HasSubstr("team-a/forever"));
  EXPECT_THAT(start.why_unknown, HasSubstr("expected-runtime"));
}

TEST_F(StartForecastTest, FinishesCloseTogetherShareOnePass) {
  Start(TwoTeams(), 1);
  engine_->AddPod(WithRuntime(GangPod("team-a", "first", 0, 4, 1), "10m"), 0);
  engine_->Schedule(0);
  engine_->AddPod(WithRuntime(GangPod("team-a", "second", 0, 4, 1), "10m"),
                  500);
  engine_->Schedule(500);
  engine_->AddPod(WithRuntime(GangPod("team-a", "next", 0, 8, 1), "5m"),
                  kMinuteMs);
  engine_->Schedule(kMinuteMs);
  const ForecastSnapshot snapshot =
      TakeForecastSnapshot(*engine_, model_, kMinuteMs, nullptr);

  const StartForecast batched = RunForecast(snapshot);
  const StartForecast one_by_one =
      RunForecast(snapshot, {.min_step_ms = 0, .step_fraction = 0});
  // Both finishes (10 min, and 500 ms later) in one pass, at the later:
  // the start is the same, one pass sooner.
  EXPECT_EQ(batched.starts.at("team-a/next").expected_start_ms,
            10 * kMinuteMs + 500);
  EXPECT_EQ(one_by_one.starts.at("team-a/next").expected_start_ms,
            10 * kMinuteMs + 500);
  EXPECT_EQ(batched.steps + 1, one_by_one.steps);
}

TEST_F(StartForecastTest, ForecastLeavesTheLiveEngineAsItWas) {
  RunningThenNext();
  const size_t pods = model_.pod_count();
  Forecast(kMinuteMs);
  EXPECT_EQ(model_.pod_count(), pods);
  EXPECT_TRUE(engine_->workloads().at("team-a/running").admitted());
  EXPECT_FALSE(engine_->workloads().at("team-a/next").admitted());
}

class FixedHistory : public RuntimeHistory {
 public:
  std::optional<int64_t> TypicalRuntimeMs(
      const std::string& cluster_queue,
      const std::string& shape) const override {
    if (cluster_queue == "team-a" && shape == "1x nvidia.com/gpu=8") {
      return 20 * kMinuteMs;
    }
    return std::nullopt;
  }
};

TEST_F(StartForecastTest, HistoryStandsInForAMissingEstimate) {
  Start(TwoTeams(), 1);
  FixedHistory history;
  const Pod pod = GangPod("team-a", "x", 0, 8, 1);
  const RuntimeEstimate estimate = EstimateRuntime({&pod}, "team-a", &history);
  EXPECT_EQ(estimate.source, RuntimeEstimate::Source::kHistory);
  EXPECT_EQ(estimate.expected_ms, 20 * kMinuteMs);
  EXPECT_EQ(EstimateRuntime({&pod}, "team-b", &history).source,
            RuntimeEstimate::Source::kUnknown);
}

TEST_F(StartForecastTest, AGangEndsWithItsLongestMember) {
  const Pod a = WithRuntime(GangPod("team-a", "g", 0, 4, 2), "10m");
  const Pod b = WithRuntime(GangPod("team-a", "g", 1, 4, 2), "25m");
  const RuntimeEstimate estimate = EstimateRuntime({&a, &b}, "team-a", nullptr);
  EXPECT_EQ(estimate.source, RuntimeEstimate::Source::kExpected);
  EXPECT_EQ(estimate.expected_ms, 25 * kMinuteMs);
  const Pod bad = WithRuntime(GangPod("team-a", "h", 0, 4, 1), "soon");
  const RuntimeEstimate unknown = EstimateRuntime({&bad}, "team-a", nullptr);
  EXPECT_EQ(unknown.source, RuntimeEstimate::Source::kUnknown);
  EXPECT_THAT(unknown.why_unknown, HasSubstr("not a positive duration"));
}

}  // namespace
}  // namespace gpusched
