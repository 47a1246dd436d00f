// Kueue's ClusterQueue and LocalQueue status from gpusched's read model,
// and the merge patch that writes it.
#include "api/controller/kueue_status.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>

#include "api/codec/kueue_status_json.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;

const std::chrono::system_clock::time_point kStatusSince =
    std::chrono::system_clock::from_time_t(1'800'000'000);

// ClusterQueue team-a: 16 of 12 nominal H100 GPUs in use (4 borrowed) and
// 2.5 cpu, by two workloads of LocalQueue ml/main and one of ml/batch;
// one workload pending.
QueueView TwoLocalQueues() {
  QueueView view;
  ClusterQueueView queue{.name = "team-a", .cohort = "research"};
  queue.quota = {{.fr = {"h100", "cpu"}, .nominal = 64000, .used = 2500},
                 {.fr = {"h100", "nvidia.com/gpu"},
                  .nominal = 12,
                  .used = 16,
                  .borrowed = 4}};
  queue.admitted = {
      {.key = "ml/a",
       .namespace_name = "ml",
       .local_queue = "main",
       .charged = {{{"h100", "nvidia.com/gpu"}, 8}, {{"h100", "cpu"}, 2000}}},
      {.key = "ml/b",
       .namespace_name = "ml",
       .local_queue = "main",
       .charged = {{{"h100", "nvidia.com/gpu"}, 4}}},
      {.key = "ml/c",
       .namespace_name = "ml",
       .local_queue = "batch",
       .charged = {{{"h100", "nvidia.com/gpu"}, 4}, {{"h100", "cpu"}, 500}}}};
  queue.pending = {{.key = "ml/d", .local_queue = "main"}};
  view.cluster_queues.push_back(queue);
  view.local_queues = {{.namespace_name = "ml",
                        .name = "batch",
                        .cluster_queue = "team-a",
                        .admitted = 1},
                       {.namespace_name = "ml",
                        .name = "main",
                        .cluster_queue = "team-a",
                        .pending = 1,
                        .admitted = 2}};
  return view;
}

TEST(KueueStatusTest, ClusterQueueCountsAndUsageAsKueueWritesThem) {
  const KueueStatuses statuses =
      KueueStatusesOf(TwoLocalQueues(), kStatusSince);
  const KueueQueueStatus& queue = statuses.cluster_queues.at("team-a");
  EXPECT_EQ(queue.pending, 1);
  EXPECT_EQ(queue.reserving, 3);
  EXPECT_EQ(queue.admitted, 3);
  EXPECT_EQ(EncodeKueueStatusPatch(queue, false),
            R"({"status":{"pendingWorkloads":1,"reservingWorkloads":3,)"
            R"("admittedWorkloads":3,"flavorsReservation":[{"name":"h100",)"
            R"("resources":[{"name":"cpu","total":"2500m","borrowed":"0"},)"
            R"({"name":"nvidia.com/gpu","total":"16","borrowed":"4"}]}],)"
            R"("flavorsUsage":[{"name":"h100","resources":[{"name":"cpu",)"
            R"("total":"2500m","borrowed":"0"},{"name":"nvidia.com/gpu",)"
            R"("total":"16","borrowed":"4"}]}],"conditions":[{"type":"Active",)"
            R"("status":"True","reason":"Ready","message":"Can admit new )"
            R"(workloads","lastTransitionTime":"2027-01-15T08:00:00Z"}]}})");
}

TEST(KueueStatusTest, ALocalQueueShowsWhatItsOwnWorkloadsHold) {
  const KueueStatuses statuses =
      KueueStatusesOf(TwoLocalQueues(), kStatusSince);
  const KueueQueueStatus& main = statuses.local_queues.at("ml/main");
  EXPECT_EQ(main.pending, 1);
  EXPECT_EQ(main.admitted, 2);
  ASSERT_EQ(main.usage.size(), 1u);
  EXPECT_THAT(main.usage[0].resources,
              ElementsAre(KueueResourceUsage{.resource = "cpu", .total = 2000},
                          KueueResourceUsage{.resource = "nvidia.com/gpu",
                                             .total = 12}));
  const KueueQueueStatus& batch = statuses.local_queues.at("ml/batch");
  EXPECT_THAT(batch.usage[0].resources,
              ElementsAre(KueueResourceUsage{.resource = "cpu", .total = 500},
                          KueueResourceUsage{.resource = "nvidia.com/gpu",
                                             .total = 4}));
  EXPECT_EQ(main.condition.message, "Can submit new workloads to localQueue");
}

