// GET /metrics with the admission loop behind it: the queues' metrics
// while this replica decides, none while it stands by; the GPU ratios on
// both, read from the model.
#include <atomic>
#include <memory>

#include "api/controller/admission_loop.h"
#include "api/server/extender_api.h"
#include "api/server/loop_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class QueueMetricsEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loop = AdmissionLoop::Create(TwoTeams(),
                                      {.clock = [] { return int64_t{1000}; }});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(ServiceOptions{
        .gate = loop_.get(), .clock = [] { return int64_t{1000}; }});
    service_->UpsertNodes({Dgx("dgx-0")});
    api_ = std::make_unique<ExtenderApi>(
        *service_, metrics_,
        ExtenderApiOptions{.append_queue_metrics = LoopQueueMetrics(*loop_)});
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override { loop_->Stop(); }
  std::string Scrape() { return api_->MetricsText(http::Request{}).body; }

  RecordingSink sink_;
  Metrics metrics_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
  std::unique_ptr<ExtenderApi> api_;
};

TEST_F(QueueMetricsEndpointTest, TheDecidingReplicaExportsItsQueues) {
  loop_->PodUpserted(QueuedPod("team-a", "four", 4));
  loop_->PodUpserted(QueuedPod("team-b", "eight", 8));  // no room left
  loop_->WaitIdle();
  const std::string text = Scrape();
  EXPECT_THAT(text, HasSubstr("\ngpusched_admitted_active_workloads{"
                              "cluster_queue=\"team-a\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("\ngpusched_cluster_queue_resource_usage{"
                              "cluster_queue=\"team-a\",flavor=\"h100\","
                              "resource=\"nvidia.com/gpu\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("\ngpusched_pending_workloads{cluster_queue="
                              "\"team-b\",status=\"inadmissible\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("\ngpusched_admitted_workloads_total{"
                              "cluster_queue=\"team-a\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("\ngpusched_gpu_allocation_ratio{gpu_model="
                              "\"NVIDIA-H100-80GB-HBM3\"} 0.500000\n"));
  EXPECT_THAT(text, HasSubstr("\ngpusched_gpu_fragmentation_ratio{gpu_model="
                              "\"NVIDIA-H100-80GB-HBM3\"} "));
}

TEST_F(QueueMetricsEndpointTest, AStandbyExportsNoQueueMetrics) {
  loop_->PodUpserted(QueuedPod("team-a", "four", 4));
  loop_->WaitIdle();
  loop_->SetDeciding(false);
  loop_->WaitIdle();
  const std::string text = Scrape();
  EXPECT_THAT(text, Not(HasSubstr("gpusched_pending_workloads")));
  EXPECT_THAT(text, Not(HasSubstr("gpusched_cluster_queue_")));
  EXPECT_THAT(text, Not(HasSubstr("gpusched_admitted_workloads_total")));
  EXPECT_THAT(text, HasSubstr("\ngpusched_gpu_allocation_ratio{"));
}

}  // namespace
}  // namespace gpusched
