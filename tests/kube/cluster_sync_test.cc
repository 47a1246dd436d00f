#include "api/kube/cluster_sync.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using namespace std::chrono_literals;

// A fake cluster, a client, a service and the sync between them.
class ClusterSyncTest : public ::testing::Test {
 protected:
  void StartSync(FakeApiServer& server, ClusterSyncOptions options = {},
                 std::string token = "test-token") {
    KubeConfig config = server.Config();
    config.token = std::move(token);
    client_ = *KubeClient::Create(config);
    sync_ = std::make_unique<ClusterSync>(*client_, service_, options);
    sync_->Start();
  }
  void StartAndWaitSynced(FakeApiServer& server) {
    StartSync(server);
    ASSERT_TRUE(WaitUntil([&] { return sync_->synced(); }));
  }
  void TearDown() override {
    if (sync_) sync_->Stop();
  }

  ExtenderService service_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<ClusterSync> sync_;
};

TEST_F(ClusterSyncTest, ListPutsNodesAndBoundPodsIntoTheModel) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddPod(GpuPod("a/running", 6, "n1"));
  server.AddPod(GpuPod("a/pending", 4));  // holds nothing yet
  StartAndWaitSynced(server);
  EXPECT_TRUE(HasNode(service_, "n1"));
  EXPECT_TRUE(HasPod(service_, "uid-a-running"));
  EXPECT_FALSE(HasPod(service_, "uid-a-pending"));
  EXPECT_TRUE(Fits(service_, "n1", 2));  // 8 - 6 = 2 free
  EXPECT_FALSE(Fits(service_, "n1", 3));
}

TEST_F(ClusterSyncTest, ListReadsEveryPage) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  for (int i = 0; i < 5; ++i) {
    server.AddPod(GpuPod("a/p" + std::to_string(i), 1, "n1"));
  }
  StartSync(server, {.list_page_size = 2});
  ASSERT_TRUE(WaitUntil([&] { return sync_->synced(); }));
  EXPECT_EQ(server.Count("LIST pods"), 3);  // 2 + 2 + 1
  EXPECT_TRUE(Fits(service_, "n1", 3));     // 8 - 5 = 3 free
  EXPECT_FALSE(Fits(service_, "n1", 4));
}

TEST_F(ClusterSyncTest, WatchAddsNodesAndPodsBoundByAnyone) {
  FakeApiServer server;
  StartAndWaitSynced(server);
  server.AddNode(GpuNode("n2", 4));
  ASSERT_TRUE(WaitUntil([&] { return HasNode(service_, "n2"); }));
  server.AddPod(GpuPod("b/job", 4));
  server.UpdatePod("b/job", [](Json& pod) { pod["spec"]["nodeName"] = "n2"; });
  ASSERT_TRUE(WaitUntil([&] { return HasPod(service_, "uid-b-job"); }));
  EXPECT_FALSE(Fits(service_, "n2", 1));  // 4 - 4 = 0 free
}

TEST_F(ClusterSyncTest, NodeDeletionRemovesTheNode) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  StartAndWaitSynced(server);
  server.DeleteNode("n1");
  EXPECT_TRUE(WaitUntil([&] { return !HasNode(service_, "n1"); }));
}

TEST_F(ClusterSyncTest, CompletedPodFreesItsGpus) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddPod(GpuPod("a/train", 8, "n1"));
  StartAndWaitSynced(server);
  ASSERT_FALSE(Fits(service_, "n1", 1));
  server.UpdatePod("a/train",
                   [](Json& pod) { pod["status"]["phase"] = "Succeeded"; });
  EXPECT_TRUE(WaitUntil([&] { return Fits(service_, "n1", 8); }));
  EXPECT_FALSE(HasPod(service_, "uid-a-train"));
}

TEST_F(ClusterSyncTest, DeletedPodFreesItsGpus) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddPod(GpuPod("a/train", 8, "n1"));
  StartAndWaitSynced(server);
  server.DeletePod("a/train");
  EXPECT_TRUE(WaitUntil([&] { return Fits(service_, "n1", 8); }));
}

