#include "api/kube/podgroup_sync.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using namespace std::chrono_literals;
using Names = std::vector<std::string>;

constexpr PodGroup::Flavor kVolcano = PodGroup::Flavor::kVolcano;
constexpr PodGroup::Flavor kNative = PodGroup::Flavor::kNative;
constexpr std::string_view kVolcanoGroup = "scheduling.volcano.sh";
constexpr std::string_view kVolcanoCrd = "podgroups.scheduling.volcano.sh";

// What the sync handed over: each list's group keys, and the events.
class RecordingListener : public PodGroupListener {
 public:
  void OnPodGroupsListed(PodGroup::Flavor flavor,
                         std::vector<PodGroup> groups) override {
    Names keys;
    std::lock_guard lock(mu_);
    for (const PodGroup& group : groups) {
      keys.push_back(group.Key());
      min_members_[group.Key()] = group.min_member;
    }
    lists_[FlavorIndex(flavor)].push_back(std::move(keys));
  }
  void OnPodGroup(WatchEventType type, PodGroup group) override {
    std::lock_guard lock(mu_);
    events_.push_back(std::string(WatchEventTypeName(type)) + " " +
                      group.Key());
    min_members_[group.Key()] = group.min_member;
  }
  void OnPodGroupsRelisting(PodGroup::Flavor flavor) override {
    std::lock_guard lock(mu_);
    events_.push_back("RELISTING " + std::to_string(FlavorIndex(flavor)));
  }
  void OnPodGroupListFailing(PodGroup::Flavor flavor,
                             const std::string& error) override {
    std::lock_guard lock(mu_);
    events_.push_back("FAILING " + std::to_string(FlavorIndex(flavor)) + ": " +
                      error);
  }
  // How many events begin with `prefix`.
  int CountStarting(const std::string& prefix) const {
    std::lock_guard lock(mu_);
    return static_cast<int>(std::count_if(
        events_.begin(), events_.end(),
        [&](const std::string& e) { return e.starts_with(prefix); }));
  }
  // The min_member of the group `key` as last handed over; 0 if never.
  int MinMember(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = min_members_.find(key);
    return it == min_members_.end() ? 0 : it->second;
  }
  // The groups of the latest list of `flavor`; nullopt before the first.
  std::optional<Names> LastList(PodGroup::Flavor flavor) const {
    std::lock_guard lock(mu_);
    const std::vector<Names>& lists = lists_[FlavorIndex(flavor)];
    if (lists.empty()) return std::nullopt;
    return lists.back();
  }
  size_t ListCount(PodGroup::Flavor flavor) const {
    std::lock_guard lock(mu_);
    return lists_[FlavorIndex(flavor)].size();
  }
  bool Heard(const std::string& event) const {
    std::lock_guard lock(mu_);
    return std::find(events_.begin(), events_.end(), event) != events_.end();
  }

 private:
  mutable std::mutex mu_;
  std::array<std::vector<Names>, kPodGroupFlavors> lists_;
  Names events_;
  std::map<std::string, int> min_members_;
};

class PodGroupSyncTest : public ::testing::Test {
 protected:
  // A poll of a minute: whatever arrives within seconds was woken by the
  // CRD watch, not by the poll.
  static constexpr PodGroupSyncOptions kMinutePoll{
      .initial_backoff = 10ms, .max_backoff = 200ms, .absent_poll = 60s};

  void Start(FakeApiServer& server, PodGroupSyncOptions options) {
    client_ = *KubeClient::Create(server.Config());
    sync_ = std::make_unique<PodGroupSync>(*client_, listener_, options);
    sync_->Start();
  }
  // Waits until the Volcano API was found absent: settled, listed as none.
  bool WaitAbsent() {
    return WaitUntil([&] {
      return sync_->settled(kVolcano) &&
             listener_.LastList(kVolcano) == Names{};
    });
  }
  bool WaitListed(const Names& keys) {
    return WaitUntil([&] { return listener_.LastList(kVolcano) == keys; });
  }
  void TearDown() override {
    if (sync_) sync_->Stop();
  }

  RecordingListener listener_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<PodGroupSync> sync_;
};

