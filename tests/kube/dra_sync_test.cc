#include "api/kube/dra_sync.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kV1[] = "resource.k8s.io/v1";

Json Claim(const std::string& name, const std::string& node,
           std::vector<std::string> devices) {
  Json results = Json::array();
  for (const std::string& device : devices) {
    results.push_back({{"request", "gpus"},
                       {"driver", "gpu.nvidia.com"},
                       {"pool", node},
                       {"device", device}});
  }
  Json claim = {
      {"apiVersion", kV1},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", name}, {"namespace", "ml"}}},
      {"spec",
       {{"devices",
         {{"requests",
           {{{"name", "gpus"},
             {"exactly",
              {{"deviceClassName", "gpu.nvidia.com"}, {"count", 2}}}}}}}}}}};
  if (!devices.empty()) {
    claim["status"] = {{"allocation", {{"devices", {{"results", results}}}}}};
  }
  return claim;
}

class DraSyncTest : public ::testing::Test {
 protected:
  void Start(DraSyncOptions options = {}) {
    options.initial_backoff = 10ms;
    options.max_backoff = 100ms;
    options.on_change = [this] { ++changes_; };
    client_ = *KubeClient::Create(server_.Config());
    sync_ = std::make_unique<DraSync>(*client_, std::move(options));
    sync_->Start();
  }
  std::vector<std::string> Offered(const std::string& node) const {
    std::vector<std::string> names;
    for (const DraDeviceState& state : sync_->NodeDevices(node).devices) {
      if (state.offered()) names.push_back(state.device.name);
    }
    return names;
  }
  void TearDown() override {
    if (sync_) sync_->Stop();
  }

  FakeApiServer server_;
  std::atomic<int> changes_{0};
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<DraSync> sync_;
};

TEST_F(DraSyncTest, ListsEveryKindThenFollowsAllocations) {
  server_.ServeDra();
  server_.PutObject(kV1, "resourceslices", DraGpuSlice("dgx-1", 4));
  server_.PutObject(kV1, "deviceclasses", DraGpuClass());
  server_.PutObject(kV1, "resourceclaims",
                    Claim("train-0", "dgx-1", {"gpu-0", "gpu-1"}));
  Start();
  ASSERT_TRUE(WaitUntil([&] { return sync_->settled(); }));
  EXPECT_EQ(Offered("dgx-1"), (std::vector<std::string>{"gpu-2", "gpu-3"}));
  EXPECT_EQ(sync_->ExtendedResourceClasses().at("nvidia.com/gpu"),
            "gpu.nvidia.com");

  const int before = changes_;
  server_.PutObject(kV1, "resourceclaims",
                    Claim("train-1", "dgx-1", {"gpu-2", "gpu-3"}));
  ASSERT_TRUE(WaitUntil([&] { return Offered("dgx-1").empty(); }));
  EXPECT_GT(changes_, before);
  server_.DeleteObject(kV1, "resourceclaims", "ml/train-0");
  EXPECT_TRUE(WaitUntil([&] {
    return Offered("dgx-1") == std::vector<std::string>{"gpu-0", "gpu-1"};
  }));
}

TEST_F(DraSyncTest, PodDemandResolvesAgainstTheWatchedCatalog) {
  server_.ServeDra();
  server_.PutObject(kV1, "deviceclasses", DraGpuClass());
  server_.PutObject(kV1, "resourceclaims", Claim("worker-0-gpus", "dgx-1", {}));
  Start();
  ASSERT_TRUE(WaitUntil([&] { return sync_->settled(); }));
  Pod pod;
  pod.meta.name = "worker-0";
  pod.meta.namespace_name = "ml";
  pod.resource_claims.push_back({"gpus", "worker-0-gpus", "", ""});
  DraDemand demand = sync_->ClaimsOf(pod, {}).demand;
  ASSERT_EQ(demand.requests.size(), 1u);
  EXPECT_EQ(demand.requests[0].alternatives[0].count, 2);
}

