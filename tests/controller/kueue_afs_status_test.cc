// Admission Fair Sharing in Kueue's queue status: LocalQueue
// status.fairSharing.admissionFairSharingStatus and ClusterQueue
// status.fairSharing.weightedShare from gpusched's read model, and the
// quantities written as Kueue writes them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "api/codec/kueue_status_json.h"
#include "api/controller/kueue_status.h"

namespace gpusched {
namespace {

const std::chrono::system_clock::time_point kSince =
    std::chrono::system_clock::from_time_t(1'800'000'000);

// ClusterQueue team-a with LocalQueue ml/main, whose decayed usage is 2.5
// GPUs and 0.75 cpu, last sampled 60 s after kSince.
QueueView OneLocalQueueWithUsage() {
  QueueView view;
  view.cluster_queues.push_back(
      ClusterQueueView{.name = "team-a", .weighted_share = 250});
  view.local_queues = {
      {.namespace_name = "ml",
       .name = "main",
       .cluster_queue = "team-a",
       .admission_fair_sharing =
           AfsQueueUsage{.consumed = {{"nvidia.com/gpu", 2.5}, {"cpu", 0.75}},
                         .last_update_ms = 1'800'000'060'000}}};
  return view;
}

TEST(KueueAfsStatusTest, LocalQueueCarriesItsDecayedUsage) {
  const KueueStatuses statuses =
      KueueStatusesOf(OneLocalQueueWithUsage(), kSince);
  const KueueQueueStatus& main = statuses.local_queues.at("ml/main");
  ASSERT_TRUE(main.admission_fair_sharing.has_value());
  EXPECT_EQ(main.admission_fair_sharing->consumed.at("nvidia.com/gpu"), 2.5);
  EXPECT_EQ(main.admission_fair_sharing->last_update,
            kSince + std::chrono::seconds(60));
}

TEST(KueueAfsStatusTest, LocalQueuePatchWritesAdmissionFairSharingStatus) {
  const KueueStatuses statuses =
      KueueStatusesOf(OneLocalQueueWithUsage(), kSince);
  const std::string patch =
      EncodeKueueStatusPatch(statuses.local_queues.at("ml/main"), true);
  EXPECT_NE(patch.find(R"("fairSharing":{"weightedShare":0,)"
                       R"("admissionFairSharingStatus":{"consumedResources":)"
                       R"({"cpu":"750m","nvidia.com/gpu":"2500m"},)"
                       R"("lastUpdate":"2027-01-15T08:01:00Z"}})"),
            std::string::npos)
      << patch;
}

TEST(KueueAfsStatusTest, ClusterQueueWritesItsWeightedShare) {
  const KueueStatuses statuses =
      KueueStatusesOf(OneLocalQueueWithUsage(), kSince);
  const KueueQueueStatus& queue = statuses.cluster_queues.at("team-a");
  EXPECT_EQ(queue.weighted_share, 250);
  EXPECT_NE(EncodeKueueStatusPatch(queue, false)
                .find(R"("fairSharing":{"weightedShare":250})"),
            std::string::npos);
}

TEST(KueueAfsStatusTest, WithoutUsageNoFairSharingIsWritten) {
  QueueView view = OneLocalQueueWithUsage();
  view.local_queues[0].admission_fair_sharing.reset();
  view.cluster_queues[0].weighted_share.reset();
  const KueueStatuses statuses = KueueStatusesOf(view, kSince);
  EXPECT_EQ(EncodeKueueStatusPatch(statuses.local_queues.at("ml/main"), true)
                .find("fairSharing"),
            std::string::npos);
}

TEST(KueueDecimalQuantityTest, CanonicalSuffixesAsKubernetesPrints) {
  EXPECT_EQ(KueueDecimalQuantity(8), "8");
  EXPECT_EQ(KueueDecimalQuantity(2.5), "2500m");
  EXPECT_EQ(KueueDecimalQuantity(4000), "4k");
  EXPECT_EQ(KueueDecimalQuantity(0.000001), "1u");
  EXPECT_EQ(KueueDecimalQuantity(0), "0");
  EXPECT_EQ(KueueDecimalQuantity(68719476736), "68719476736");  // 64Gi
}

// Kueue's MulByFloat rounds down to nine decimals.
TEST(KueueDecimalQuantityTest, RoundsDownToNanoUnits) {
  EXPECT_EQ(KueueDecimalQuantity(0.2678680338), "267868033n");
  EXPECT_EQ(KueueDecimalQuantity(1.0 / 3.0), "333333333n");
}

}  // namespace
}  // namespace gpusched