TEST_F(ClusterSyncTest, PodSeenBeforeItsNodeIsPlacedWhenTheNodeArrives) {
  FakeApiServer server;
  StartAndWaitSynced(server);
  server.AddPod(GpuPod("a/early", 2, "late-node"));
  ASSERT_TRUE(WaitUntil([&] { return server.Count("WATCH pods") >= 2; }));
  server.AddNode(GpuNode("late-node", 8));
  EXPECT_TRUE(WaitUntil([&] { return HasPod(service_, "uid-a-early"); }));
}

// A node registers before its device plugin reports the GPUs, with a
// pod already bound to it: the model records the pod without GPUs, and
// gives it its 8 when the node offers them. Left without, its GPUs would
// look free.
TEST_F(ClusterSyncTest, PodRecordedWithoutGpusGetsThemWhenTheNodeOffersThem) {
  FakeApiServer server;
  StartAndWaitSynced(server);
  server.AddNode(GpuNode("joining", 0));
  ASSERT_TRUE(WaitUntil([&] { return HasNode(service_, "joining"); }));
  server.AddPod(GpuPod("a/early", 8, "joining"));
  ASSERT_TRUE(WaitUntil([&] { return HasPod(service_, "uid-a-early"); }));
  server.AddNode(GpuNode("joining", 8));  // the same node, now with GPUs
  EXPECT_TRUE(WaitUntil([&] {
    return service_.Read([](const ClusterModel& model) {
      const NodeState* node = model.FindNode("joining");
      const PodAllocation* pod =
          node == nullptr ? nullptr : node->FindPod("a/early");
      return pod != nullptr && pod->gpus.gpu_ids.size() == 8;
    });
  }));
  EXPECT_FALSE(Fits(service_, "joining", 1));
}

TEST_F(ClusterSyncTest, GoneHistoryTriggersARelistThatReconciles) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddNode(GpuNode("n2", 8));
  StartAndWaitSynced(server);
  ASSERT_EQ(server.Count("LIST nodes"), 1);
  // No DELETED event: only the 410 and the relist can reveal it.
  server.DeleteNodeUnwatched("n2");
  EXPECT_TRUE(WaitUntil([&] { return !HasNode(service_, "n2"); }));
  EXPECT_EQ(server.Count("LIST nodes"), 2);
  EXPECT_TRUE(HasNode(service_, "n1"));
}

// What the queueing core hears of the lists (api/controller/loop_feed.h).
class ListRecorder : public SyncListener {
 public:
  explicit ListRecorder(ExtenderService& service) : service_(service) {}
  void OnPodsListed(const std::vector<Pod>&,
                    const std::vector<std::string>&) override {
    Say("pods listed");
  }
  void OnPod(WatchEventType, const Pod&) override {}
  void OnNode(WatchEventType, const Node&) override {}
  // Each node list is in the model before the listener hears of it.
  void OnNodesListed(const std::vector<std::string>& undecodable) override {
    {
      std::lock_guard lock(mu_);
      undecodable_ = undecodable;
    }
    Say(HasNode(service_, "n2") ? "nodes listed with n2"
                                : "nodes listed without n2");
  }
  void OnRelisting(std::string_view kind) override {
    Say("relisting " + std::string(kind));
  }
  // The nodes the last node list could not read.
  std::vector<std::string> Undecodable() {
    std::lock_guard lock(mu_);
    return undecodable_;
  }
  std::vector<std::string> NodeSays() {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const std::string& s : said_) {
      if (s.find("nodes") != std::string::npos) out.push_back(s);
    }
    return out;
  }

 private:
  void Say(std::string what) {
    std::lock_guard lock(mu_);
    said_.push_back(std::move(what));
  }
  ExtenderService& service_;
  std::mutex mu_;
  std::vector<std::string> said_;
  std::vector<std::string> undecodable_;
};

