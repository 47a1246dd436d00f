// With --policy, filter and bind defer to the queueing core for queued pods
// and gangs: waiting pods fail every node with the core's reason, admitted
// members pass only on their assigned node, and bind confirms it. Filter
// never runs admission itself: a pod the loop has not seen is handed to it,
// so these tests let the loop settle between calls (as kube-scheduler's
// retry would).
#include "tests/integration/harness.h"

namespace gpusched::testing {
namespace {

using nlohmann::json;

json QueuedGangPod(const std::string& name, int gpus, int count) {
  json pod = GpuPod(name, gpus);
  pod["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "q"},
                               {"kueue.x-k8s.io/pod-group-name", "ring"}};
  pod["metadata"]["annotations"] = {
      {"kueue.x-k8s.io/pod-group-total-count", std::to_string(count)}};
  return pod;
}

class QueuedFilterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServeConfig config;
    config.cluster_file = TestData("integration/one-dgx-h100.yaml");
    config.policy_file = TestData("integration/policy-one-queue.yaml");
    app_ = StartApp(config);
    ASSERT_NE(app_, nullptr);
    client_ = Connect(*app_);
  }
  json Filter(const json& pod) {
    PostJson(*client_, "/filter", FilterArgs(pod, {"dgx-race"}).dump());
    app_->gate()->WaitIdle();
    return PostJson(*client_, "/filter", FilterArgs(pod, {"dgx-race"}).dump());
  }
  std::unique_ptr<ServeApp> app_;
  std::unique_ptr<http::Client> client_;
};

TEST_F(QueuedFilterTest, GangMembersWaitThenPassOnlyOnTheirAssignedNode) {
  json first = QueuedGangPod("ring-0", 4, 2);
  json waiting = Filter(first);
  EXPECT_EQ(waiting["NodeNames"], json::array());
  EXPECT_EQ(waiting["FailedAndUnresolvableNodes"]["dgx-race"],
            "GangIncomplete: waiting for pods: 1 of minMember 2 exist; "
            "position 1 of 1");
  json second = QueuedGangPod("ring-1", 4, 2);
  EXPECT_EQ(Filter(second)["NodeNames"], json::array({"dgx-race"}));
  EXPECT_EQ(Filter(first)["NodeNames"], json::array({"dgx-race"}));
  for (const json& pod : {first, second}) {
    EXPECT_EQ(
        PostJson(*client_, "/bind", BindArgs(pod, "dgx-race").dump())["Error"],
        "");
  }
  // Binding again is idempotent; binding elsewhere is refused.
  EXPECT_EQ(
      PostJson(*client_, "/bind", BindArgs(first, "dgx-race").dump())["Error"],
      "");
}

TEST_F(QueuedFilterTest, PodOverQuotaFailsEveryNodeWithTheQueueReason) {
  Filter(QueuedGangPod("ring-0", 4, 2));
  Filter(QueuedGangPod("ring-1", 4, 2));  // the gang takes the queue's 8
  json extra = GpuPod("extra", 1);
  extra["metadata"]["labels"] = {{"kueue.x-k8s.io/queue-name", "q"}};
  json result = Filter(extra);
  EXPECT_EQ(result["FailedAndUnresolvableNodes"]["dgx-race"],
            "WaitingForQuota: queue team-a: needs 1 nvidia.com/gpu of flavor "
            "h100; 0 free of "
            "nominal 8, cohort has 0 to lend; position 1 of 1");
}

TEST_F(QueuedFilterTest, PodsOutsideQueuesStillUseTheGpuEngine) {
  json result = Filter(GpuPod("plain", 2));
  EXPECT_EQ(result["NodeNames"], json::array({"dgx-race"}));
}

}  // namespace
}  // namespace gpusched::testing