// The refresher reads only the nodes a change touched: a slice's node, an
// allocation's node (before and after), every node for a taint rule.
TEST_F(DraSyncTest, TouchedNodesAreThoseAChangeCanAlterAndAreTakenOnce) {
  server_.ServeDra();
  server_.PutObject(kV1, "resourceslices", DraGpuSlice("dgx-1", 4));
  server_.PutObject(kV1, "resourceslices", DraGpuSlice("dgx-2", 4));
  Start();
  ASSERT_TRUE(WaitUntil([&] { return sync_->settled(); }));
  EXPECT_TRUE(sync_->TakeTouched().all);  // the lists: every node
  DraTouched none = sync_->TakeTouched();
  EXPECT_FALSE(none.all);
  EXPECT_TRUE(none.nodes.empty());

  Json claim = Claim("train-0", "dgx-2", {"gpu-0", "gpu-1"});
  claim["status"]["allocation"]["nodeSelector"] = {
      {"nodeSelectorTerms",
       {{{"matchFields",
          {{{"key", "metadata.name"},
            {"operator", "In"},
            {"values", {"dgx-2"}}}}}}}}};
  server_.PutObject(kV1, "resourceclaims", claim);
  ASSERT_TRUE(WaitUntil([&] { return Offered("dgx-2").size() == 2; }));
  DraTouched touched = sync_->TakeTouched();
  EXPECT_FALSE(touched.all);
  EXPECT_EQ(touched.nodes, (std::set<std::string>{"dgx-2"}));

  server_.DeleteObject(kV1, "resourceclaims", "ml/train-0");
  ASSERT_TRUE(WaitUntil([&] { return Offered("dgx-2").size() == 4; }));
  EXPECT_EQ(sync_->TakeTouched().nodes, (std::set<std::string>{"dgx-2"}));

  server_.DeleteObject(kV1, "resourceslices", "dgx-1-gpu.nvidia.com");
  ASSERT_TRUE(WaitUntil([&] { return Offered("dgx-1").empty(); }));
  EXPECT_EQ(sync_->TakeTouched().nodes, (std::set<std::string>{"dgx-1"}));
}

// A cluster without DRA (or a role without its rules) is a cluster with no
// devices: settled, said once, and asked again.
TEST_F(DraSyncTest, AnApiNotServedIsNoDevicesUntilItIs) {
  Start({.absent_poll = 100ms});
  ASSERT_TRUE(WaitUntil([&] { return sync_->settled(); }));
  EXPECT_TRUE(sync_->Nodes().empty());
  server_.ServeDra();
  server_.PutObject(kV1, "resourceslices", DraGpuSlice("dgx-1", 2));
  EXPECT_TRUE(WaitUntil([&] { return Offered("dgx-1").size() == 2; }));
}

// After the history is gone the sync lists again and loses nothing.
TEST_F(DraSyncTest, ARelistAfterCompactionKeepsThePicture) {
  server_.ServeDra();
  server_.PutObject(kV1, "resourceslices", DraGpuSlice("dgx-1", 2));
  Start();
  ASSERT_TRUE(WaitUntil([&] { return Offered("dgx-1").size() == 2; }));
  const int lists = server_.Count("LIST resourceslices");
  server_.CompactHistory();
  server_.PutObject(kV1, "resourceslices", DraGpuSlice("dgx-2", 3));
  ASSERT_TRUE(WaitUntil([&] { return Offered("dgx-2").size() == 3; }));
  EXPECT_EQ(Offered("dgx-1").size(), 2u);
  EXPECT_TRUE(
      WaitUntil([&] { return server_.Count("LIST resourceslices") > lists; }));
}

// One object that does not decode is skipped; the rest are kept.
TEST_F(DraSyncTest, AnObjectThatDoesNotDecodeIsSkippedNotFatal) {
  server_.ServeDra();
  Json bad = Claim("odd", "dgx-1", {});
  bad["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] =
      "Sometimes";
  server_.PutObject(kV1, "resourceclaims", bad);
  server_.PutObject(kV1, "resourceclaims", Claim("fine", "dgx-1", {"gpu-0"}));
  server_.PutObject(kV1, "resourceslices", DraGpuSlice("dgx-1", 2));
  Start();
  ASSERT_TRUE(WaitUntil([&] { return sync_->settled(); }));
  EXPECT_EQ(Offered("dgx-1"), (std::vector<std::string>{"gpu-1"}));
}

}  // namespace
}  // namespace gpusched::kube::testing
