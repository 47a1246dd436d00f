#include "api/kube/list_watch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api/codec/kube_list_json.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using namespace std::chrono_literals;
using Lines = std::vector<std::string>;

constexpr char kResourceApiV1[] = "resource.k8s.io/v1";

// Writes down what the loop handed over, one line a call.
class RecordingSink : public ListWatchSink {
 public:
  void BeginList() override { Add("begin"); }
  void ListItem(simdjson::dom::element item) override {
    Add("item " + std::string(ObjectNameForLogs(item)));
  }
  void EndList() override { Add("end"); }
  void Event(WatchEventType type, simdjson::dom::element object) override {
    Add(std::string(WatchEventTypeName(type)) + " " +
        std::string(ObjectNameForLogs(object)));
  }
  void Absent(const absl::Status& why) override {
    Add("absent " + std::string(absl::StatusCodeToString(why.code())));
  }
  Lines lines() const {
    std::lock_guard lock(mu_);
    return lines_;
  }
  int Count(const std::string& line) const {
    std::lock_guard lock(mu_);
    return static_cast<int>(std::count(lines_.begin(), lines_.end(), line));
  }

 private:
  void Add(std::string line) {
    std::lock_guard lock(mu_);
    lines_.push_back(std::move(line));
  }
  mutable std::mutex mu_;
  Lines lines_;
};

Json DeviceClass(const std::string& name) {
  return {{"metadata", {{"name", name}}}, {"spec", Json::object()}};
}

class ListWatchTest : public ::testing::Test {
 protected:
  void Start(std::chrono::milliseconds absent_poll = 60s) {
    client_ = *KubeClient::Create(server_.Config());
    options_ = {.path = "/apis/resource.k8s.io/v1/deviceclasses",
                .what = "DeviceClasses",
                .initial_backoff = 1ms,
                .max_backoff = 20ms,
                .absent_poll = absent_poll,
                .list_page_size = 2};
    thread_ = std::jthread([this](std::stop_token stop) {
      RunListWatch(*client_, options_, sink_, stop);
    });
  }
  void TearDown() override {
    thread_.request_stop();
    if (thread_.joinable()) thread_.join();
  }

  FakeApiServer server_;
  RecordingSink sink_;
  std::unique_ptr<KubeClient> client_;
  ListWatchOptions options_;
  std::jthread thread_;
};

TEST_F(ListWatchTest, ListsEveryPageThenWatches) {
  server_.ServeDra();
  for (std::string name : {"a", "b", "c", "d", "e"}) {
    server_.PutObject(kResourceApiV1, "deviceclasses", DeviceClass(name));
  }
  Start();
  ASSERT_TRUE(WaitUntil([&] { return sink_.Count("end") == 1; }));
  EXPECT_EQ(sink_.lines(), (Lines{"begin", "item a", "item b", "item c",
                                  "item d", "item e", "end"}));
  EXPECT_EQ(server_.Count("LIST deviceclasses"), 3);
  server_.PutObject(kResourceApiV1, "deviceclasses", DeviceClass("f"));
  server_.DeleteObject(kResourceApiV1, "deviceclasses", "a");
  EXPECT_TRUE(WaitUntil([&] { return sink_.Count("DELETED a") == 1; }));
  EXPECT_EQ(sink_.Count("ADDED f"), 1);
}

TEST_F(ListWatchTest, LostHistoryMeansAFreshCompleteList) {
  server_.ServeDra();
  server_.PutObject(kResourceApiV1, "deviceclasses", DeviceClass("a"));
  Start();
  ASSERT_TRUE(WaitUntil([&] { return sink_.Count("end") == 1; }));
  server_.CompactHistory();
  ASSERT_TRUE(WaitUntil([&] { return sink_.Count("end") == 2; }));
  EXPECT_EQ(sink_.Count("item a"), 2);
}

// A page that fails half-way is never reported complete: the sink sees a
// new beginning, and only a whole list ends.
TEST_F(ListWatchTest, AListThatFailsHalfWayIsNotComplete) {
  server_.ServeDra();
  for (std::string name : {"a", "b", "c"}) {
    server_.PutObject(kResourceApiV1, "deviceclasses", DeviceClass(name));
  }
  server_.FailNext(1);  // the first page
  Start();
  ASSERT_TRUE(WaitUntil([&] { return sink_.Count("end") == 1; }));
  EXPECT_EQ(sink_.Count("begin"), 2);
  EXPECT_EQ(sink_.Count("item a"), 1);
}

TEST_F(ListWatchTest, AnApiNotServedIsAbsentOnceThenListedWhenServed) {
  Start(50ms);
  ASSERT_TRUE(WaitUntil([&] { return sink_.Count("absent NOT_FOUND") == 1; }));
  std::this_thread::sleep_for(200ms);  // several polls, said once
  EXPECT_EQ(sink_.Count("absent NOT_FOUND"), 1);
  server_.ServeDra();
  server_.PutObject(kResourceApiV1, "deviceclasses", DeviceClass("a"));
  EXPECT_TRUE(WaitUntil([&] { return sink_.Count("item a") == 1; }));
}

TEST_F(ListWatchTest, ARoleWithoutTheRuleIsAbsentAfterARunOf403s) {
  server_.ServeDra();
  server_.ForbidResource("deviceclasses");
  Start();
  ASSERT_TRUE(
      WaitUntil([&] { return sink_.Count("absent PERMISSION_DENIED") == 1; }));
  EXPECT_GE(server_.Count("FORBIDDEN deviceclasses"), 8);
  EXPECT_EQ(sink_.Count("end"), 0);
}

}  // namespace
}  // namespace gpusched::kube::testing
