// The queue metrics' exposition lines, from a QueueView built by hand.
#include "api/server/queue_metrics.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::Contains;
using ::testing::Not;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

QuotaUsage Gpus(int64_t nominal, int64_t used, int64_t borrowed, int64_t lent) {
  return QuotaUsage{.fr = {"h100", "nvidia.com/gpu"},
                    .nominal = nominal,
                    .used = used,
                    .borrowed = borrowed,
                    .lent = lent};
}

PendingWorkload Pending(std::string key, PendingStatus status) {
  return PendingWorkload{.key = std::move(key), .status = status};
}

// team-a borrows 4 GPUs that team-b lends; team-a has a gang waiting and
// one preempting, team-b nothing pending.
QueueView TwoQueues() {
  QueueView view;
  ClusterQueueView a{.name = "team-a", .cohort = "research"};
  a.quota = {Gpus(8, 12, 4, 0)};
  a.quota[0].borrowing_limit = 4;
  a.pending = {Pending("team-a/ring", PendingStatus::kInadmissible),
               Pending("team-a/big", PendingStatus::kActive),
               Pending("team-a/more", PendingStatus::kInadmissible)};
  a.admitted = {AdmittedWorkload{.key = "team-a/x"},
                AdmittedWorkload{.key = "team-a/y"}};
  ClusterQueueView b{.name = "team-b", .cohort = "research"};
  b.quota = {Gpus(8, 4, 0, 4)};
  b.quota[0].lending_limit = 6;
  b.admitted = {AdmittedWorkload{.key = "team-b/z"}};
  view.cluster_queues = {a, b};
  view.local_queues = {
      LocalQueueView{.namespace_name = "team-a",
                     .name = "q",
                     .cluster_queue = "team-a",
                     .pending = 3,
                     .admitted = 2},
      LocalQueueView{
          .namespace_name = "team-b", .name = "q", .cluster_queue = "team-b"}};
  view.cohorts = {
      CohortView{.name = "research", .quota = {Gpus(16, 16, 0, 0)}}};
  return view;
}

TEST(QueueMetricsTest, QueueGaugesUnderKueuesNames) {
  std::string out;
  AppendQueueMetrics(TwoQueues(), QueueEventCounts{}, out);
  const std::vector<std::string> lines = Lines(out);
  for (
      const char* line : {
          R"(gpusched_pending_workloads{cluster_queue="team-a",status="active"} 1)",
          R"(gpusched_pending_workloads{cluster_queue="team-a",status="inadmissible"} 2)",
          R"(gpusched_pending_workloads{cluster_queue="team-b",status="active"} 0)",
          R"(gpusched_local_queue_pending_workloads{namespace="team-a",local_queue="q"} 3)",
          R"(gpusched_local_queue_pending_workloads{namespace="team-b",local_queue="q"} 0)",
          R"(gpusched_admitted_active_workloads{cluster_queue="team-a"} 2)",
          R"(gpusched_admitted_active_workloads{cluster_queue="team-b"} 1)",
          R"(gpusched_cluster_queue_nominal_quota{cluster_queue="team-a",flavor="h100",resource="nvidia.com/gpu"} 8)",
          R"(gpusched_cluster_queue_resource_usage{cluster_queue="team-a",flavor="h100",resource="nvidia.com/gpu"} 12)",
          R"(gpusched_cluster_queue_resource_reservation{cluster_queue="team-b",flavor="h100",resource="nvidia.com/gpu"} 4)",
          R"(gpusched_cluster_queue_borrowed{cluster_queue="team-a",flavor="h100",resource="nvidia.com/gpu"} 4)",
          R"(gpusched_cluster_queue_lent{cluster_queue="team-b",flavor="h100",resource="nvidia.com/gpu"} 4)",
          R"(gpusched_cluster_queue_borrowing_limit{cluster_queue="team-a",flavor="h100",resource="nvidia.com/gpu"} 4)",
          R"(gpusched_cluster_queue_lending_limit{cluster_queue="team-b",flavor="h100",resource="nvidia.com/gpu"} 6)",
          R"(gpusched_cohort_nominal_quota{cohort="research",flavor="h100",resource="nvidia.com/gpu"} 16)",
          R"(gpusched_cohort_resource_usage{cohort="research",flavor="h100",resource="nvidia.com/gpu"} 16)",
          "# TYPE gpusched_pending_workloads gauge",
          "# TYPE gpusched_admitted_workloads_total counter",
          "# TYPE gpusched_admission_wait_time_seconds histogram",
      }) {
    EXPECT_THAT(lines, Contains(line));
  }
  // No limit set: no line (Kueue leaves it out too).
  EXPECT_THAT(
      out,
      Not(::testing::HasSubstr(R"(borrowing_limit{cluster_queue="team-b")")));
  EXPECT_THAT(
      out,
      Not(::testing::HasSubstr(R"(lending_limit{cluster_queue="team-a")")));
  // Never a workload's name.
  EXPECT_THAT(out, Not(::testing::HasSubstr("team-a/")));
}

