// Observed runtimes, the start forecast's history arm.
#include "queueing/runtime_log.h"

#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

constexpr int64_t kMinute = 60'000;

TEST(RuntimeLogTest, TypicalIsTheMedianOfTheLastRuns) {
  RuntimeLog log(/*max_keys=*/10, /*per_key=*/3);
  EXPECT_EQ(log.TypicalRuntimeMs("cq", "1x nvidia.com/gpu=8"), std::nullopt);
  for (int64_t run : {100, 900, 500, 700}) {
    log.Record("cq", "1x nvidia.com/gpu=8", run, run);
  }
  // The first run (100) fell out: median of 900, 500, 700.
  EXPECT_EQ(log.TypicalRuntimeMs("cq", "1x nvidia.com/gpu=8"), 700);
  EXPECT_EQ(log.TypicalRuntimeMs("other", "1x nvidia.com/gpu=8"), std::nullopt);
}

TEST(RuntimeLogTest, DropsThePairRecordedLeastRecently) {
  RuntimeLog log(/*max_keys=*/2, /*per_key=*/5);
  log.Record("a", "s", 1, 10);
  log.Record("b", "s", 2, 30);
  log.Record("c", "s", 3, 20);
  EXPECT_EQ(log.TypicalRuntimeMs("a", "s"), std::nullopt);
  EXPECT_EQ(log.TypicalRuntimeMs("b", "s"), 2);
  EXPECT_EQ(log.TypicalRuntimeMs("c", "s"), 3);
}

TEST(RuntimeLogTest, LoadReplacesWithinTheBoundsAndMovesTheVersion) {
  RuntimeLog log(/*max_keys=*/1, /*per_key=*/2);
  log.Record("gone", "s", 5, 5);
  const uint64_t before = log.version();
  log.Load(
      {{.cluster_queue = "old", .shape = "s", .runs_ms = {1}, .last_ms = 1},
       {.cluster_queue = "new",
        .shape = "s",
        .runs_ms = {1, 2, 3},
        .last_ms = 9}});
  EXPECT_NE(log.version(), before);
  ASSERT_EQ(log.Entries().size(), 1u);
  EXPECT_EQ(log.Entries()[0].cluster_queue, "new");
  EXPECT_EQ(log.Entries()[0].runs_ms, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(log.TypicalRuntimeMs("gone", "s"), std::nullopt);
}

class RuntimeLogEngineTest : public EngineFixture {};

// What the admission loop does after each pass: the run from admission to
// the last member's success is recorded under the queue and shape the
// forecast asks for; a preempted or deleted one is not.
TEST_F(RuntimeLogEngineTest, RecordsRunsThatEndedByThemselves) {
  Start(TwoTeams(), 1);
  RuntimeLog log;
  engine_->AddPod(GangPod("team-a", "done", 0, 4, 1), 0);
  engine_->AddPod(GangPod("team-a", "deleted", 0, 4, 1), 0);
  engine_->Schedule(0);
  log.Observe(*engine_, engine_->TakeEvents());
  const std::vector<const Pod*> members = {
      &engine_->workloads().at("team-a/done").pods.begin()->second};
  const std::string shape = WorkloadShape(members);

  engine_->Delete(engine_->workloads().at("team-a/deleted").pods.begin()->first,
                  5 * kMinute);
  engine_->Finish("team-a/done", 12 * kMinute);
  engine_->Schedule(12 * kMinute);
  log.Observe(*engine_, engine_->TakeEvents());
  EXPECT_EQ(log.TypicalRuntimeMs("team-a", shape), 12 * kMinute);
  EXPECT_EQ(log.Entries().size(), 1u);
}

}  // namespace
}  // namespace gpusched
