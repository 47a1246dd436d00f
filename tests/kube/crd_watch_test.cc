#include "api/kube/crd_watch.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kVolcano = "scheduling.volcano.sh";
constexpr std::string_view kVolcanoCrd = "podgroups.scheduling.volcano.sh";

// A CrdWatch on Volcano's PodGroup CRD against the fake API server.
class CrdWatchTest : public ::testing::Test {
 protected:
  void Start(FakeApiServer& server,
             std::chrono::milliseconds forbidden_retry = 30s) {
    client_ = *KubeClient::Create(server.Config());
    watch_ = std::make_unique<CrdWatch>(
        *client_, CrdWatchOptions{.name = std::string(kVolcanoCrd),
                                  .version = "v1beta1",
                                  .initial_backoff = 10ms,
                                  .max_backoff = 100ms,
                                  .forbidden_retry = forbidden_retry});
    watch_->Start();
  }
  void TearDown() override {
    if (watch_) watch_->Stop();
  }

  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<CrdWatch> watch_;
};

TEST_F(CrdWatchTest, WaiterWakesWhenTheCrdIsEstablished) {
  FakeApiServer server;
  Start(server);
  const CrdWatch::Mark mark = watch_->mark();
  server.PutCrd(
      PodGroupCrd("scheduling.x-k8s.io", "v1alpha1", true));  // not ours
  server.PutCrd(PodGroupCrd(kVolcano, "v1beta1", false));     // created
  server.PutCrd(PodGroupCrd(kVolcano, "v1beta1", true));      // established
  // A minute of poll: only the CRD can end this wait in time.
  EXPECT_EQ(watch_->WaitUntilReady(mark, 60s, {}), CrdWatch::Wake::kReady);
  EXPECT_TRUE(watch_->ready());
}

TEST_F(CrdWatchTest, RemovalStopsWhenTheCrdIsDeleted) {
  FakeApiServer server;
  server.PutCrd(PodGroupCrd(kVolcano, "v1beta1", true));
  Start(server);
  ASSERT_TRUE(WaitUntil([&] { return watch_->ready(); }));
  const std::stop_token removal = watch_->mark().removal;
  EXPECT_FALSE(removal.stop_requested());
  server.DeleteCrd(kVolcanoCrd);
  EXPECT_TRUE(WaitUntil([&] { return removal.stop_requested(); }));
  EXPECT_FALSE(watch_->ready());
  EXPECT_FALSE(watch_->mark().removal.stop_requested());  // a new period
}

TEST_F(CrdWatchTest, ForbiddenWatchLeavesWaitersToThePoll) {
  FakeApiServer server;
  server.ForbidCrds();
  Start(server);
  ASSERT_TRUE(WaitUntil(
      [&] { return server.Count("FORBIDDEN customresourcedefinitions") > 0; }));
  EXPECT_EQ(watch_->WaitUntilReady(watch_->mark(), 50ms, {}),
            CrdWatch::Wake::kPollDue);
}

TEST_F(CrdWatchTest, StopEndsAWaitAtOnce) {
  FakeApiServer server;
  Start(server);
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(50ms);
    stop.request_stop();
  });
  EXPECT_EQ(watch_->WaitUntilReady(watch_->mark(), 60s, stop.get_token()),
            CrdWatch::Wake::kStopped);
}

}  // namespace
}  // namespace gpusched::kube::testing
