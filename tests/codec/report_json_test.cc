// The simulation report as JSON: exact layout, Go durations, quantities,
// fixed decimals, and the diff used by `simulate --compare`.

#include "api/codec/report_json.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

SimulationReport SmallReport() {
  SimulationReport report;
  report.workloads.push_back({.name = "team-a/job-1",
                              .queue = "team-a",
                              .priority = 10,
                              .state = "Finished",
                              .admitted_at_ms = 5'000,
                              .preemptions = 0,
                              .reason = "",
                              .placements = {{"team-a/job-1", "gpu-node-1"}}});
  report.workloads.push_back({.name = "team-b/big",
                              .queue = "team-b",
                              .state = "Pending",
                              .preemptions = 1,
                              .reason = "queue team-b: needs 16 GPUs"});
  report.events.push_back(
      {.at_ms = 5'000, .type = "Admitted", .workload = "team-a/job-1"});
  report.events.push_back({.at_ms = 90'500,
                           .type = "Preempted",
                           .workload = "team-b/big",
                           .by = "team-a/job-1",
                           .reason = "reclaim"});
  report.queues.push_back({.name = "team-a",
                           .usage = {{"h100/cpu", 500},
                                     {"h100/memory", int64_t{64} << 30},
                                     {"h100/nvidia.com/gpu", 8}},
                           .pending = 0,
                           .admitted = 1});
  report.summary = {.admitted = 1,
                    .pending = 1,
                    .preemptions = 1,
                    .gpu_allocation_ratio = 0.5,
                    .simulated_ms = 90'000,
                    .wall_seconds = 0.01234};
  return report;
}

constexpr char kSmallReportJson[] = R"({
  "workloads": [
    {
      "name": "team-a/job-1",
      "queue": "team-a",
      "priority": 10,
      "state": "Finished",
      "admittedAt": "5s",
      "preemptions": 0,
      "reason": "",
      "placements": {
        "team-a/job-1": "gpu-node-1"
      }
    },
    {
      "name": "team-b/big",
      "queue": "team-b",
      "priority": 0,
      "state": "Pending",
      "admittedAt": null,
      "preemptions": 1,
      "reason": "queue team-b: needs 16 GPUs",
      "placements": {}
    }
  ],
  "events": [
    {
      "at": "5s",
      "type": "Admitted",
      "workload": "team-a/job-1",
      "by": "",
      "reason": ""
    },
    {
      "at": "1m30.5s",
      "type": "Preempted",
      "workload": "team-b/big",
      "by": "team-a/job-1",
      "reason": "reclaim"
    }
  ],
  "queues": [
    {
      "name": "team-a",
      "usage": {
        "h100/cpu": "500m",
        "h100/memory": "64Gi",
        "h100/nvidia.com/gpu": "8"
      },
      "pending": 0,
      "admitted": 1
    }
  ],
  "summary": {
    "admitted": 1,
    "pending": 1,
    "preemptions": 1,
    "gpuAllocationRatio": 0.5000,
    "simulatedSeconds": 90,
    "wallSeconds": 0.012
  }
}
)";

TEST(ReportJsonTest, SmallReportGolden) {
  EXPECT_EQ(EncodeReport(SmallReport()), kSmallReportJson);
}

TEST(ReportJsonTest, WithoutWallSecondsForComparison) {
  const std::string json = EncodeReport(SmallReport(), false);
  EXPECT_THAT(json, Not(HasSubstr("wallSeconds")));
  EXPECT_THAT(json, HasSubstr("\"simulatedSeconds\": 90\n  }\n}\n"));
}

TEST(ReportJsonTest, EmptyReport) {
  EXPECT_EQ(EncodeReport(SimulationReport{}, false), R"({
  "workloads": [],
  "events": [],
  "queues": [],
  "summary": {
    "admitted": 0,
    "pending": 0,
    "preemptions": 0,
    "gpuAllocationRatio": 0.0000,
    "simulatedSeconds": 0
  }
}
)");
}

