// Kueue's objects read from the API server as gpusched's policy
// (KueueObjects) and the check that no Kueue manager is active
// (KueueGuard), against the fake API server through the real client.
#include "api/kube/kueue_objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "api/kube/kueue_guard.h"
#include "policies/policy_loader.h"
#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kKueue[] = "kueue.x-k8s.io/v1beta2";

// A ClusterQueue as Kueue's API server returns it: the CRD's defaults
// written in, a status, managed fields.
Json ServedClusterQueue(const std::string& name, int gpus) {
  return Json{
      {"kind", "ClusterQueue"},
      {"metadata",
       {{"name", name},
        {"generation", 1},
        {"managedFields", Json::array({{{"manager", "kubectl"}}})}}},
      {"spec",
       {{"namespaceSelector", Json::object()},
        {"queueingStrategy", "BestEffortFIFO"},
        {"stopPolicy", "None"},
        {"preemption",
         {{"withinClusterQueue", "Never"},
          {"reclaimWithinCohort", "Never"},
          {"borrowWithinCohort", {{"policy", "Never"}}}}},
        {"resourceGroups",
         {{{"coveredResources", {"nvidia.com/gpu"}},
           {"flavors",
            {{{"name", "h100"},
              {"resources",
               {{{"name", "nvidia.com/gpu"}, {"nominalQuota", gpus}}}}}}}}}}}},
      {"status", {{"pendingWorkloads", 3}}}};
}

Json Flavor(const std::string& name) {
  return Json{{"kind", "ResourceFlavor"},
              {"metadata", {{"name", name}}},
              {"spec", {{"nodeLabels", {{"gpu", name}}}}}};
}

Json ServedLocalQueue(const std::string& ns, const std::string& name,
                      const std::string& cluster_queue) {
  return Json{{"kind", "LocalQueue"},
              {"metadata", {{"namespace", ns}, {"name", name}}},
              {"spec",
               {{"clusterQueue", cluster_queue},
                {"stopPolicy", "None"},
                {"fairSharing", {{"weight", 1}}}}}};
}

class KueueObjectsTest : public ::testing::Test {
 protected:
  void Serve() {
    server_.ServeResource(kKueue, "resourceflavors", false, "ResourceFlavor");
    server_.ServeResource(kKueue, "clusterqueues", false, "ClusterQueue");
    server_.ServeResource(kKueue, "localqueues", true, "LocalQueue");
    server_.ServeResource(kKueue, "cohorts", false, "Cohort");
    server_.ServeResource(kKueue, "workloadpriorityclasses", false,
                          "WorkloadPriorityClass");
    server_.ServeResource(kKueue, "topologies", false, "Topology");
  }
  void Start() {
    client_ = *KubeClient::Create(server_.Config());
    objects_ = std::make_unique<KueueObjects>(
        *client_, KueueObjectsOptions{.initial_backoff = 10ms,
                                      .max_backoff = 100ms,
                                      .absent_poll = 200ms,
                                      .on_change = [this] { ++changes_; }});
    objects_->Start();
    ASSERT_TRUE(objects_->WaitListed(5s));
  }
  // The policy the objects make now.
  PolicyResult Policy() {
    std::optional<KueueObjectsSnapshot> snapshot = objects_->SnapshotIfNewer(0);
    return ParsePolicyTexts(snapshot ? snapshot->documents
                                     : std::vector<PolicyText>{});
  }
  void TearDown() override {
    if (objects_) objects_->Stop();
  }

  FakeApiServer server_;
  std::atomic<int> changes_{0};
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<KueueObjects> objects_;
};

