// What the kubectl plugin reads of the visibility API's answers
// (visibility_decode.h): the fields it prints, optional ones left unset,
// and errors naming the field.
#include "api/codec/visibility_decode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(VisibilityDecodeTest, PendingItemsWithAndWithoutAForecast) {
  absl::StatusOr<std::vector<PendingItem>> items = DecodePendingWorkloads(R"({
    "kind": "PendingWorkloadsSummary",
    "items": [
      {"metadata": {"name": "a", "namespace": "ns",
                    "creationTimestamp": "1970-01-01T00:01:40Z"},
       "priority": -5, "localQueueName": "lq", "positionInClusterQueue": 3,
       "positionInLocalQueue": 1, "reasonCode": "WaitingForQuota",
       "expectedStart": "1970-01-01T00:02:00Z",
       "latestStart": "1970-01-01T00:03:00.5Z"},
      {"metadata": {"name": "b"}, "startUnknownReason": "never fits"}
    ]})");
  ASSERT_TRUE(items.ok()) << items.status();
  ASSERT_EQ(items->size(), 2u);
  const PendingItem& a = (*items)[0];
  EXPECT_EQ(a.name, "a");
  EXPECT_EQ(a.namespace_name, "ns");
  EXPECT_EQ(a.created, 100);
  EXPECT_EQ(a.priority, -5);
  EXPECT_EQ(a.local_queue, "lq");
  EXPECT_EQ(a.position_in_cluster_queue, 3);
  EXPECT_EQ(a.position_in_local_queue, 1);
  EXPECT_EQ(a.reason_code, "WaitingForQuota");
  EXPECT_EQ(a.expected_start, 120);
  EXPECT_EQ(a.latest_start, 180);  // fractions floored
  const PendingItem& b = (*items)[1];
  EXPECT_EQ(b.created, std::nullopt);
  EXPECT_EQ(b.expected_start, std::nullopt);
  EXPECT_EQ(b.start_unknown_reason, "never fits");
}

TEST(VisibilityDecodeTest, AnEmptySummaryHasNoItems) {
  absl::StatusOr<std::vector<PendingItem>> items =
      DecodePendingWorkloads(R"({"kind":"PendingWorkloadsSummary"})");
  ASSERT_TRUE(items.ok()) << items.status();
  EXPECT_TRUE(items->empty());
}

TEST(VisibilityDecodeTest, ClusterQueuesCohortsAndLocalQueues) {
  absl::StatusOr<std::vector<ClusterQueueStatus>> queues =
      DecodeClusterQueueList(R"({"items": [
        {"metadata": {"name": "gpu"},
         "status": {"cohort": "org", "pendingWorkloads": 2,
                    "admittedWorkloads": 1,
                    "flavorsUsage": [{"name": "h100", "resources": [
                      {"name": "nvidia.com/gpu", "nominal": 8, "used": 10,
                       "borrowed": 2, "lent": 0, "lendingLimit": 4}]}]}},
        {"metadata": {"name": "bare"}}]})");
  ASSERT_TRUE(queues.ok()) << queues.status();
  ASSERT_EQ(queues->size(), 2u);
  EXPECT_EQ((*queues)[0].cohort, "org");
  EXPECT_EQ((*queues)[0].pending, 2);
  ASSERT_EQ((*queues)[0].flavors.size(), 1u);
  const ResourceUsage& gpu = (*queues)[0].flavors[0].resources.at(0);
  EXPECT_EQ(gpu.name, "nvidia.com/gpu");
  EXPECT_EQ(gpu.nominal + gpu.used + gpu.borrowed + gpu.lent, 20);
  EXPECT_TRUE((*queues)[1].flavors.empty());  // no status at all

  absl::StatusOr<std::vector<CohortStatus>> cohorts = DecodeCohortList(
      R"({"items": [{"metadata": {"name": "org"}, "status": {"parent": "root"}}]})");
  ASSERT_TRUE(cohorts.ok()) << cohorts.status();
  EXPECT_EQ(cohorts->at(0).parent, "root");

  absl::StatusOr<std::vector<LocalQueueStatus>> local = DecodeLocalQueueList(
      R"({"items": [{"metadata": {"name": "lq", "namespace": "ns"},
                     "status": {"clusterQueue": "gpu", "pendingWorkloads": 4}}]})");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->at(0).cluster_queue, "gpu");
  EXPECT_EQ(local->at(0).pending, 4);
}

TEST(VisibilityDecodeTest, ExplanationWithHiddenWorkloadsAhead) {
  absl::StatusOr<ExplainedWorkload> e = DecodeWorkloadExplanation(R"({
    "kind": "WorkloadExplanation",
    "metadata": {"name": "w", "namespace": "ns"},
    "state": "Pending", "members": 4, "minMember": 3,
    "quota": [{"level": "org", "cohort": true, "resource": "cpu",
               "nominal": 1000, "asks": 500}],
    "placement": [{"verdict": "fits", "nodes": 2, "examples": ["n1", "n2"]}],
    "start": {"forecastAt": "1970-01-01T00:00:10Z",
              "unknownReason": "no node ever frees"},
    "ahead": [{"positionInClusterQueue": 0, "reasonCode": "Preempting"}]})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->members, 4);
  EXPECT_EQ(e->min_member, 3);
  ASSERT_EQ(e->quota.size(), 1u);
  EXPECT_TRUE(e->quota[0].cohort);
  EXPECT_EQ(e->quota[0].borrowing_limit, std::nullopt);
  EXPECT_THAT(e->placement.at(0).examples, ElementsAre("n1", "n2"));
  ASSERT_TRUE(e->start.has_value());
  EXPECT_EQ(e->start->forecast_at, 10);
  EXPECT_EQ(e->start->expected, std::nullopt);
  EXPECT_EQ(e->start->unknown_reason, "no node ever frees");
  ASSERT_EQ(e->ahead.size(), 1u);
  EXPECT_EQ(e->ahead[0].name, "");  // another namespace's: not shown
}

TEST(VisibilityDecodeTest, AnAdmittedExplanationHasNoStart) {
  absl::StatusOr<ExplainedWorkload> e = DecodeWorkloadExplanation(
      R"({"metadata": {"name": "w"}, "state": "Admitted"})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->state, "Admitted");
  EXPECT_FALSE(e->start.has_value());
}

TEST(VisibilityDecodeTest, ErrorsNameTheField) {
  struct Case {
    std::string_view json;
    std::string_view error;
  } cases[] = {
      {R"({"items": [{"metadata": {"name": "a"}, "priority": "high"}]})",
       "PendingWorkloadsSummary.items[0].priority: expected integer"},
      {R"({"items": [{"metadata": {"name": "a"},
                      "expectedStart": "soon"}]})",
       "PendingWorkloadsSummary.items[0].expectedStart"},
      {R"({"items": [{"priority": 1}]})",
       "PendingWorkloadsSummary.items[0].metadata: missing"},
      {R"({"items": {}})", "PendingWorkloadsSummary.items: expected array"},
      {R"([])", "PendingWorkloadsSummary: expected object"},
      {R"({"items": [)", "malformed JSON"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<std::vector<PendingItem>> items =
        DecodePendingWorkloads(c.json);
    ASSERT_FALSE(items.ok()) << c.json;
    EXPECT_EQ(items.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(items.status().message()), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace gpusched
