#include "api/kube/podgroup_status.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {
namespace {

const auto kNoon = std::chrono::system_clock::time_point(
    std::chrono::seconds(1700006400));  // 2023-11-15T00:00:00Z

class PodGroupStatusTest : public ::testing::Test {
 protected:
  PodGroupStatusTest() : client_(*KubeClient::Create(server_.Config())) {}

  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(PodGroupStatusTest, VolcanoStatusIsPatchedOnTheObjectItself) {
  server_.AddPodGroup(VolcanoPodGroup("team-a/ring", 4));
  VolcanoStatus status{
      .phase = VolcanoPhase::kPending,
      .conditions = {{.type = VolcanoCondition::Type::kUnschedulable,
                      .status = true,
                      .reason = "NotEnoughResources",
                      .message = "queue team-a: needs 16 GPUs, 4 free",
                      .last_transition = kNoon,
                      .transition_id = "t-1"}},
      .running = 1};
  absl::StatusOr<PodGroupWriteResult> written = WriteVolcanoStatus(
      *client_, {.namespace_name = "team-a", .name = "ring"}, status);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->outcome, PodGroupWriteOutcome::kWritten);
  Json stored = server_.PodGroup("scheduling.volcano.sh", "team-a/ring");
  EXPECT_EQ(stored["status"]["phase"], "Pending");
  EXPECT_EQ(stored["status"]["running"], 1);
  EXPECT_EQ(stored["status"]["conditions"],
            Json::parse(R"([{"type":"Unschedulable","status":"True",)"
                        R"("reason":"NotEnoughResources","message":)"
                        R"("queue team-a: needs 16 GPUs, 4 free",)"
                        R"("lastTransitionTime":"2023-11-15T00:00:00Z",)"
                        R"("transitionID":"t-1"}])"));
  EXPECT_EQ(stored["spec"]["minMember"], 4);  // the rest is untouched
  EXPECT_EQ(server_.Count("PATCH podgroup"), 1);
}

TEST_F(PodGroupStatusTest, VolcanoConditionsAreReplacedWhole) {
  server_.AddPodGroup(VolcanoPodGroup("team-a/ring", 2));
  const PodGroupTarget ring{.namespace_name = "team-a", .name = "ring"};
  VolcanoCondition waiting{.reason = "NotEnoughResources",
                           .last_transition = kNoon};
  ASSERT_TRUE(
      WriteVolcanoStatus(*client_, ring, {.conditions = {waiting}}).ok());
  VolcanoCondition scheduled{.type = VolcanoCondition::Type::kScheduled,
                             .reason = "Admitted",
                             .last_transition = kNoon};
  ASSERT_TRUE(WriteVolcanoStatus(
                  *client_, ring,
                  {.phase = VolcanoPhase::kInqueue, .conditions = {scheduled}})
                  .ok());
  Json stored = server_.PodGroup("scheduling.volcano.sh", "team-a/ring");
  ASSERT_EQ(stored["status"]["conditions"].size(), 1u);
  EXPECT_EQ(stored["status"]["conditions"][0]["type"], "Scheduled");
  EXPECT_EQ(stored["status"]["phase"], "Inqueue");
}

TEST_F(PodGroupStatusTest, CoschedulingStatusGoesThroughTheSubresource) {
  server_.AddPodGroup(CoschedulingPodGroup("team-b/ring", 3));
  CoschedulingStatus status{.phase = CoschedulingPhase::kScheduling,
                            .scheduled = 2,
                            .running = 1,
                            .failed = 1,
                            .schedule_start_time = kNoon};
  absl::StatusOr<PodGroupWriteResult> written = WriteCoschedulingStatus(
      *client_, {.namespace_name = "team-b", .name = "ring"}, status);
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->outcome, PodGroupWriteOutcome::kWritten);
  Json stored = server_.PodGroup("scheduling.x-k8s.io", "team-b/ring");
  EXPECT_EQ(stored["status"],
            Json::parse(R"({"phase":"Scheduling","scheduled":2,"running":1,)"
                        R"("succeeded":0,"failed":1,)"
                        R"("scheduleStartTime":"2023-11-15T00:00:00Z"})"));
  EXPECT_EQ(server_.Count("PATCH podgroup/status"), 1);
}

TEST_F(PodGroupStatusTest, DeletedGroupOrAbsentCrdIsGoneNotAnError) {
  absl::StatusOr<PodGroupWriteResult> written = WriteCoschedulingStatus(
      *client_, {.namespace_name = "team-b", .name = "deleted"}, {});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->outcome, PodGroupWriteOutcome::kGroupGone);
  written = WriteVolcanoStatus(
      *client_, {.namespace_name = "team-a", .name = "gone"}, {});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->outcome, PodGroupWriteOutcome::kGroupGone);
}

// kube-scheduler owns PodGroupInitiallyScheduled: gpusched's condition goes
// beside it, and a later write replaces gpusched's own, not the list.
TEST_F(PodGroupStatusTest, NativeConditionGoesBesideKubeSchedulers) {
  server_.ServeNativePodGroups(true);
  Json group = NativePodGroup("team-a/ring", 4);
  group["status"]["conditions"] = Json::parse(
      R"([{"type":"PodGroupInitiallyScheduled","status":"False",)"
      R"("reason":"Unschedulable","message":"waiting for minCount pods",)"
      R"("lastTransitionTime":"2023-11-14T00:00:00Z"}])");
  server_.AddPodGroup(group);
  const PodGroupTarget ring{.namespace_name = "team-a", .name = "ring"};
  ASSERT_TRUE(WriteNativeStatus(*client_, ring,
                                {.admitted = false,
                                 .reason = "WaitingForQuota",
                                 .message = "needs 16 GPUs, 4 free",
                                 .last_transition = kNoon})
                  .ok());
  absl::StatusOr<PodGroupWriteResult> written = WriteNativeStatus(
      *client_, ring,
      {.admitted = true, .reason = "Admitted", .last_transition = kNoon});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->outcome, PodGroupWriteOutcome::kWritten);
  Json stored = server_.PodGroup("scheduling.k8s.io", "team-a/ring");
  EXPECT_EQ(stored["status"]["conditions"],
            Json::parse(R"([{"type":"PodGroupInitiallyScheduled",)"
                        R"("status":"False","reason":"Unschedulable",)"
                        R"("message":"waiting for minCount pods",)"
                        R"("lastTransitionTime":"2023-11-14T00:00:00Z"},)"
                        R"({"type":"gpusched.io/Admitted","status":"True",)"
                        R"("reason":"Admitted","message":"",)"
                        R"("lastTransitionTime":"2023-11-15T00:00:00Z"}])"));
  EXPECT_EQ(stored["spec"]["schedulingPolicy"]["gang"]["minCount"], 4);
  EXPECT_EQ(server_.Count("PATCH podgroup/status"), 2);
}

// The built-in API not served (no runtime-config) answers 404: gone.
TEST_F(PodGroupStatusTest, NativeApiNotServedIsGoneNotAnError) {
  server_.AddPodGroup(NativePodGroup("team-a/ring", 4));
  absl::StatusOr<PodGroupWriteResult> written =
      WriteNativeStatus(*client_, {.namespace_name = "team-a", .name = "ring"},
                        {.reason = "Pending", .last_transition = kNoon});
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(written->outcome, PodGroupWriteOutcome::kGroupGone);
}

}  // namespace
}  // namespace gpusched::kube::testing
