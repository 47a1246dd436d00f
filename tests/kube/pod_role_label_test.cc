#include "api/kube/pod_role_label.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

class PodRoleLabelTest : public ::testing::Test {
 protected:
  PodRoleLabelTest() : client_(*KubeClient::Create(server_.Config())) {
    server_.AddPod(GpuPod("gpusched-system/gpusched-0", 0));
  }

  std::string RoleOnPod() const {
    const Json pod = server_.Pod("gpusched-system/gpusched-0");
    const Json* labels =
        pod.contains("metadata") && pod["metadata"].contains("labels")
            ? &pod["metadata"]["labels"]
            : nullptr;
    if (labels == nullptr || !labels->contains(kRoleLabel)) return "";
    return (*labels)[kRoleLabel].get<std::string>();
  }

  std::unique_ptr<PodRoleLabel> Labeller() {
    return std::make_unique<PodRoleLabel>(
        *client_, PodRoleLabelOptions{.namespace_name = "gpusched-system",
                                      .name = "gpusched-0",
                                      .initial_backoff = kQuick,
                                      .max_backoff = kQuick});
  }

  static constexpr std::chrono::milliseconds kQuick{10};
  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(PodRoleLabelTest, FollowsTheRoleBothWays) {
  auto label = Labeller();
  label->Start();
  // written() follows the server's answer, so it may lag what a GET sees.
  label->Set(true);
  ASSERT_TRUE(WaitUntil(
      [&] { return RoleOnPod() == "deciding" && label->written() == true; }));
  label->Set(false);
  ASSERT_TRUE(WaitUntil(
      [&] { return RoleOnPod() == "standby" && label->written() == false; }));
}

TEST_F(PodRoleLabelTest, KeepsTheOtherLabels) {
  server_.UpdatePod("gpusched-system/gpusched-0", [](Json& pod) {
    pod["metadata"]["labels"]["app.kubernetes.io/name"] = "gpusched";
  });
  auto label = Labeller();
  label->Start();
  label->Set(true);
  ASSERT_TRUE(WaitUntil([&] { return RoleOnPod() == "deciding"; }));
  EXPECT_EQ(server_.Pod("gpusched-system/gpusched-0")["metadata"]["labels"]
                                                     ["app.kubernetes.io/name"],
            "gpusched");
}

TEST_F(PodRoleLabelTest, RetriesAFailedWriteUntilItLands) {
  server_.FailNext(3);
  auto label = Labeller();
  label->Set(true);
  label->Start();
  ASSERT_TRUE(WaitUntil(
      [&] { return RoleOnPod() == "deciding" && label->written() == true; }));
}

TEST_F(PodRoleLabelTest, NothingIsWrittenBeforeARoleIsSet) {
  auto label = Labeller();
  label->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(RoleOnPod(), "");
  EXPECT_EQ(label->written(), std::nullopt);
  label->Stop();
  label->Stop();  // idempotent
}

TEST_F(PodRoleLabelTest, TheLatestRoleWins) {
  auto label = Labeller();
  label->Start();
  for (int i = 0; i < 20; ++i) label->Set(i % 2 == 0);
  label->Set(false);
  ASSERT_TRUE(WaitUntil([&] { return label->written() == false; }));
  EXPECT_EQ(RoleOnPod(), "standby");
}

}  // namespace
}  // namespace gpusched::kube::testing
