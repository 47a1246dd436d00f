// gpusched as the provisioning-request admission check controller against
// the fake API server: a workload holding quota reserved gets its
// PodTemplate and ProvisioningRequest (Kueue's names); Provisioned admits
// it; Failed requeues it, deletes what was created and, after the backoff,
// asks again under the next attempt's name.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <variant>

#include "api/controller/provisioning_requests.h"
#include "tests/controller/admission_loop_fixture.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"
#include "tests/queueing/checked_policy.h"

namespace gpusched::kube::testing {
namespace {

using namespace std::chrono_literals;

constexpr char kApi[] = "autoscaling.x-k8s.io/v1";
constexpr char kRequests[] = "provisioningrequests";

class ProvisioningRequestControllerTest : public AdmissionLoopTest {
 protected:
  void SetUp() override {
    if (ServeRequests()) {
      server_.ServeResource(kApi, kRequests, true, "ProvisioningRequest");
    }
    if (ServeTemplates()) ServeTheTemplates();
    auto client = KubeClient::Create(server_.Config());
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    Start(TestPolicy());
    for (int i = 0; i < 2; ++i) {
      const std::string name = "g-" + std::to_string(i);
      server_.AddPod(GpuPod("team-a/" + name, 4));
      Pod pod = GangPod("team-a", "g", i, 4, 2);
      pod.scheduling_gates.push_back(kAdmissionGate);
      ReadPodAdmissionState(pod);
      loop_->PodUpserted(std::move(pod));
    }
    loop_->WaitIdle();
    SeedRequests();
    controller_ = std::make_unique<ProvisioningRequestController>(
        *client_, *loop_,
        ProvisioningRequestControllerOptions{.sync_period = 20ms});
    controller_->Start();
  }
  // False: the cluster has no ProvisioningRequest CRD.
  virtual bool ServeRequests() const { return true; }
  // False: PodTemplates are not served (every create of one fails).
  virtual bool ServeTemplates() const { return true; }
  void ServeTheTemplates() {
    server_.ServeResource("v1", "podtemplates", true, "PodTemplate");
  }
  // Requests in the cluster before the controller starts.
  virtual void SeedRequests() {}
  virtual Policy TestPolicy() const { return CheckedPolicy(); }
  void TearDown() override {
    controller_->Stop();
    AdmissionLoopTest::TearDown();
  }
  Json Request(const std::string& name) const {
    return server_.Object(kApi, kRequests, "team-a/" + name);
  }
  void SetCondition(const std::string& name, const std::string& type) {
    Json request = Request(name);
    request["status"]["conditions"] = {
        {{"type", type}, {"status", "True"}, {"message", "from the test"}}};
    server_.PutObject(kApi, kRequests, request);
  }
  bool Admitted() {
    loop_->WaitIdle();
    for (const QueueDecision& d : sink_.Take()) {
      if (std::holds_alternative<AdmitMember>(d)) return true;
    }
    return false;
  }

  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<ProvisioningRequestController> controller_;
};

TEST_F(ProvisioningRequestControllerTest, CreatesTheRequestAndItsTemplate) {
  ASSERT_TRUE(WaitUntil([&] { return !Request("g-prov-1").is_null(); }));
  const Json request = Request("g-prov-1");
  EXPECT_EQ(request["spec"]["provisioningClassName"],
            "check-capacity.autoscaling.x-k8s.io");
  EXPECT_EQ(request["metadata"]["labels"]["kueue.x-k8s.io/managed"], "true");
  ASSERT_EQ(request["spec"]["podSets"].size(), 1u);
  EXPECT_EQ(request["spec"]["podSets"][0]["count"], 2);
  EXPECT_EQ(request["spec"]["podSets"][0]["podTemplateRef"]["name"],
            "ppt-g-prov-1-main");
  const Json tmpl =
      server_.Object("v1", "podtemplates", "team-a/ppt-g-prov-1-main");
  ASSERT_FALSE(tmpl.is_null());
  EXPECT_EQ(tmpl["template"]["spec"]["containers"][0]["name"], "main");
  EXPECT_FALSE(Admitted());
}

TEST_F(ProvisioningRequestControllerTest, ProvisionedAdmitsTheWorkload) {
  ASSERT_TRUE(WaitUntil([&] { return !Request("g-prov-1").is_null(); }));
  SetCondition("g-prov-1", "Provisioned");
  EXPECT_TRUE(WaitUntil([&] { return Admitted(); }));
}

TEST_F(ProvisioningRequestControllerTest, FailedDeletesAndRetriesNextAttempt) {
  ASSERT_TRUE(WaitUntil([&] { return !Request("g-prov-1").is_null(); }));
  SetCondition("g-prov-1", "Failed");
  // The request, then its template.
  EXPECT_TRUE(WaitUntil([&] {
    return Request("g-prov-1").is_null() &&
           server_.Object("v1", "podtemplates", "team-a/ppt-g-prov-1-main")
               .is_null();
  }));
  now_ += 10'000;  // the config's backoff
  loop_->WaitIdle();
  EXPECT_TRUE(WaitUntil([&] { return !Request("g-prov-2").is_null(); }));
  EXPECT_FALSE(Admitted());
}

// Kueue's provReqSyncedWithConfig: a request whose config's class changed
// while its check is Pending is deleted and made again, same name.
TEST_F(ProvisioningRequestControllerTest, ChangedConfigMakesTheRequestAgain) {
  ASSERT_TRUE(WaitUntil([&] { return !Request("g-prov-1").is_null(); }));
  Policy policy = CheckedPolicy();
  policy.provisioning_request_configs[0].provisioning_class_name =
      "queued-provisioning.gke.io";
  loop_->PolicyChanged(policy);
  EXPECT_TRUE(WaitUntil([&] {
    return Request("g-prov-1")["spec"]["provisioningClassName"] ==
           "queued-provisioning.gke.io";
  }));
  EXPECT_EQ(server_.Count("DELETE provisioningrequests"), 1);
  EXPECT_FALSE(Admitted());
}

// A Ready check keeps its request whatever its config says now: the pods
// consume the capacity it provisioned.
TEST_F(ProvisioningRequestControllerTest, ReadyCheckKeepsItsRequest) {
  ASSERT_TRUE(WaitUntil([&] { return !Request("g-prov-1").is_null(); }));
  SetCondition("g-prov-1", "Provisioned");
  ASSERT_TRUE(WaitUntil([&] { return Admitted(); }));
  Policy policy = CheckedPolicy();
  policy.provisioning_request_configs[0].provisioning_class_name =
      "queued-provisioning.gke.io";
  loop_->PolicyChanged(policy);
  std::this_thread::sleep_for(300ms);  // fifteen sync periods
  EXPECT_EQ(server_.Count("DELETE provisioningrequests"), 0);
}

Json RequestObject(const std::string& ns, const std::string& name, Json spec) {
  return Json{{"apiVersion", kApi},
              {"kind", "ProvisioningRequest"},
              {"metadata", {{"namespace", ns}, {"name", name}}},
              {"spec", std::move(spec)}};
}

// A request of attempt 2 made before a restart: the engine, which kept
// the check's retry count in memory only, would ask for attempt 1. It
// takes the count from the request, as Kueue names the next attempt from
// the last request it finds, and goes on with that request.
class AfterRestartTest : public ProvisioningRequestControllerTest {
 protected:
  void SeedRequests() override {
    server_.PutObject(kApi, kRequests,
                      RequestObject("team-a", "g-prov-2",
                                    {{"provisioningClassName",
                                      "check-capacity.autoscaling.x-k8s.io"}}));
  }
};

TEST_F(AfterRestartTest, TheLastAttemptsRequestIsTheChecksRequest) {
  SetCondition("g-prov-2", "Provisioned");
  EXPECT_TRUE(WaitUntil([&] { return Admitted(); }));
  // Never made (nor made and deleted): the one create asked for g-prov-2,
  // which the API server answered with 409, as it exists.
  EXPECT_TRUE(Request("g-prov-1").is_null());
  EXPECT_EQ(server_.Count("DELETE provisioningrequests"), 0);
  EXPECT_LE(server_.Count("CREATE provisioningrequests"), 1);
}

// Requests are told apart by namespace: another namespace's request of a
// later attempt of a workload of the same name is not this one's.
class OtherNamespaceTest : public ProvisioningRequestControllerTest {
 protected:
  void SeedRequests() override {
    server_.PutObject(kApi, kRequests,
                      RequestObject("team-b", "g-prov-2", Json::object()));
  }
};

TEST_F(OtherNamespaceTest, ItsOwnFirstAttemptIsMade) {
  EXPECT_TRUE(WaitUntil([&] { return !Request("g-prov-1").is_null(); }));
}

class WithoutRequestsCrdTest : public ProvisioningRequestControllerTest {
 protected:
  bool ServeRequests() const override { return false; }
};

// No CRD: the list says so and nothing is created, not even the pod
// templates a request would name; the workload keeps its reservation.
TEST_F(WithoutRequestsCrdTest, NothingIsCreatedWhileRequestsAreNotServed) {
  std::this_thread::sleep_for(300ms);  // fifteen sync periods
  EXPECT_EQ(server_.Count("CREATE podtemplates"), 0);
  EXPECT_FALSE(Admitted());
}

class WithoutProvisioningChecksTest : public ProvisioningRequestControllerTest {
 protected:
  Policy TestPolicy() const override {
    Policy policy = CheckedPolicy();
    policy.admission_checks.clear();
    for (ClusterQueue& cq : policy.cluster_queues) cq.admission_checks.clear();
    return policy;
  }
};

// A policy without ProvisioningRequest checks watches no requests: a
// cluster without such checks needs no rules for them (deploy/manifests
// grants none, and a forbidden list would be retried for ever).
TEST_F(WithoutProvisioningChecksTest, RequestsAreNeverListed) {
  EXPECT_TRUE(Admitted());
  std::this_thread::sleep_for(300ms);  // fifteen sync periods
  EXPECT_EQ(server_.Count("LIST provisioningrequests"), 0);
  EXPECT_EQ(server_.Count("WATCH provisioningrequests"), 0);
}

class TemplatesRefusedTest : public ProvisioningRequestControllerTest {
 protected:
  bool ServeTemplates() const override { return false; }
  std::string CheckMessage() {
    loop_->WaitIdle();
    return loop_->ReadEngine([](const QueueingEngine& engine) {
      const Workload& w = engine.workloads().at("team-a/g");
      return w.checks.empty() ? std::string() : w.checks[0].message;
    });
  }
};

// Kueue's handleError: a create the API server refuses is the check's
// message, the check stays Pending, no request is made without its
// template, and once the templates can be made the request follows.
TEST_F(TemplatesRefusedTest, RefusedCreateIsTheChecksMessageUntilItWorks) {
  ASSERT_TRUE(WaitUntil([&] {
    return CheckMessage().starts_with(
        "Error creating PodTemplate \"ppt-g-prov-1-main\": ");
  })) << CheckMessage();
  EXPECT_EQ(server_.Count("CREATE provisioningrequests"), 0);
  EXPECT_FALSE(Admitted());
  ServeTheTemplates();
  EXPECT_TRUE(WaitUntil([&] { return !Request("g-prov-1").is_null(); }));
}

}  // namespace
}  // namespace gpusched::kube::testing