// Issue K §4: a node the API server lists but gpusched cannot read is a
// decode error (logged, counted) and stays as it was: never taken for gone,
// which would take back the admissions on it.
TEST_F(ClusterSyncTest, ANodeThatNoLongerDecodesIsKeptAsItWas) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddNode(GpuNode("n2", 8));
  ListRecorder recorder(service_);
  StartSync(server, {.listener = &recorder});
  ASSERT_TRUE(WaitUntil([&] { return sync_->synced(); }));
  Json unreadable = GpuNode("n2", 8);
  unreadable["spec"]["taints"] = "not a list";
  server.AddNode(unreadable);  // a watch event that does not decode
  server.CompactHistory();     // then a relist whose n2 does not
  ASSERT_TRUE(WaitUntil([&] { return recorder.NodeSays().size() == 3; }));
  EXPECT_EQ(recorder.NodeSays().back(), "nodes listed with n2");
  EXPECT_TRUE(HasNode(service_, "n2"));
  EXPECT_GE(sync_->decode_errors("nodes"), 1);
  EXPECT_EQ(recorder.Undecodable(), (std::vector<std::string>{"n2"}));
  sync_->Stop();  // the pod relist still calls the recorder; see below
}

TEST_F(ClusterSyncTest, ListenerHearsEachRelistStartAndEachCompleteList) {
  FakeApiServer server;
  server.AddNode(GpuNode("n1", 8));
  server.AddNode(GpuNode("n2", 8));
  ListRecorder recorder(service_);
  StartSync(server, {.listener = &recorder});
  ASSERT_TRUE(WaitUntil([&] { return sync_->synced(); }));
  server.DeleteNodeUnwatched("n2");
  ASSERT_TRUE(WaitUntil([&] { return recorder.NodeSays().size() == 3; }));
  EXPECT_EQ(recorder.NodeSays(),
            (std::vector<std::string>{"nodes listed with n2", "relisting nodes",
                                      "nodes listed without n2"}));
  // The sync threads still call the recorder (the pod relist); stop them
  // before it goes out of scope, ahead of the fixture's TearDown.
  sync_->Stop();
}

TEST_F(ClusterSyncTest, NotSyncedWhileUnauthorized) {
  FakeApiServer server;
  StartSync(server, {.initial_backoff = 10ms}, "stale-token");
  ASSERT_TRUE(WaitUntil([&] { return server.Count("DENIED") >= 3; }));
  EXPECT_FALSE(sync_->synced());  // and it keeps retrying with backoff
}

TEST_F(ClusterSyncTest, OnSyncedIsCalledOnce) {
  FakeApiServer server;
  std::atomic<int> calls{0};
  StartSync(server, {.on_synced = [&] { ++calls; }});
  ASSERT_TRUE(WaitUntil([&] { return calls == 1; }));
  server.AddNode(GpuNode("n1", 8));
  ASSERT_TRUE(WaitUntil([&] { return HasNode(service_, "n1"); }));
  EXPECT_EQ(calls, 1);
}

TEST_F(ClusterSyncTest, StopReturnsPromptlyWhileWatchesAreOpen) {
  FakeApiServer server({.watch_hold = 60s});
  StartAndWaitSynced(server);
  ASSERT_TRUE(WaitUntil([&] {
    return server.Count("WATCH nodes") == 1 && server.Count("WATCH pods") == 1;
  }));
  const auto start = std::chrono::steady_clock::now();
  sync_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST_F(ClusterSyncTest, StopReturnsPromptlyDuringBackoff) {
  FakeApiServer server;
  StartSync(server, {.initial_backoff = 10s}, "stale-token");
  ASSERT_TRUE(WaitUntil([&] { return server.Count("DENIED") >= 1; }));
  const auto start = std::chrono::steady_clock::now();
  sync_->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

}  // namespace
}  // namespace gpusched::kube::testing
