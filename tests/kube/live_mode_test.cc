#include "api/kube/live_mode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::HasSubstr;

TEST(LiveModeTest, TwoStepsFromAKubeconfig) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddPod(GpuPod("a/train", 4));
  auto live = CreateLiveBinder({.kubeconfig = KubeconfigFor(server)});
  ASSERT_TRUE(live.ok()) << live.status();
  ExtenderService service(ServiceOptions{.bind_sink = (*live)->bind_sink()});
  EXPECT_FALSE((*live)->synced());
  (*live)->StartSync(service);
  ASSERT_TRUE(WaitUntil([&] { return (*live)->synced(); }));
  EXPECT_TRUE(HasNode(service, "n1"));
  EXPECT_THAT((*live)->source(), HasSubstr("context fake"));
  const std::vector<std::string> nodes = {"n1"};
  service.Filter(DomainPod(server.Pod("a/train")), nodes);
  BindOutcome outcome = service.Bind({.pod_name = "train",
                                      .pod_namespace = "a",
                                      .pod_uid = "uid-a-train",
                                      .node = "n1"});
  EXPECT_EQ(outcome.error, "");
  EXPECT_EQ(server.Pod("a/train")["spec"]["nodeName"], "n1");
  (*live)->Stop();
}

TEST(LiveModeTest, OneStepStartsTheSync) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  ExtenderService service;
  auto live = StartLiveCluster(service, {.kubeconfig = KubeconfigFor(server)});
  ASSERT_TRUE(live.ok()) << live.status();
  EXPECT_TRUE(WaitUntil([&] { return HasNode(service, "n1"); }));
}

TEST(LiveModeTest, NeedsAKubeconfigOrAPod) {
  auto live = CreateLiveBinder({});
  ASSERT_FALSE(live.ok());
  EXPECT_THAT(std::string(live.status().message()), HasSubstr("--kubeconfig"));
}

TEST(LiveModeTest, BadKubeconfigFailsAtCreate) {
  auto live = CreateLiveBinder({.kubeconfig = "/nonexistent/kubeconfig"});
  ASSERT_FALSE(live.ok());
  EXPECT_THAT(std::string(live.status().message()),
              HasSubstr("/nonexistent/kubeconfig"));
}

}  // namespace
}  // namespace gpusched::kube::testing
