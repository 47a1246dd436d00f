// The visibility API's documents, byte for byte.
#include "api/codec/visibility_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <vector>

namespace gpusched {
namespace {

using Json = nlohmann::json;

// 2026-11-27T21:00:00Z
constexpr int64_t kCreatedMs = 1795813200000;

PendingWorkload Workload(std::string name, size_t in_cq, size_t in_lq) {
  return PendingWorkload{.key = "team-a/" + name,
                         .namespace_name = "team-a",
                         .name = std::move(name),
                         .local_queue = "lq-a",
                         .cluster_queue = "cq",
                         .priority = 5,
                         .created_ms = kCreatedMs,
                         .position_in_cluster_queue = in_cq,
                         .position_in_local_queue = in_lq,
                         .code = ReasonCode::kWaitingForQuota};
}

TEST(VisibilityJsonTest, SummaryHasKueueFieldsAndTheReasonCode) {
  const PendingWorkload a = Workload("ring", 0, 0);
  const PendingWorkload b = Workload("solo", 2, 1);
  const std::vector<const PendingWorkload*> page = {&a, &b};
  EXPECT_EQ(
      EncodePendingWorkloadsSummary(page),
      R"({"kind":"PendingWorkloadsSummary","apiVersion":)"
      R"("visibility.gpusched.io/v1alpha1","metadata":{},"items":[)"
      R"({"metadata":{"name":"ring","namespace":"team-a","creationTimestamp":)"
      R"("2026-11-27T21:00:00Z"},"priority":5,"localQueueName":"lq-a",)"
      R"("positionInClusterQueue":0,"positionInLocalQueue":0,)"
      R"("reasonCode":"WaitingForQuota"},)"
      R"({"metadata":{"name":"solo","namespace":"team-a","creationTimestamp":)"
      R"("2026-11-27T21:00:00Z"},"priority":5,"localQueueName":"lq-a",)"
      R"("positionInClusterQueue":2,"positionInLocalQueue":1,)"
      R"("reasonCode":"WaitingForQuota"}]})");
}

TEST(VisibilityJsonTest, AnEmptyPageHasAnEmptyItemList) {
  EXPECT_EQ(EncodePendingWorkloadsSummary({}),
            R"({"kind":"PendingWorkloadsSummary","apiVersion":)"
            R"("visibility.gpusched.io/v1alpha1","metadata":{},"items":[]})");
}

TEST(VisibilityJsonTest, QueueObjectCarriesItsSummary) {
  const PendingWorkload a = Workload("ring", 0, 0);
  const std::vector<const PendingWorkload*> page = {&a};
  Json queue = Json::parse(EncodeVisibilityQueue(
      {.kind = "LocalQueue", .namespace_name = "team-a", .name = "lq-a"},
      page));
  EXPECT_EQ(queue["kind"], "LocalQueue");
  EXPECT_EQ(queue["metadata"],
            Json({{"name", "lq-a"}, {"namespace", "team-a"}}));
  EXPECT_EQ(queue["pendingWorkloadsSummary"]["items"][0]["metadata"]["name"],
            "ring");
  Json cluster = Json::parse(
      EncodeVisibilityQueue({.kind = "ClusterQueue", .name = "cq"}, {}));
  EXPECT_FALSE(cluster["metadata"].contains("namespace"));
}

TEST(VisibilityJsonTest, TableRowsHoldTheColumnsInOrder) {
  const PendingWorkload a = Workload("ring", 3, 1);
  const std::vector<const PendingWorkload*> page = {&a};
  // Created 200 s before now: kubectl prints 3m20s.
  Json table =
      Json::parse(EncodePendingWorkloadsTable(page, kCreatedMs + 200'000));
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  std::vector<std::string> names;
  for (const Json& c : table["columnDefinitions"]) names.push_back(c["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "Name", "Namespace", "Position in CQ", "Position in LQ",
                       "Priority", "Reason", "Expected Start", "Age"}));
  EXPECT_EQ(
      table["rows"][0]["cells"],
      Json::parse(R"(["ring","team-a",3,1,5,"WaitingForQuota","","3m20s"])"));
  EXPECT_EQ(table["rows"][0]["object"]["metadata"]["namespace"], "team-a");
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

TEST(VisibilityJsonTest, ForecastStartsGoOnItemsAndTableRows) {
  const PendingWorkload a = Workload("ring", 0, 0);
  const PendingWorkload b = Workload("wide", 1, 1);
  const std::vector<const PendingWorkload*> page = {&a, &b};
  StartForecast forecast{.made_at_ms = kCreatedMs};
  forecast.starts["team-a/ring"] = {.expected_start_ms = kCreatedMs + 720'000,
                                    .latest_start_ms = kCreatedMs + 900'000};
  forecast.starts["team-a/wide"] = {.why_unknown = "it waits on x"};
  Json items =
      Json::parse(EncodePendingWorkloadsSummary(page, &forecast))["items"];
  EXPECT_EQ(items[0]["expectedStart"], "2026-11-27T21:12:00Z");
  EXPECT_EQ(items[0]["latestStart"], "2026-11-27T21:15:00Z");
  EXPECT_FALSE(items[0].contains("startUnknownReason"));
  EXPECT_FALSE(items[1].contains("expectedStart"));
  EXPECT_EQ(items[1]["startUnknownReason"], "it waits on x");
  Json rows = Json::parse(
      EncodePendingWorkloadsTable(page, kCreatedMs, &forecast))["rows"];
  EXPECT_EQ(rows[0]["cells"][6], "in 12m");
  EXPECT_EQ(rows[1]["cells"][6], "unknown");
  EXPECT_EQ(HumanStart({.expected_start_ms = kCreatedMs}, kCreatedMs + 1),
            "now");
}

TEST(VisibilityJsonTest, AgesReadAsKubectlPrintsThem) {
  const struct {
    int64_t seconds;
    const char* want;
  } cases[] = {{-5, "0s"},
               {0, "0s"},
               {119, "119s"},
               {120, "2m"},
               {200, "3m20s"},
               {600, "10m"},
               {3 * 3600 - 1, "179m"},
               {3 * 3600, "3h"},
               {5 * 3600 + 60, "5h1m"},
               {30 * 3600, "30h"},
               {3 * 86400 + 3600 * 4, "3d4h"},
               {400 * 86400, "400d"},
               {(730 + 10) * 86400, "2y10d"},
               {9 * 365 * 86400LL, "9y"}};
  for (const auto& c : cases) {
    EXPECT_EQ(HumanAge(c.seconds * 1000), c.want) << c.seconds;
  }
}

TEST(VisibilityJsonTest, DiscoveryNamesTheGroupVersionAndResources) {
  EXPECT_EQ(EncodeVisibilityGroup(),
            R"({"kind":"APIGroup","apiVersion":"v1","name":)"
            R"("visibility.gpusched.io","versions":[{"groupVersion":)"
            R"("visibility.gpusched.io/v1alpha1","version":"v1alpha1"}],)"
            R"("preferredVersion":{"groupVersion":)"
            R"("visibility.gpusched.io/v1alpha1","version":"v1alpha1"}})");
  Json list = Json::parse(EncodeVisibilityGroupList());
  EXPECT_EQ(list["groups"][0]["name"], "visibility.gpusched.io");
  Json resources = Json::parse(EncodeVisibilityResourceList());
  EXPECT_EQ(resources["groupVersion"], "visibility.gpusched.io/v1alpha1");
  ASSERT_EQ(resources["resources"].size(), 9u);
  EXPECT_EQ(resources["resources"][0]["verbs"],
            Json::parse(R"(["get","list"])"));
  EXPECT_EQ(resources["resources"][6]["name"], "workloads/explain");
  EXPECT_EQ(
      resources["resources"][4],
      Json::parse(R"({"name":"localqueues/pendingworkloads",)"
                  R"("singularName":"","namespaced":true,)"
                  R"("kind":"PendingWorkloadsSummary","verbs":["get"]})"));
  EXPECT_EQ(resources["resources"][0]["namespaced"], false);
  EXPECT_EQ(resources["resources"][7]["name"], "gpunodes");
  EXPECT_EQ(resources["resources"][8]["namespaced"], true);
}

TEST(VisibilityJsonTest, FailureStatusIsAKubernetesStatus) {
  EXPECT_EQ(EncodeFailureStatus(404, "NotFound", R"(queue "x" not found)"),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
            R"("status":"Failure","message":"queue \"x\" not found",)"
            R"("reason":"NotFound","code":404})");
}

}  // namespace
}  // namespace gpusched