TEST_F(KueueObjectsTest, ObjectsAsTheApiServerServesThemLoadAsAPolicy) {
  Serve();
  server_.PutObject(kKueue, "resourceflavors", Flavor("h100"));
  server_.PutObject(kKueue, "clusterqueues", ServedClusterQueue("team-a", 8));
  server_.PutObject(kKueue, "localqueues",
                    ServedLocalQueue("ml", "main", "team-a"));
  Start();
  PolicyResult result = Policy();
  ASSERT_TRUE(result.ok()) << result.errors.front().message;
  ASSERT_EQ(result.policy->cluster_queues.size(), 1u);
  EXPECT_EQ(result.policy->cluster_queues[0].name, "team-a");
  ASSERT_EQ(result.policy->local_queues.size(), 1u);
  EXPECT_EQ(result.policy->local_queues[0].namespace_name, "ml");
  EXPECT_EQ(result.policy->local_queues[0].cluster_queue, "team-a");
}

TEST_F(KueueObjectsTest, AnInvalidObjectIsNamedByResourceAndName) {
  Serve();
  server_.PutObject(kKueue, "resourceflavors", Flavor("h100"));
  Json queue = ServedClusterQueue("team-a", 8);
  queue["spec"]["queueingStrategy"] = "Random";
  server_.PutObject(kKueue, "clusterqueues", queue);
  Start();
  PolicyResult result = Policy();
  ASSERT_FALSE(result.ok());
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_THAT(result.errors[0].message, HasSubstr("clusterqueues/team-a:"));
  EXPECT_THAT(result.errors[0].message,
              HasSubstr("spec.queueingStrategy: Unsupported value \"Random\""));
}

Json Check(const std::string& name, const std::string& controller) {
  return Json{{"kind", "AdmissionCheck"},
              {"metadata", {{"name", name}}},
              {"spec",
               {{"controllerName", controller},
                {"parameters",
                 {{"apiGroup", "kueue.x-k8s.io"},
                  {"kind", "ProvisioningRequestConfig"},
                  {"name", "prc"}}}}},
              {"status",
               {{"conditions",
                 Json::array({{{"type", "Active"}, {"status", "True"}}})}}}};
}

// A queue behind a check no controller would mark once Kueue is gone (a
// MultiKueue one) is left out, inactive, as Kueue keeps it; a queue
// behind a ProvisioningRequest check loads with it.
TEST_F(KueueObjectsTest, QueueBehindAnUnservedCheckIsSetAside) {
  Serve();
  server_.ServeResource(kKueue, "admissionchecks", false, "AdmissionCheck");
  server_.ServeResource(kKueue, "provisioningrequestconfigs", false,
                        "ProvisioningRequestConfig");
  server_.PutObject(kKueue, "resourceflavors", Flavor("h100"));
  server_.PutObject(
      kKueue, "provisioningrequestconfigs",
      Json{{"kind", "ProvisioningRequestConfig"},
           {"metadata", {{"name", "prc"}}},
           {"spec",
            {{"provisioningClassName", "check-capacity.autoscaling.x-k8s.io"},
             {"retryStrategy",
              {{"backoffLimitCount", 3},
               {"backoffBaseSeconds", 60},
               {"backoffMaxSeconds", 1800}}}}}});
  server_.PutObject(kKueue, "admissionchecks",
                    Check("prov", "kueue.x-k8s.io/provisioning-request"));
  server_.PutObject(kKueue, "admissionchecks",
                    Check("mk", "kueue.x-k8s.io/multikueue"));
  for (auto [queue, check] :
       {std::pair{"team-a", "prov"}, std::pair{"team-b", "mk"}}) {
    Json cq = ServedClusterQueue(queue, 8);
    cq["spec"]["admissionChecksStrategy"] = {
        {"admissionChecks", Json::array({{{"name", check}}})}};
    server_.PutObject(kKueue, "clusterqueues", cq);
  }
  Start();
  std::optional<KueueObjectsSnapshot> snapshot = objects_->SnapshotIfNewer(0);
  ASSERT_TRUE(snapshot.has_value());
  PolicyResult result = ParsePolicyTextsSettingAside(snapshot->documents, {});
  ASSERT_TRUE(result.ok()) << result.errors.front().message;
  ASSERT_EQ(result.policy->cluster_queues.size(), 1u);
  EXPECT_EQ(result.policy->cluster_queues[0].name, "team-a");
  EXPECT_EQ(result.policy->cluster_queues[0].admission_checks[0].name, "prov");
  ASSERT_EQ(result.set_aside.size(), 2u);
  EXPECT_EQ(result.set_aside[0].name, "admissionchecks/mk");
  EXPECT_THAT(result.set_aside[0].message,
              HasSubstr("Unsupported value \"kueue.x-k8s.io/multikueue\""));
  EXPECT_EQ(result.set_aside[1].name, "clusterqueues/team-b");
  EXPECT_THAT(result.set_aside[1].message, HasSubstr("Not found \"mk\""));
}