// Kueue's quota reservation: a workload holding quota while its admission
// checks run is reserving, not pending, and its quota is in
// flavorsReservation, not flavorsUsage.
TEST(KueueStatusTest, QuotaReservedForChecksIsReservingNotAdmitted) {
  QueueView view = TwoLocalQueues();
  ClusterQueueView& queue = view.cluster_queues[0];
  queue.pending[0].reserved = {{{"h100", "nvidia.com/gpu"}, 2}};
  queue.pending[0].namespace_name = "ml";
  view.local_queues[1].reserving = 1;
  const KueueStatuses statuses = KueueStatusesOf(view, kStatusSince);
  const KueueQueueStatus& cq = statuses.cluster_queues.at("team-a");
  EXPECT_EQ(cq.pending, 0);
  EXPECT_EQ(cq.reserving, 4);
  EXPECT_EQ(cq.admitted, 3);
  EXPECT_THAT(cq.reservation[0].resources,
              ElementsAre(KueueResourceUsage{.resource = "cpu", .total = 2500},
                          KueueResourceUsage{.resource = "nvidia.com/gpu",
                                             .total = 18,
                                             .borrowed = 6}));
  EXPECT_EQ(cq.usage[0].resources[1].total, 16);
  const KueueQueueStatus& main = statuses.local_queues.at("ml/main");
  EXPECT_EQ(main.pending, 0);
  EXPECT_EQ(main.reserving, 3);
  EXPECT_EQ(main.admitted, 2);
  EXPECT_EQ(main.reservation[0].resources[1].total, 14);
  EXPECT_EQ(main.usage[0].resources[1].total, 12);
}

TEST(KueueStatusTest, ALocalQueuePatchHasNoBorrowed) {
  const KueueStatuses statuses =
      KueueStatusesOf(TwoLocalQueues(), kStatusSince);
  const std::string patch =
      EncodeKueueStatusPatch(statuses.local_queues.at("ml/batch"), true);
  EXPECT_EQ(patch.find("borrowed"), std::string::npos) << patch;
  EXPECT_NE(patch.find(R"({"name":"nvidia.com/gpu","total":"4"})"),
            std::string::npos)
      << patch;
}

TEST(KueueStatusTest, SetAsideQueuesAreInactiveWithKueuesReasons) {
  const std::vector<SetAsideDocument> aside = {
      {.name = "clusterqueues/bad",
       .message = "clusterqueues/bad:9: ClusterQueue \"bad\": spec."
                  "resourceGroups[0].flavors[0].name: Not found \"a100\": no "
                  "ResourceFlavor of that name"},
      {.name = "localqueues/ml/of-bad",
       .message = "localqueues/ml/of-bad:4: LocalQueue \"ml/of-bad\": "
                  "spec.clusterQueue: Not found \"bad\": no ClusterQueue of "
                  "that name"},
      {.name = "localqueues/ml/of-none",
       .message = "localqueues/ml/of-none:4: LocalQueue \"ml/of-none\": "
                  "spec.clusterQueue: Not found \"none\": no ClusterQueue of "
                  "that name"}};
  const KueueStatuses statuses =
      KueueStatusesOf(TwoLocalQueues(), kStatusSince, aside);
  const KueueActiveCondition& bad = statuses.cluster_queues.at("bad").condition;
  EXPECT_FALSE(bad.active);
  EXPECT_EQ(bad.reason, "FlavorNotFound");
  EXPECT_THAT(bad.message,
              ::testing::StartsWith("Can't admit new workloads: "));
  EXPECT_EQ(statuses.local_queues.at("ml/of-bad").condition.reason,
            "ClusterQueueIsInactive");
  EXPECT_EQ(statuses.local_queues.at("ml/of-none").condition.reason,
            "ClusterQueueDoesNotExist");
  EXPECT_TRUE(statuses.cluster_queues.at("team-a").condition.active);
}

}  // namespace
}  // namespace gpusched