// Issue K §4: a watch that lost its history relists, and the queueing core
// hears it first, so that it holds its passes as for pods and nodes.
TEST_F(PodGroupSyncTest, ALostHistoryIsToldBeforeTheRelist) {
  FakeApiServer server;
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));
  server.AddPodGroup(VolcanoPodGroup("a/ring", 4));
  Start(server, kMinutePoll);
  ASSERT_TRUE(WaitListed({"a/ring"}));
  const size_t lists = listener_.ListCount(kVolcano);
  server.CompactHistory();
  ASSERT_TRUE(WaitUntil([&] {
    return listener_.CountStarting("RELISTING 0") >= 1 &&
           listener_.ListCount(kVolcano) > lists;
  }));
}

// A list that keeps failing (a broken conversion webhook answers 500) is
// told once, with its error, after failing_after; a list that works again
// ends it.
TEST_F(PodGroupSyncTest, AListThatKeepsFailingIsToldOnce) {
  FakeApiServer server;
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));
  server.AddPodGroup(VolcanoPodGroup("a/ring", 4));
  server.FailNext(1'000'000, 500);
  PodGroupSyncOptions options = kMinutePoll;
  options.failing_after = 100ms;
  Start(server, options);
  ASSERT_TRUE(
      WaitUntil([&] { return listener_.CountStarting("FAILING 0") == 1; }));
  EXPECT_FALSE(listener_.LastList(kVolcano).has_value());
  std::this_thread::sleep_for(300ms);  // more failures, told no more
  EXPECT_EQ(listener_.CountStarting("FAILING 0"), 1);
  server.FailNext(0);
  EXPECT_TRUE(WaitListed({"a/ring"}));
}

TEST_F(PodGroupSyncTest, GroupsOfAnEstablishedCrdAreListedThenWatched) {
  FakeApiServer server;
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));
  server.AddPodGroup(VolcanoPodGroup("a/ring", 4));
  Start(server, kMinutePoll);
  ASSERT_TRUE(WaitListed({"a/ring"}));
  server.AddPodGroup(VolcanoPodGroup("a/pair", 2));
  EXPECT_TRUE(WaitUntil([&] { return listener_.Heard("ADDED a/pair"); }));
}

// The case: the CRD is installed after gpusched started, and a
// gang created right away. Its PodGroups are listed within seconds of the
// CRD becoming Established, where the minute's poll would take a minute.
TEST_F(PodGroupSyncTest, CrdEstablishedLaterWakesTheSyncAtOnce) {
  FakeApiServer server;
  Start(server, kMinutePoll);
  ASSERT_TRUE(WaitAbsent());
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", false));  // created
  server.AddPodGroup(VolcanoPodGroup("a/ring", 4));
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));  // established
  EXPECT_TRUE(WaitListed({"a/ring"}));
}

// A CRD that is not Established, or does not serve the version listed,
// does not make the sync ask again: it would be a 404 still.
TEST_F(PodGroupSyncTest, CrdNotReadyDoesNotWakeTheSync) {
  FakeApiServer server;
  Start(server, kMinutePoll);
  ASSERT_TRUE(WaitAbsent());
  // Every API's first list is in (each a 404) before counting.
  ASSERT_TRUE(WaitUntil([&] {
    return sync_->settled(PodGroup::Flavor::kCoscheduling) &&
           sync_->settled(kNative);
  }));
  const int refused = server.Count("NOT FOUND podgroups");
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", false));
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1alpha1", true));
  std::this_thread::sleep_for(300ms);
  EXPECT_EQ(server.Count("NOT FOUND podgroups"), refused);
  EXPECT_EQ(listener_.ListCount(kVolcano), 1u);
}