TEST_F(KueueObjectsTest, AStatusWriteIsNoChangeButASpecEditIs) {
  Serve();
  server_.PutObject(kKueue, "resourceflavors", Flavor("h100"));
  server_.PutObject(kKueue, "clusterqueues", ServedClusterQueue("team-a", 8));
  Start();
  const uint64_t first = objects_->SnapshotIfNewer(0)->version;
  Json queue = ServedClusterQueue("team-a", 8);
  queue["status"]["pendingWorkloads"] = 7;  // a status write
  server_.PutObject(kKueue, "clusterqueues", queue);
  queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]
       ["nominalQuota"] = 16;
  server_.PutObject(kKueue, "clusterqueues", queue);
  ASSERT_TRUE(WaitUntil([&] {
    auto snapshot = objects_->SnapshotIfNewer(first);
    return snapshot &&
           snapshot->documents[1].text.find("16") != std::string::npos;
  }));
  // The status write bumped nothing: one change after the list.
  EXPECT_EQ(objects_->SnapshotIfNewer(first)->version, first + 1);
}

TEST_F(KueueObjectsTest, ADeletedObjectLeavesThePolicy) {
  Serve();
  server_.PutObject(kKueue, "resourceflavors", Flavor("h100"));
  server_.PutObject(kKueue, "clusterqueues", ServedClusterQueue("team-a", 8));
  server_.PutObject(kKueue, "clusterqueues", ServedClusterQueue("team-b", 8));
  Start();
  server_.DeleteObject(kKueue, "clusterqueues", "team-b");
  ASSERT_TRUE(WaitUntil([&] {
    PolicyResult result = Policy();
    return result.ok() && result.policy->cluster_queues.size() == 1;
  }));
  EXPECT_EQ(Policy().policy->cluster_queues[0].name, "team-a");
}

// Admission Fair Sharing's usage survives a restart in LocalQueue status:
// read back, in Kueue's units, though the documents leave status out.
TEST_F(KueueObjectsTest, LocalQueueAdmissionFairSharingStatusIsReadBack) {
  Serve();
  Json queue = ServedLocalQueue("ml", "main", "team-a");
  queue["status"]["fairSharing"] = {
      {"weightedShare", 0},
      {"admissionFairSharingStatus",
       {{"consumedResources", {{"nvidia.com/gpu", "2500m"}, {"cpu", "4"}}},
        {"lastUpdate", "2027-01-15T08:01:00Z"}}}};
  server_.PutObject(kKueue, "localqueues", queue);
  server_.PutObject(kKueue, "localqueues",
                    ServedLocalQueue("ml", "fresh", "team-a"));
  Start();
  const std::map<std::string, AfsConsumed> usages = objects_->AfsUsages();
  ASSERT_EQ(usages.size(), 1u);
  EXPECT_EQ(usages.at("ml/main").at("nvidia.com/gpu"), 2.5);
  EXPECT_EQ(usages.at("ml/main").at("cpu"), 4.0);
  EXPECT_EQ(objects_->SnapshotIfNewer(0)->documents[0].text.find("status"),
            std::string::npos);
}

