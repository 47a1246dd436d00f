// The DRA gauges' exposition lines.
#include "api/server/dra_metrics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DraMetricsTest, EveryStateOfEveryDriverIsALine) {
  DraCounts counts{
      .nodes_device_plugin = 3, .nodes_dra = 2, .pool_problems = 1};
  // By DraDeviceCondition: allocated, tainted, counters_spent, free.
  counts.devices["gpu.nvidia.com"] = {6, 1, 0, 9};
  std::string text;
  AppendDraMetrics(counts, text);
  EXPECT_THAT(text, HasSubstr("# TYPE gpusched_dra_devices gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpusched_dra_devices{driver=\"gpu.nvidia.com\","
                              "state=\"free\"} 9\n"
                              "gpusched_dra_devices{driver=\"gpu.nvidia.com\","
                              "state=\"allocated\"} 6\n"
                              "gpusched_dra_devices{driver=\"gpu.nvidia.com\","
                              "state=\"tainted\"} 1\n"
                              "gpusched_dra_devices{driver=\"gpu.nvidia.com\","
                              "state=\"counters_spent\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpusched_nodes_by_gpu_source{source=\"device_"
                              "plugin\"} 3\n"
                              "gpusched_nodes_by_gpu_source{source=\"dra\"} "
                              "2\n"));
  EXPECT_THAT(text, HasSubstr("gpusched_dra_pool_problems 1\n"));
}

TEST(DraMetricsTest, WithoutDraOnlyTheHeaderOfTheDeviceGauge) {
  std::string text;
  AppendDraMetrics(DraCounts{}, text);
  EXPECT_THAT(text, HasSubstr("# HELP gpusched_dra_devices"));
  EXPECT_THAT(text, Not(HasSubstr("gpusched_dra_devices{")));
  EXPECT_THAT(text,
              HasSubstr("gpusched_nodes_by_gpu_source{source=\"dra\"} 0"));
}

}  // namespace
}  // namespace gpusched
