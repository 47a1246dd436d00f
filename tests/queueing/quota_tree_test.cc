// Kueue's quota arithmetic: nominal, borrowing and lending limits up a
// cohort tree.
#include "queueing/quota_tree.h"

#include "gtest/gtest.h"

namespace gpusched {
namespace {

const FlavorResource kTreeGpu{"h100", "nvidia.com/gpu"};

ClusterQueue Queue(std::string name, std::string cohort, int64_t nominal,
                   std::optional<int64_t> borrow = std::nullopt,
                   std::optional<int64_t> lend = std::nullopt) {
  ClusterQueue cq;
  cq.name = std::move(name);
  cq.cohort = std::move(cohort);
  cq.resource_groups.push_back(
      ResourceGroup{.covered_resources = {"nvidia.com/gpu"},
                    .flavors = {FlavorQuotas{
                        .flavor = "h100",
                        .resources = {ResourceQuota{.name = "nvidia.com/gpu",
                                                    .nominal = nominal,
                                                    .borrowing_limit = borrow,
                                                    .lending_limit = lend}}}}});
  return cq;
}

QuotaTree Build(Policy policy) {
  auto tree = QuotaTree::Build(policy);
  EXPECT_TRUE(tree.ok()) << tree.status();
  return *std::move(tree);
}

FrAmounts Gpus(int64_t n) { return {{kTreeGpu, n}}; }

TEST(QuotaTreeTest, QueueWithoutCohortHasItsNominalQuota) {
  QuotaTree tree = Build(Policy{.cluster_queues = {Queue("a", "", 8)}});
  EXPECT_EQ(tree.Available("a", kTreeGpu), 8);
  tree.AddUsage("a", Gpus(5));
  EXPECT_EQ(tree.Available("a", kTreeGpu), 3);  // 8 - 5
  EXPECT_FALSE(tree.Fits("a", Gpus(4)));
}

TEST(QuotaTreeTest, CohortMembersBorrowWhatOthersDoNotUse) {
  QuotaTree tree = Build(Policy{.cluster_queues = {Queue("a", "research", 8),
                                                   Queue("b", "research", 8)}});
  EXPECT_EQ(tree.Available("a", kTreeGpu), 16);  // own 8 + b's unused 8
  tree.AddUsage("b", Gpus(6));
  EXPECT_EQ(tree.Available("a", kTreeGpu), 10);  // 16 - 6
  EXPECT_TRUE(tree.WouldBorrow("a", Gpus(9)));
  EXPECT_FALSE(tree.WouldBorrow("a", Gpus(8)));
}

TEST(QuotaTreeTest, BorrowingLimitCapsWhatAQueueTakesFromTheCohort) {
  QuotaTree tree = Build(Policy{.cluster_queues = {Queue("a", "research", 8, 4),
                                                   Queue("b", "research", 8)}});
  EXPECT_EQ(tree.Available("a", kTreeGpu), 12);  // 8 + borrowingLimit 4
  EXPECT_EQ(tree.Available("b", kTreeGpu), 16);
}

TEST(QuotaTreeTest, LendingLimitKeepsTheRestForTheOwner) {
  QuotaTree tree = Build(
      Policy{.cluster_queues = {Queue("a", "research", 8),
                                Queue("b", "research", 8, std::nullopt, 2)}});
  EXPECT_EQ(tree.Available("a", kTreeGpu), 10);  // 8 + b lends only 2
  EXPECT_EQ(tree.Available("b", kTreeGpu),
            16);  // b's 6 guaranteed + cohort's 10
  tree.AddUsage("a", Gpus(10));
  EXPECT_EQ(tree.Available("b", kTreeGpu), 6);  // the guaranteed part stays
  EXPECT_TRUE(tree.IsBorrowing("a"));
  EXPECT_EQ(tree.Borrowed("a"), Gpus(2));
}

TEST(QuotaTreeTest, RemovingUsageRestoresAvailability) {
  QuotaTree tree = Build(
      Policy{.cluster_queues = {Queue("a", "research", 8),
                                Queue("b", "research", 8, std::nullopt, 2)}});
  tree.AddUsage("b", Gpus(7));  // 6 guaranteed + 1 stored in the cohort
  tree.AddUsage("a", Gpus(9));
  EXPECT_EQ(tree.Usage("cohort:research", kTreeGpu), 10);  // a's 9 + b's 1
  tree.RemoveUsage("b", Gpus(7));
  tree.RemoveUsage("a", Gpus(9));
  EXPECT_EQ(tree.Usage("cohort:research", kTreeGpu), 0);
  EXPECT_EQ(tree.Available("a", kTreeGpu), 10);
}

TEST(QuotaTreeTest, HierarchicalCohortsPoolQuotaUpTheTree) {
  Policy policy{
      .cluster_queues = {Queue("a", "vision", 4), Queue("b", "nlp", 4)},
      .cohorts = {Cohort{.name = "vision", .parent = "org"},
                  Cohort{.name = "nlp", .parent = "org"},
                  Cohort{.name = "org"}}};
  // org itself owns 8 GPUs.
  policy.cohorts[2].resource_groups = Queue("x", "", 8).resource_groups;
  QuotaTree tree = Build(policy);
  EXPECT_EQ(tree.Available("a", kTreeGpu), 16);  // 4 + 4 + 8
  EXPECT_EQ(tree.PathToRoot("a"),
            (std::vector<std::string>{"a", "cohort:vision", "cohort:org"}));
}

TEST(QuotaTreeTest, CohortCycleIsAnError) {
  Policy policy{.cohorts = {Cohort{.name = "x", .parent = "y"},
                            Cohort{.name = "y", .parent = "x"}}};
  EXPECT_FALSE(QuotaTree::Build(policy).ok());
}

TEST(QuotaTreeTest, WeightedShareIsBorrowedOverLendableOverWeight) {
  Policy policy{.cluster_queues = {Queue("a", "r", 8), Queue("b", "r", 8)}};
  policy.cluster_queues[1].fair_weight_milli = 2000;
  QuotaTree tree = Build(policy);
  EXPECT_EQ(tree.WeightedShare("a"), 0);  // not borrowing
  tree.AddUsage("a", Gpus(12));
  EXPECT_EQ(tree.WeightedShare("a"), 250);            // 4 borrowed * 1000 / 16
  EXPECT_EQ(tree.WeightedShare("b", Gpus(12)), 125);  // 250 / weight 2
}

}  // namespace
}  // namespace gpusched
