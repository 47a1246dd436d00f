// Live mode on a cluster with DRA: a node's GPUs come from its
// ResourceSlices, a running pod holds what its claim was allocated (once),
// claims are charged as GPUs, and a new allocation reaches the model.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/kube/live_mode.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

constexpr char kDraApiV1[] = "resource.k8s.io/v1";

Json TwoGpusSpec() {
  return {{"devices",
           {{"requests",
             {{{"name", "gpus"},
               {"exactly",
                {{"deviceClassName", "gpu.nvidia.com"}, {"count", 2}}}}}}}}};
}

Json Template() {
  return {{"apiVersion", kDraApiV1},
          {"kind", "ResourceClaimTemplate"},
          {"metadata", {{"name", "two-gpus"}, {"namespace", "ml"}}},
          {"spec", {{"spec", TwoGpusSpec()}}}};
}

// A claim allocated `devices` of dgx-1, reserved for the pod `uid`.
Json Claim(const std::string& name, std::vector<std::string> devices,
           const std::string& uid) {
  Json results = Json::array();
  for (const std::string& device : devices) {
    results.push_back({{"request", "gpus"},
                       {"driver", "gpu.nvidia.com"},
                       {"pool", "dgx-1"},
                       {"device", device}});
  }
  Json claim = {
      {"apiVersion", kDraApiV1},
      {"kind", "ResourceClaim"},
      {"metadata", {{"name", name}, {"namespace", "ml"}}},
      {"spec", TwoGpusSpec()},
      {"status", {{"allocation", {{"devices", {{"results", results}}}}}}}};
  if (!uid.empty()) {
    claim["status"]["reservedFor"] = {
        {{"resource", "pods"}, {"name", "x"}, {"uid", uid}}};
  }
  return claim;
}

// A pod whose claim "gpus" comes from the template two-gpus.
Json ClaimPod(const std::string& key, const std::string& node,
              const std::string& claim) {
  Json pod = GpuPod(key, 0, node);
  pod["spec"]["containers"][0]["resources"]["limits"] = Json::object();
  pod["spec"]["resourceClaims"] = {
      {{"name", "gpus"}, {"resourceClaimTemplateName", "two-gpus"}}};
  if (!claim.empty()) {
    pod["status"]["resourceClaimStatuses"] = {
        {{"name", "gpus"}, {"resourceClaimName", claim}}};
  }
  return pod;
}

int64_t FreeMilli(const ExtenderService& service) {
  return service.Read([](const ClusterModel& model) {
    const NodeState* node = model.FindNode("dgx-1");
    return node == nullptr ? -1 : node->gpus().free_milli();
  });
}

TEST(LiveDraTest, ClaimsHoldTheirGpusOnceAndAreChargedAsGpus) {
  FakeApiServer server;
  server.ServeDra();
  server.AddNode(GpuNode("dgx-1", 0));
  server.PutObject(kDraApiV1, "resourceslices", DraGpuSlice("dgx-1", 8));
  server.PutObject(kDraApiV1, "resourceclaimtemplates", Template());
  server.PutObject(kDraApiV1, "deviceclasses", DraGpuClass());
  server.PutObject(kDraApiV1, "resourceclaims",
                   Claim("a-gpus", {"gpu-2", "gpu-3"}, "uid-ml-a"));
  server.AddPod(ClaimPod("ml/a", "dgx-1", "a-gpus"));
  server.AddPod(ClaimPod("ml/b", "", ""));
  auto live = CreateLiveBinder({.kubeconfig = KubeconfigFor(server)});
  ASSERT_TRUE(live.ok()) << live.status();
  ExtenderService service(ServiceOptions{.bind_sink = (*live)->bind_sink()});
  (*live)->StartSync(service);
  ASSERT_TRUE(WaitUntil([&] { return (*live)->synced(); }));
  ASSERT_TRUE(WaitUntil([&] { return FreeMilli(service) == 6000; }));
  EXPECT_EQ(service.Read([](const ClusterModel& model) {
    return model.FindNode("dgx-1")->FindPod("ml/a")->gpus.gpu_ids;
  }),
            (std::vector<int>{2, 3}));

  // The pending pod asks 2 GPUs through its template.
  Pod pending = DomainPod(server.Pod("ml/b"));
  ASSERT_NE((*live)->dra(), nullptr);
  (*live)->dra()->AttachTo(pending);
  EXPECT_EQ(EffectiveRequests(pending).Get(kNvidiaGpu), 2);

  // A claim allocated to nobody the model knows holds its GPU too.
  server.PutObject(kDraApiV1, "resourceclaims", Claim("c-gpus", {"gpu-7"}, ""));
  EXPECT_TRUE(WaitUntil([&] { return FreeMilli(service) == 5000; }));

  // The binding on a DRA node records the plan by device name.
  const std::vector<std::string> nodes = {"dgx-1"};
  service.Filter(pending, nodes);
  BindOutcome outcome = service.Bind({.pod_name = "b",
                                      .pod_namespace = "ml",
                                      .pod_uid = "uid-ml-b",
                                      .node = "dgx-1"});
  ASSERT_EQ(outcome.error, "");
  EXPECT_EQ(outcome.assignment.gpu_ids.size(), 2u);
  const Json annotations = server.Pod("ml/b")["metadata"]["annotations"];
  EXPECT_FALSE(annotations.contains("gpusched.io/gpu-ids"));
  EXPECT_EQ(annotations.value("gpusched.io/planned-gpus", ""),
            "gpu-" + std::to_string(outcome.assignment.gpu_ids[0]) + ",gpu-" +
                std::to_string(outcome.assignment.gpu_ids[1]));
  (*live)->Stop();
}