TEST(QueueMetricsTest, CpuQuotaInCoresAsKueueExportsIt) {
  QueueView view;
  view.cluster_queues = {ClusterQueueView{
      .name = "cpu",
      .quota = {
          QuotaUsage{.fr = {"h100", "cpu"}, .nominal = 64000, .used = 1500},
          QuotaUsage{.fr = {"h100", "memory"}, .nominal = 1 << 30}}}};
  std::string out;
  AppendQueueMetrics(view, QueueEventCounts{}, out);
  const std::vector<std::string> lines = Lines(out);
  EXPECT_THAT(
      lines,
      Contains(
          R"(gpusched_cluster_queue_nominal_quota{cluster_queue="cpu",flavor="h100",resource="cpu"} 64)"));
  EXPECT_THAT(
      lines,
      Contains(
          R"(gpusched_cluster_queue_resource_usage{cluster_queue="cpu",flavor="h100",resource="cpu"} 1.500)"));
  EXPECT_THAT(
      lines,
      Contains(
          R"(gpusched_cluster_queue_nominal_quota{cluster_queue="cpu",flavor="h100",resource="memory"} 1073741824)"));
}

TEST(QueueMetricsTest, CountersAndTheWaitHistogram) {
  QueueEventCounts counts;
  counts.admitted["team-a"] = 3;
  counts.evicted[{"team-a", "Preempted"}] = 2;
  counts.preempted[{"team-b", "InCohortReclamation"}] = 2;
  counts.wait["team-a"].Observe(0.5);
  counts.wait["team-a"].Observe(20);
  counts.wait["team-a"].Observe(20000);
  std::string out;
  AppendQueueMetrics(QueueView{}, counts, out);
  const std::vector<std::string> lines = Lines(out);
  for (
      const char* line : {
          R"(gpusched_admitted_workloads_total{cluster_queue="team-a"} 3)",
          R"(gpusched_evicted_workloads_total{cluster_queue="team-a",reason="Preempted"} 2)",
          R"(gpusched_preempted_workloads_total{preempting_cluster_queue="team-b",reason="InCohortReclamation"} 2)",
          R"(gpusched_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="1"} 1)",
          R"(gpusched_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="15"} 1)",
          R"(gpusched_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="30"} 2)",
          R"(gpusched_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="14400"} 2)",
          R"(gpusched_admission_wait_time_seconds_bucket{cluster_queue="team-a",le="+Inf"} 3)",
          R"(gpusched_admission_wait_time_seconds_sum{cluster_queue="team-a"} 20020.500)",
          R"(gpusched_admission_wait_time_seconds_count{cluster_queue="team-a"} 3)",
      }) {
    EXPECT_THAT(lines, Contains(line));
  }
}

TEST(QueueMetricsTest, LabelValuesAreEscaped) {
  EXPECT_EQ(EscapeLabelValue(R"(a"b\c)"
                             "\n"),
            R"(a\"b\\c\n)");
  QueueView view;
  view.cluster_queues = {ClusterQueueView{.name = "odd\"q\\"}};
  std::string out;
  AppendQueueMetrics(view, QueueEventCounts{}, out);
  EXPECT_THAT(
      Lines(out),
      Contains(
          R"(gpusched_admitted_active_workloads{cluster_queue="odd\"q\\"} 0)"));
}

TEST(QueueMetricsTest, GpuRatiosByModel) {
  std::string out;
  AppendGpuRatios({GpuModelUsage{.model = "NVIDIA-H100-80GB-HBM3",
                                 .total_milli = 16000,
                                 .free_milli = 4000,
                                 .fragment_milli = 1000}},
                  out);
  EXPECT_THAT(
      Lines(out),
      Contains(
          R"(gpusched_gpu_allocation_ratio{gpu_model="NVIDIA-H100-80GB-HBM3"} 0.750000)"));
  EXPECT_THAT(
      Lines(out),
      Contains(
          R"(gpusched_gpu_fragmentation_ratio{gpu_model="NVIDIA-H100-80GB-HBM3"} 0.250000)"));
}

}  // namespace
}  // namespace gpusched