TEST(ReportJsonTest, SimulatedSecondsAreExact) {
  SimulationReport report;
  report.summary.simulated_ms = 90'250;
  EXPECT_THAT(EncodeReport(report), HasSubstr("\"simulatedSeconds\": 90.25,"));
}

TEST(ReportJsonTest, StringsAreEscaped) {
  SimulationReport report;
  report.events.push_back({.type = "Evicted", .reason = "node \"n1\"\tdown"});
  EXPECT_THAT(EncodeReport(report),
              HasSubstr(R"("reason": "node \"n1\"\tdown")"));
}

struct QuantityCase {
  std::string key;
  int64_t amount;
  std::string text;
};

class ReportQuantityTest : public ::testing::TestWithParam<QuantityCase> {};

TEST_P(ReportQuantityTest, UsageIsAnExactQuantity) {
  SimulationReport report;
  report.queues.push_back(
      {.name = "q", .usage = {{GetParam().key, GetParam().amount}}});
  EXPECT_THAT(EncodeReport(report), HasSubstr("\"" + GetParam().key + "\": \"" +
                                              GetParam().text + "\""));
}

INSTANTIATE_TEST_SUITE_P(
    Quantities, ReportQuantityTest,
    ::testing::Values(QuantityCase{"f/cpu", 500, "500m"},
                      QuantityCase{"f/cpu", 2000, "2"},
                      QuantityCase{"f/memory", int64_t{3} << 29, "1536Mi"},
                      // 1.5Gi + 1 byte has no exact binary suffix.
                      QuantityCase{"f/memory", (int64_t{3} << 29) + 1,
                                   "1610612737"},
                      QuantityCase{"f/nvidia.com/mig-1g.5gb", 7, "7"},
                      QuantityCase{"nvidia.com/gpu", 4, "4"}));

struct DurationCase {
  int64_t ms;
  std::string text;
};

class GoDurationTest : public ::testing::TestWithParam<DurationCase> {};

TEST_P(GoDurationTest, FormatsLikeGo) {
  EXPECT_EQ(FormatGoDuration(GetParam().ms), GetParam().text);
}

INSTANTIATE_TEST_SUITE_P(
    Durations, GoDurationTest,
    ::testing::Values(
        DurationCase{0, "0s"}, DurationCase{1, "1ms"},
        DurationCase{250, "250ms"}, DurationCase{999, "999ms"},
        DurationCase{1'000, "1s"}, DurationCase{1'500, "1.5s"},
        DurationCase{5'000, "5s"}, DurationCase{59'999, "59.999s"},
        DurationCase{60'000, "1m0s"}, DurationCase{90'000, "1m30s"},
        DurationCase{300'000, "5m0s"}, DurationCase{3'600'000, "1h0m0s"},
        DurationCase{5'400'000, "1h30m0s"},
        DurationCase{7'384'005, "2h3m4.005s"},
        DurationCase{90'000'000, "25h0m0s"}, DurationCase{-1'500, "-1.5s"},
        DurationCase{-250, "-250ms"}));

TEST(ReportDiffTest, EqualTextsHaveNoDiff) {
  EXPECT_EQ(DiffText("a\nb\n", "a\nb\n", "want", "got"), "");
}

TEST(ReportDiffTest, OneHunkWithContext) {
  const std::string expected = "1\n2\n3\n4\n5\n6\n7\n8\n";
  const std::string actual = "1\n2\n3\n4\nfive\n6\n7\n8\n";
  // Lines 2-8 of each: three before, the change, three after (7 and 8 and
  // the empty string after the last newline).
  EXPECT_EQ(DiffText(expected, actual, "want.json", "got"),
            "--- want.json\n+++ got\n@@ -2,7 +2,7 @@\n"
            " 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n");
}

TEST(ReportDiffTest, InsertedLinesAndLongHunksAreCut) {
  EXPECT_EQ(DiffText("a\nz\n", "a\nb\nc\nd\nz\n", "want", "got", 2),
            "--- want\n+++ got\n@@ -1,3 +1,6 @@\n"
            " a\n+b\n+c\n+... 1 more lines\n z\n \n");
}

}  // namespace
}  // namespace gpusched
