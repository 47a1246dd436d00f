#include "api/kube/event_recorder.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

EventRecord Waiting(std::string_view name, std::string_view reason,
                    std::string_view note) {
  return EventRecord{.regarding = {.namespace_name = "team-a",
                                   .name = std::string(name),
                                   .uid = "uid-" + std::string(name)},
                     .type = EventType::kWarning,
                     .reason = std::string(reason),
                     .action = "Admission",
                     .note = std::string(note)};
}

class EventRecorderTest : public ::testing::Test {
 protected:
  EventRecorderTest() : client_(*KubeClient::Create(server_.Config())) {}

  std::unique_ptr<EventRecorder> Recorder(EventRecorderOptions options = {}) {
    if (options.reporting_instance.empty()) options.reporting_instance = "r1";
    return std::make_unique<EventRecorder>(*client_, std::move(options));
  }

  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(EventRecorderTest, WritesAnEventsV1EventTheServerAccepts) {
  auto recorder = Recorder({.reporting_instance = "gpusched-0"});
  recorder->Record(Waiting("ring-0", "WaitingForQuota", "queue team-a: full"));
  ASSERT_TRUE(WaitUntil([&] { return recorder->counters().written == 1; }));
  Json event = server_.Events().at(0);
  EXPECT_EQ(event["reason"], "WaitingForQuota");
  EXPECT_EQ(event["note"], "queue team-a: full");
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["reportingController"], "gpusched.io/scheduler");
  EXPECT_EQ(event["reportingInstance"], "gpusched-0");
  EXPECT_EQ(event["regarding"]["uid"], "uid-ring-0");
  EXPECT_EQ(event["metadata"]["namespace"], "team-a");
  EXPECT_EQ(event["metadata"]["name"].get<std::string>().rfind("ring-0.", 0),
            0u);  // "<object>.<hex unix nanos>", as client-go names them
}

TEST_F(EventRecorderTest, NewSentenceWithTheSameCodeIsNotANewEvent) {
  auto recorder = Recorder();
  recorder->Record(Waiting("ring-0", "WaitingForQuota", "position 3"));
  recorder->Record(Waiting("ring-0", "WaitingForQuota", "position 2"));
  recorder->Record(Waiting("ring-0", "Admitted", "admitted on dgx-3"));
  ASSERT_TRUE(WaitUntil([&] { return recorder->counters().written == 2; }));
  EXPECT_EQ(recorder->counters().deduplicated, 1u);
  std::vector<Json> events = server_.Events();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["note"], "position 3");  // the first sentence stands
  EXPECT_EQ(events[1]["reason"], "Admitted");
}

TEST_F(EventRecorderTest, ForgottenObjectsNextEventIsNews) {
  auto recorder = Recorder();
  recorder->Record(Waiting("ring-0", "WaitingForQuota", "a"));
  recorder->Forget("uid-ring-0");
  recorder->Record(Waiting("ring-0", "WaitingForQuota", "b"));
  EXPECT_TRUE(WaitUntil([&] { return recorder->counters().written == 2; }));
}

TEST_F(EventRecorderTest, DedupeMemoryIsBoundedOldestFirst) {
  auto recorder = Recorder({.dedupe_capacity = 2});
  recorder->Record(Waiting("a", "WaitingForQuota", ""));
  recorder->Record(Waiting("b", "WaitingForQuota", ""));
  recorder->Record(Waiting("c", "WaitingForQuota", ""));  // forgets a
  recorder->Record(Waiting("c", "WaitingForQuota", ""));  // still known
  recorder->Record(Waiting("a", "WaitingForQuota", ""));  // news again
  ASSERT_TRUE(WaitUntil([&] { return recorder->counters().written == 4; }));
  EXPECT_EQ(recorder->counters().deduplicated, 1u);
}

TEST_F(EventRecorderTest, FullQueueDropsAndCountsWithoutBlocking) {
  server_.SetEventDelay(milliseconds(5000));
  auto recorder = Recorder({.queue_capacity = 1});
  recorder->Record(Waiting("a", "WaitingForQuota", ""));
  // The worker is inside the first write, stalled by the slow server.
  ASSERT_TRUE(WaitUntil([&] { return server_.Count("POST event") == 1; }));
  const Clock::time_point start = Clock::now();
  recorder->Record(Waiting("b", "WaitingForQuota", ""));  // queued
  recorder->Record(Waiting("c", "WaitingForQuota", ""));  // no room
  EXPECT_LT(Clock::now() - start, milliseconds(100));
  EXPECT_EQ(recorder->counters().dropped, 1u);
  const Clock::time_point stopping = Clock::now();
  recorder->Stop();
  EXPECT_LT(Clock::now() - stopping, milliseconds(500));  // not 5 s
  // c, then b (queued) and a (cancelled in flight) at Stop.
  EXPECT_EQ(recorder->counters().dropped, 3u);
  EXPECT_EQ(recorder->counters().written, 0u);
}

TEST_F(EventRecorderTest, RefusedEventIsCountedAndTriedAgainNextTime) {
  auto recorder = Recorder();
  EventRecord no_action = Waiting("a", "WaitingForQuota", "");
  no_action.action.clear();  // events.k8s.io/v1 requires an action: 422
  recorder->Record(no_action);
  ASSERT_TRUE(WaitUntil([&] { return recorder->counters().failed == 1; }));
  recorder->Record(Waiting("a", "WaitingForQuota", ""));
  ASSERT_TRUE(WaitUntil([&] { return recorder->counters().written == 1; }));
  EXPECT_EQ(recorder->counters().deduplicated, 0u);
}

}  // namespace
}  // namespace gpusched::kube::testing