// The CRD goes while its PodGroups are watched (the fake keeps that watch
// open, silent, as long as it is held): its groups are listed as none, and
// the sync waits for the CRD again.
TEST_F(PodGroupSyncTest, RemovedCrdListsItsGroupsAsNoneAndWaitsAgain) {
  FakeApiServer server({.watch_hold = 60s});
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));
  server.AddPodGroup(VolcanoPodGroup("a/ring", 4));
  Start(server, kMinutePoll);
  ASSERT_TRUE(WaitListed({"a/ring"}));
  // Both CRD watches have listed (and seen Volcano's CRD), and the
  // PodGroups are watched.
  ASSERT_TRUE(WaitUntil([&] {
    return server.Count("WATCH customresourcedefinitions") >= 2 &&
           server.Count("WATCH podgroups") > 0;
  }));
  server.DeleteCrd(kVolcanoCrd);
  ASSERT_TRUE(WaitListed({}));
  server.AddPodGroup(VolcanoPodGroup("a/pair", 2));
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));
  EXPECT_TRUE(WaitListed({"a/pair"}));
}

// A role without the CRD rule (an older deploy/): the CRD watch is a 403,
// and the poll picks the API up as before.
TEST_F(PodGroupSyncTest, ForbiddenCrdWatchFallsBackToThePoll) {
  FakeApiServer server;
  server.ForbidCrds();
  Start(server,
        {.initial_backoff = 10ms, .max_backoff = 200ms, .absent_poll = 300ms});
  ASSERT_TRUE(WaitAbsent());
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));
  server.AddPodGroup(VolcanoPodGroup("a/ring", 4));
  EXPECT_TRUE(WaitListed({"a/ring"}));
  EXPECT_GT(server.Count("FORBIDDEN customresourcedefinitions"), 0);
}

// A CRD the watch cannot decode is reported (the watch's list fails with
// the field named) and crashes nothing; the poll stands in meanwhile, and
// the CRD once corrected is picked up.
TEST_F(PodGroupSyncTest, MalformedCrdCrashesNothing) {
  FakeApiServer server;
  Json crd = PodGroupCrd(kVolcanoGroup, "v1beta1", true);
  crd["spec"]["versions"] = "v1beta1";  // not a list
  server.PutCrd(crd);
  Start(server,
        {.initial_backoff = 10ms, .max_backoff = 200ms, .absent_poll = 300ms});
  ASSERT_TRUE(WaitAbsent());
  // 2 first lists (one per API), then Volcano's again after its failure.
  ASSERT_TRUE(WaitUntil(
      [&] { return server.Count("LIST customresourcedefinitions") >= 4; }));
  server.AddPodGroup(VolcanoPodGroup("a/ring", 4));
  server.PutCrd(PodGroupCrd(kVolcanoGroup, "v1beta1", true));
  EXPECT_TRUE(WaitListed({"a/ring"}));
}

// Kubernetes' own PodGroups need no CRD: listed (the list's items carry no
// apiVersion, as for every built-in type) with the gang's minCount, then
// watched.
TEST_F(PodGroupSyncTest, NativeGroupsAreListedThenWatched) {
  FakeApiServer server;
  server.ServeNativePodGroups(true);
  server.AddPodGroup(NativePodGroup("a/ring", 4));
  Start(server, kMinutePoll);
  ASSERT_TRUE(WaitUntil(
      [&] { return listener_.LastList(kNative) == Names{"a/ring"}; }));
  EXPECT_EQ(listener_.MinMember("a/ring"), 4);
  server.AddPodGroup(NativePodGroup("a/pair", 2));
  EXPECT_TRUE(WaitUntil([&] { return listener_.Heard("ADDED a/pair"); }));
  EXPECT_EQ(listener_.MinMember("a/pair"), 2);
}

// kube-apiserver serves the API only with its runtime-config, which a
// restart may add later; no CRD announces it, so the absent poll finds it.
TEST_F(PodGroupSyncTest, NativeApiServedLaterIsPickedUpByThePoll) {
  FakeApiServer server;
  Start(server,
        {.initial_backoff = 10ms, .max_backoff = 200ms, .absent_poll = 300ms});
  ASSERT_TRUE(WaitUntil([&] {
    return sync_->settled(kNative) && listener_.LastList(kNative) == Names{};
  }));
  server.ServeNativePodGroups(true);
  server.AddPodGroup(NativePodGroup("a/ring", 4));
  EXPECT_TRUE(WaitUntil(
      [&] { return listener_.LastList(kNative) == Names{"a/ring"}; }));
  EXPECT_EQ(listener_.ListCount(kNative), 2u);  // none, then the group
}

}  // namespace
}  // namespace gpusched::kube::testing
