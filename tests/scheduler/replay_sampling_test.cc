#include <vector>

#include "gtest/gtest.h"
#include "scheduler/replay/sampling.h"
#include "tests/scheduler/replay_builders.h"

namespace gpusched::replay {
namespace {

using ::gpusched::testing::TracePodOf;

std::vector<TracePod> Pods() {
  return {TracePodOf("whole").Gpus(1), TracePodOf("share").Share(500),
          TracePodOf("cpu"), TracePodOf("eight").Gpus(8)};
}

int64_t ArrivedMilli(const std::vector<TracePod>& pods,
                     const std::vector<int>& arrivals) {
  int64_t milli = 0;
  for (int index : arrivals) milli += pods[index].GpuMilliRequest();
  return milli;
}

TEST(SampleArrivals, StopsAtTheFirstPodThatReachesTheLoad) {
  const std::vector<TracePod> pods = Pods();
  const std::vector<int> arrivals = *SampleArrivals(pods, 16000, 1.3, 7);
  ASSERT_FALSE(arrivals.empty());
  // 1.3 x 16000 = 20800 milli reached, and not before the last pod.
  EXPECT_GE(ArrivedMilli(pods, arrivals), 20800);
  std::vector<int> before_last(arrivals.begin(), arrivals.end() - 1);
  EXPECT_LT(ArrivedMilli(pods, before_last), 20800);
}

TEST(SampleArrivals, TheSameSeedGivesTheSameSequence) {
  const std::vector<TracePod> pods = Pods();
  EXPECT_EQ(*SampleArrivals(pods, 16000, 1.3, 42),
            *SampleArrivals(pods, 16000, 1.3, 42));
  EXPECT_NE(*SampleArrivals(pods, 16000, 1.3, 42),
            *SampleArrivals(pods, 16000, 1.3, 43));
}

TEST(SampleArrivals, DrawsWithReplacementFromEveryPod) {
  const std::vector<TracePod> pods = Pods();
  const std::vector<int> arrivals = *SampleArrivals(pods, 100000, 1.0, 1);
  std::vector<int> seen(pods.size(), 0);
  for (int index : arrivals) ++seen[index];
  for (int count : seen) EXPECT_GT(count, 1);
}

TEST(SampleArrivals, FailsWhenNoPodAsksForAGpu) {
  const std::vector<TracePod> pods = {TracePodOf("cpu")};
  EXPECT_FALSE(SampleArrivals(pods, 1000, 1.0, 1).ok());
}

TEST(SampleArrivals, FailsWithoutLoadOrCapacity) {
  const std::vector<TracePod> pods = Pods();
  EXPECT_FALSE(SampleArrivals(pods, 1000, 0, 1).ok());
  EXPECT_FALSE(SampleArrivals(pods, 0, 1.0, 1).ok());
}

TEST(SeededRandom, StaysBelowTheBound) {
  SeededRandom random(3);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(random.Below(7), 7u);
}

}  // namespace
}  // namespace gpusched::replay