// What the queueing core hears of pods with claims.
class ClaimsRecorder : public SyncListener {
 public:
  void OnPodsListed(const std::vector<Pod>& pods,
                    const std::vector<std::string>&) override {
    for (const Pod& pod : pods) Note(pod);
  }
  void OnPod(WatchEventType, const Pod& pod) override { Note(pod); }
  void OnNode(WatchEventType, const Node&) override {}
  void OnNodesListed(const std::vector<std::string>&) override {}
  void OnRelisting(std::string_view) override {}
  void OnDraListed() override { dra_listed_ = true; }

  bool dra_listed() const { return dra_listed_; }
  std::optional<Pod> Last(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = pods_.find(key);
    if (it == pods_.end()) return std::nullopt;
    return it->second;
  }

 private:
  void Note(const Pod& pod) {
    std::lock_guard lock(mu_);
    pods_.insert_or_assign(pod.Key(), pod);
  }
  mutable std::mutex mu_;
  std::map<std::string, Pod> pods_;
  std::atomic<bool> dra_listed_{false};
};

// Issue K §1: a claim not known yet is waited for, and the pod is charged
// (and handed on again) the moment its template arrives, not at its own
// next event, which may never come.
TEST(LiveDraTest, APodWaitingForItsTemplateIsChargedWhenItArrives) {
  FakeApiServer server;
  server.ServeDra();
  server.AddNode(GpuNode("dgx-1", 0));
  server.PutObject(kDraApiV1, "resourceslices", DraGpuSlice("dgx-1", 8));
  server.PutObject(kDraApiV1, "deviceclasses", DraGpuClass());
  server.AddPod(ClaimPod("ml/b", "", ""));
  ClaimsRecorder recorder;
  auto live = CreateLiveBinder(
      {.kubeconfig = KubeconfigFor(server), .sync = {.listener = &recorder}});
  ASSERT_TRUE(live.ok()) << live.status();
  ExtenderService service(ServiceOptions{.bind_sink = (*live)->bind_sink()});
  (*live)->StartSync(service);
  ASSERT_TRUE(WaitUntil([&] { return recorder.dra_listed(); }));
  ASSERT_TRUE(WaitUntil([&] { return recorder.Last("ml/b").has_value(); }));
  EXPECT_EQ(recorder.Last("ml/b")->claim_hold.kind,
            ClaimHold::Kind::kClaimNotKnown);
  EXPECT_THAT(recorder.Last("ml/b")->claim_hold.reason,
              ::testing::HasSubstr("ResourceClaimTemplate ml/two-gpus"));

  server.PutObject(kDraApiV1, "resourceclaimtemplates", Template());
  ASSERT_TRUE(WaitUntil([&] {
    std::optional<Pod> pod = recorder.Last("ml/b");
    return pod && !pod->claim_hold.held() &&
           pod->claim_requests.Get(kNvidiaGpu) == 2;
  }));
  (*live)->Stop();
}

}  // namespace
}  // namespace gpusched::kube::testing
