// The visibility API's queue status, lists and explanation documents.
#include "api/codec/visibility_status_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpusched {
namespace {

using Json = nlohmann::json;

ClusterQueueView TeamA() {
  return {.name = "team-a",
          .cohort = "research",
          .quota = {{.fr = {"a100", "nvidia.com/gpu"}, .nominal = 8, .used = 2},
                    {.fr = {"h100", "cpu"}, .nominal = 64000, .used = 1000},
                    {.fr = {"h100", "nvidia.com/gpu"},
                     .nominal = 16,
                     .used = 20,
                     .borrowed = 4,
                     .borrowing_limit = 8}},
          .pending = {PendingWorkload{.key = "team-a/x"}},
          .admitted = {AdmittedWorkload{.key = "team-a/y"},
                       AdmittedWorkload{.key = "team-a/z"}}};
}

TEST(VisibilityStatusJsonTest, ClusterQueueStatusGroupsUsageByFlavor) {
  Json status = Json::parse(EncodeClusterQueueStatus(TeamA()));
  EXPECT_EQ(status, Json::parse(R"({
    "cohort": "research", "pendingWorkloads": 1, "admittedWorkloads": 2,
    "flavorsUsage": [
      {"name": "a100", "resources": [
        {"name": "nvidia.com/gpu", "nominal": 8, "used": 2, "borrowed": 0,
         "lent": 0}]},
      {"name": "h100", "resources": [
        {"name": "cpu", "nominal": 64000, "used": 1000, "borrowed": 0,
         "lent": 0},
        {"name": "nvidia.com/gpu", "nominal": 16, "used": 20, "borrowed": 4,
         "lent": 0, "borrowingLimit": 8}]}]})"));
  ClusterQueueView empty{.name = "idle"};
  EXPECT_EQ(Json::parse(EncodeClusterQueueStatus(empty))["flavorsUsage"],
            Json::array());
}

TEST(VisibilityStatusJsonTest, ListsCarryKindsAndStatuses) {
  Json queues = Json::parse(EncodeClusterQueueList({TeamA()}));
  EXPECT_EQ(queues["kind"], "ClusterQueueList");
  EXPECT_EQ(queues["apiVersion"], "visibility.gpusched.io/v1alpha1");
  EXPECT_EQ(queues["items"][0]["kind"], "ClusterQueue");
  EXPECT_EQ(queues["items"][0]["metadata"]["name"], "team-a");
  EXPECT_EQ(queues["items"][0]["status"]["admittedWorkloads"], 2);

  Json cohorts = Json::parse(EncodeCohortList(
      {{.name = "research",
        .parent = "org",
        .quota = {{.fr = {"h100", "nvidia.com/gpu"}, .nominal = 32}}}}));
  EXPECT_EQ(cohorts["kind"], "CohortList");
  EXPECT_EQ(cohorts["items"][0]["status"]["parent"], "org");
  EXPECT_EQ(cohorts["items"][0]["status"]["flavorsUsage"][0]["resources"][0]
                   ["nominal"],
            32);

  const LocalQueueView lq{.namespace_name = "team-a",
                          .name = "lq",
                          .cluster_queue = "team-a",
                          .pending = 3,
                          .admitted = 1};
  Json locals = Json::parse(EncodeLocalQueueList({&lq}));
  EXPECT_EQ(locals["kind"], "LocalQueueList");
  EXPECT_EQ(locals["items"][0]["metadata"]["namespace"], "team-a");
  EXPECT_EQ(locals["items"][0]["status"],
            Json::parse(R"({"clusterQueue":"team-a","pendingWorkloads":3,)"
                        R"("admittedWorkloads":1})"));
}

TEST(VisibilityStatusJsonTest, ExplanationCarriesArithmeticStartAndAhead) {
  ExplainAnswer answer{
      .name = "ring",
      .explanation = {.key = "team-a/ring",
                      .namespace_name = "team-a",
                      .local_queue = "lq",
                      .cluster_queue = "team-a",
                      .cohort = "research",
                      .position_in_cluster_queue = 2,
                      .pending_in_cluster_queue = 3,
                      .code = ReasonCode::kWaitingForQuota,
                      .message = "queue team-a: needs 8",
                      .members = 2,
                      .min_member = 2,
                      .quota = {{.node = "team-a",
                                 .fr = {"h100", "nvidia.com/gpu"},
                                 .nominal = 16,
                                 .used = 12,
                                 .available = 4,
                                 .most_ever = 16,
                                 .asks = 8}},
                      .placement = {{.verdict = "fits",
                                     .nodes = 5,
                                     .examples = {"dgx-0", "dgx-1"}}},
                      .preemption = "may preempt lower priority"},
      .start = ForecastStart{.expected_start_ms = 1795813920000},
      .forecast_at_ms = 1795813200000,
      .ahead = {{.namespace_name = "team-a",
                 .name = "first",
                 .position_in_cluster_queue = 0,
                 .code = ReasonCode::kWaitingForQuota,
                 .expected_start_ms = 1795813500000},
                {.position_in_cluster_queue = 1,
                 .code = ReasonCode::kWaitingForQuota}}};
  Json e = Json::parse(EncodeWorkloadExplanation(answer));
  EXPECT_EQ(e["kind"], "WorkloadExplanation");
  EXPECT_EQ(e["metadata"]["name"], "ring");
  EXPECT_EQ(e["state"], "Pending");
  EXPECT_EQ(e["positionInClusterQueue"], 2);
  EXPECT_EQ(e["pendingInClusterQueue"], 3);
  EXPECT_EQ(e["reasonCode"], "WaitingForQuota");
  EXPECT_EQ(e["quota"][0]["available"], 4);
  EXPECT_EQ(e["quota"][0]["asks"], 8);
  EXPECT_FALSE(e["quota"][0].contains("borrowingLimit"));
  EXPECT_EQ(e["placement"][0]["examples"][1], "dgx-1");
  EXPECT_EQ(e["start"], Json::parse(R"({"forecastAt":"2026-11-27T21:00:00Z",)"
                                    R"("expected":"2026-11-27T21:12:00Z"})"));
  EXPECT_EQ(e["ahead"][0]["name"], "first");
  EXPECT_EQ(e["ahead"][0]["expectedStart"], "2026-11-27T21:05:00Z");
  // Another namespace's workload ahead: counted, not named.
  EXPECT_FALSE(e["ahead"][1].contains("name"));
  EXPECT_FALSE(e["ahead"][1].contains("namespace"));
  answer.start.reset();
  EXPECT_FALSE(
      Json::parse(EncodeWorkloadExplanation(answer)).contains("start"));
  EXPECT_FALSE(Json::parse(EncodeWorkloadExplanation(answer))
                   .contains("preemptionDryRun"));

  // The dry run names victims of the workload's own namespace only.
  answer.explanation.preemption_preview = PreemptionPreview{
      .verdict = PreemptionPreview::Verdict::kWouldEvict,
      .victims = {{.key = "team-a/old",
                   .namespace_name = "team-a",
                   .cluster_queue = "team-a",
                   .priority = 1,
                   .reason = "InClusterQueue: preempted by team-a/ring"},
                  {.key = "team-b/secret",
                   .namespace_name = "team-b",
                   .cluster_queue = "team-b",
                   .reason = "InCohortReclamation: preempted by team-a/ring"}}};
  const std::string text = EncodeWorkloadExplanation(answer);
  EXPECT_EQ(text.find("secret"), std::string::npos) << text;
  e = Json::parse(text);
  EXPECT_EQ(e["preemptionDryRun"]["verdict"], "WouldEvict");
  EXPECT_EQ(e["preemptionDryRun"]["summary"],
            "yes: evicting 2 workloads admits it: team-a/old (priority 1), "
            "1 of another namespace (ClusterQueue team-b)");
  EXPECT_EQ(e["preemptionDryRun"]["victims"][0]["name"], "old");
  EXPECT_FALSE(e["preemptionDryRun"]["victims"][1].contains("name"));
  EXPECT_EQ(e["preemptionDryRun"]["victims"][1]["clusterQueue"], "team-b");
}

}  // namespace
}  // namespace gpusched