TEST_F(KueueObjectsTest, AClusterWithoutKueuesCrdsIsListedEmpty) {
  Start();  // nothing served: every kind is a 404
  PolicyResult result = Policy();
  ASSERT_TRUE(result.ok());
  EXPECT_TRUE(result.policy->cluster_queues.empty());
}

TEST_F(KueueObjectsTest, DocumentsComeFlavorsFirstAndAreNamedForErrors) {
  Serve();
  server_.PutObject(kKueue, "clusterqueues", ServedClusterQueue("team-a", 8));
  server_.PutObject(kKueue, "resourceflavors", Flavor("h100"));
  server_.PutObject(kKueue, "localqueues",
                    ServedLocalQueue("ml", "main", "team-a"));
  Start();
  std::vector<std::string> names;
  const std::optional<KueueObjectsSnapshot> snapshot =
      objects_->SnapshotIfNewer(0);
  ASSERT_TRUE(snapshot.has_value());
  for (const PolicyText& text : snapshot->documents) {
    names.push_back(text.name);
  }
  EXPECT_THAT(names, ElementsAre("resourceflavors/h100", "clusterqueues/team-a",
                                 "localqueues/ml/main"));
}

// A Topology is handed out before the flavors, so a flavor's topologyName
// resolves, and the flavor places gangs by the Topology's levels.
TEST_F(KueueObjectsTest, TopologiesComeFirstAndGiveTheirFlavorsLevels) {
  Serve();
  Json flavor = Flavor("h100");
  flavor["spec"]["topologyName"] = "dc";
  server_.PutObject(kKueue, "resourceflavors", flavor);
  server_.PutObject(
      kKueue, "topologies",
      Json{{"kind", "Topology"},
           {"metadata", {{"name", "dc"}}},
           {"spec",
            {{"levels",
              Json::array({{{"nodeLabel", "gpusched.io/rack"}},
                           {{"nodeLabel", "kubernetes.io/hostname"}}})}}}});
  Start();
  const std::optional<KueueObjectsSnapshot> snapshot =
      objects_->SnapshotIfNewer(0);
  ASSERT_TRUE(snapshot.has_value());
  std::vector<std::string> names;
  for (const PolicyText& text : snapshot->documents) {
    names.push_back(text.name);
  }
  EXPECT_THAT(names, ElementsAre("topologies/dc", "resourceflavors/h100"));
  const PolicyResult result = Policy();
  ASSERT_TRUE(result.ok()) << result.errors.at(0).message;
  EXPECT_THAT(TopologyLevelsOf(*result.policy, &result.policy->flavors[0]),
              ElementsAre("gpusched.io/rack", "kubernetes.io/hostname"));
}

// --- KueueGuard ---

constexpr char kLeases[] = "coordination.k8s.io/v1";
constexpr char kWebhooks[] = "admissionregistration.k8s.io/v1";

Json KueueLease(const std::string& holder, absl::Time renewed) {
  return Json{
      {"kind", "Lease"},
      {"metadata",
       {{"namespace", "kueue-system"}, {"name", "c1f6bfd2.kueue.x-k8s.io"}}},
      {"spec",
       {{"holderIdentity", holder},
        {"leaseDurationSeconds", 15},
        {"renewTime", absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", renewed,
                                       absl::UTCTimeZone())}}}};
}

Json WebhookConfiguration(const std::string& name, const std::string& group) {
  return Json{{"kind", "MutatingWebhookConfiguration"},
              {"metadata", {{"name", name}}},
              {"webhooks",
               {{{"name", "m.example.io"},
                 {"rules",
                  {{{"apiGroups", {group}},
                    {"apiVersions", {"v1beta2"}},
                    {"operations", {"CREATE"}},
                    {"resources", {"clusterqueues"}}}}}}}}};
}

class KueueGuardTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.ServeResource(kLeases, "leases", true, "Lease");
    server_.ServeResource(kWebhooks, "mutatingwebhookconfigurations", false,
                          "MutatingWebhookConfiguration");
    server_.ServeResource(kWebhooks, "validatingwebhookconfigurations", false,
                          "ValidatingWebhookConfiguration");
    client_ = *KubeClient::Create(server_.Config());
    guard_ = std::make_unique<KueueGuard>(
        *client_, KueueGuardOptions{.now = [this] { return now_; }});
  }
  KueuePresence Check() {
    absl::StatusOr<KueuePresence> presence = guard_->CheckOnce();
    EXPECT_TRUE(presence.ok()) << presence.status();
    return presence.value_or(KueuePresence{});
  }

  FakeApiServer server_;
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<KueueGuard> guard_;
};

TEST_F(KueueGuardTest, NoLeaseAndNoWebhooksIsNoKueue) {
  EXPECT_EQ(Check(), (KueuePresence{.active = false}));
}

TEST_F(KueueGuardTest, AHeldLeaseIsAnActiveManagerUntilItExpires) {
  server_.PutObject(kLeases, "leases",
                    KueueLease("kueue-controller-manager-7c9_1a2b", now_));
  KueuePresence held = Check();
  EXPECT_TRUE(held.active);
  EXPECT_THAT(held.why, HasSubstr("kueue-system/c1f6bfd2.kueue.x-k8s.io is "
                                  "held by kueue-controller-manager-7c9_1a2b"));
  now_ += absl::Seconds(16);  // leaseDurationSeconds 15, not renewed
  EXPECT_FALSE(Check().active);
}

TEST_F(KueueGuardTest, AReleasedLeaseIsNoManager) {
  server_.PutObject(kLeases, "leases", KueueLease("", now_));
  EXPECT_FALSE(Check().active);
}

TEST_F(KueueGuardTest, KueuesWebhooksAloneMeanActive) {
  server_.PutObject(kWebhooks, "mutatingwebhookconfigurations",
                    WebhookConfiguration("kueue-mutating-webhook-configuration",
                                         "kueue.x-k8s.io"));
  KueuePresence presence = Check();
  EXPECT_TRUE(presence.active);
  EXPECT_THAT(presence.why,
              HasSubstr("(kueue-mutating-webhook-configuration)"));
}

TEST_F(KueueGuardTest, OtherWebhooksAndWildcardRulesAreNotKueue) {
  server_.PutObject(kWebhooks, "mutatingwebhookconfigurations",
                    WebhookConfiguration("gpusched", ""));
  server_.PutObject(kWebhooks, "mutatingwebhookconfigurations",
                    WebhookConfiguration("gatekeeper", "*"));
  EXPECT_FALSE(Check().active);
}

TEST_F(KueueGuardTest, ARoleThatMayNotReadCannotTellAndDecides) {
  server_.ForbidResource("mutatingwebhookconfigurations");
  server_.ForbidResource("leases");
  EXPECT_FALSE(Check().active);
}

TEST_F(KueueGuardTest, ThreadReportsEachChangeOnce) {
  std::atomic<int> changes{0};
  std::atomic<bool> active{true};
  guard_ = std::make_unique<KueueGuard>(
      *client_,
      KueueGuardOptions{.period = 20ms,
                        .on_change = [&](const KueuePresence& presence) {
                          active = presence.active;
                          ++changes;
                        }});
  guard_->Start();
  ASSERT_TRUE(WaitUntil([&] { return changes == 1; }));
  EXPECT_FALSE(active);
  server_.PutObject(
      kWebhooks, "validatingwebhookconfigurations",
      WebhookConfiguration("kueue-validating-webhook-configuration",
                           "kueue.x-k8s.io"));
  ASSERT_TRUE(WaitUntil([&] { return changes == 2; }));
  EXPECT_TRUE(active);
  std::this_thread::sleep_for(100ms);  // several checks, nothing new
  EXPECT_EQ(changes, 2);
  guard_->Stop();
}

}  // namespace
}  // namespace gpusched::kube::testing
