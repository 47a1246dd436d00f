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

absl::StatusOr<CrdServing> Decode(const Json& crd,
                                  std::string_view version = "v1beta1") {
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(crd.dump()).value();
  return DecodeCrd(root, version);
}

// What a well-formed CRD says of serving v1beta1.
TEST(DecodeCrdTest, SaysWhetherEstablishedAndServingTheVersion) {
  struct Case {
    std::string what;
    Json crd;
    bool established, version_served;
  };
  Json established_false = PodGroupCrd(kVolcano, "v1beta1", true);
  established_false["status"]["conditions"][1]["status"] = "False";
  Json not_served = PodGroupCrd(kVolcano, "v1beta1", true);
  not_served["spec"]["versions"][0]["served"] = false;
  const Case cases[] = {
      {"established", PodGroupCrd(kVolcano, "v1beta1", true), true, true},
      {"just created, no status", PodGroupCrd(kVolcano, "v1beta1", false),
       false, true},
      {"Established False", established_false, false, true},
      {"another version only", PodGroupCrd(kVolcano, "v1alpha1", true), true,
       false},
      {"the version not served", not_served, true, false},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CrdServing> crd = Decode(c.crd);
    ASSERT_TRUE(crd.ok()) << c.what << ": " << crd.status();
    EXPECT_EQ(crd->name, kVolcanoCrd) << c.what;
    EXPECT_EQ(crd->established, c.established) << c.what;
    EXPECT_EQ(crd->version_served, c.version_served) << c.what;
    EXPECT_EQ(crd->ready(), c.established && c.version_served) << c.what;
  }
}

// Each malformed CRD is refused with the field at fault in the message.
TEST(DecodeCrdTest, MalformedCrdNamesTheFieldItRejects) {
  struct Case {
    std::string pointer;  // the field replaced (or removed when null)
    Json value;
    std::string field;  // expected in the message
  };
  const Case cases[] = {
      {"/metadata/name", 7, "metadata.name"},
      {"/spec/versions", nullptr, "spec.versions"},
      {"/spec/versions", "v1beta1", "spec.versions"},
      {"/spec/versions/0/name", nullptr, "spec.versions[0].name"},
      {"/spec/versions/0/served", "yes", "spec.versions[0].served"},
      {"/status", "Established", "status"},
      {"/status/conditions", Json::object(), "status.conditions"},
      {"/status/conditions/0/type", nullptr, "status.conditions[0].type"},
      {"/status/conditions/1/status", true, "status.conditions[1].status"},
  };
  for (const Case& c : cases) {
    Json json = PodGroupCrd(kVolcano, "v1beta1", true);
    const Json::json_pointer at(c.pointer);
    if (c.value.is_null()) {
      json[at.parent_pointer()].erase(at.back());
    } else {
      json[at] = c.value;
    }
    absl::StatusOr<CrdServing> crd = Decode(json);
    ASSERT_FALSE(crd.ok()) << c.pointer;
    EXPECT_EQ(crd.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(crd.status().message().find(c.field + ":"), std::string::npos)
        << c.pointer << ": " << crd.status();
  }
}

TEST(DecodeCrdTest, NotAnObjectIsRefused) {
  simdjson::dom::parser parser;
  absl::StatusOr<CrdServing> crd =
      DecodeCrd(parser.parse(std::string("[1]")).value(), "v1beta1");
  EXPECT_FALSE(crd.ok());
}

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
  server.PutCrd(PodGroupCrd("scheduling.x-k8s.io", "v1alpha1", true));  // not ours
  server.PutCrd(PodGroupCrd(kVolcano, "v1beta1", false));  // created
  server.PutCrd(PodGroupCrd(kVolcano, "v1beta1", true));   // established
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
