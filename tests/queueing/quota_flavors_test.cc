// Quota and flavor: which flavors a workload's quota fits, and why not.
#include "queueing/quota_flavors.h"

#include "gtest/gtest.h"
#include "tests/queueing/stage_builders.h"

namespace gpusched {
namespace {

class QuotaFlavorsTest : public ::testing::Test {
 protected:
  void Start(Policy policy) {
    policy_ = std::move(policy);
    auto quota = QuotaTree::Build(policy_);
    ASSERT_TRUE(quota.ok()) << quota.status();
    quota_.emplace(*std::move(quota));
    flavors_.emplace();
    flavors_->Rebuild(policy_, *quota_);
  }
  FlavorChoices Choose(const Workload& w) {
    return flavors_->Choose(policy_, *quota_, w, w.MembersToAdmit());
  }

  Policy policy_;
  std::optional<QuotaTree> quota_;
  std::optional<QuotaFlavors> flavors_;
};

TEST_F(QuotaFlavorsTest, FitsOnTheQueuesFlavorWithItsDemand) {
  Start(TwoTeams());
  FlavorChoices choices = Choose(SinglePodWorkload("team-a", "job", 4));
  ASSERT_TRUE(choices.fits);
  ASSERT_EQ(choices.groups.size(), 1u);
  ASSERT_EQ(choices.groups[0].size(), 1u);
  EXPECT_EQ(choices.groups[0][0].flavor->flavor, "h100");
  EXPECT_EQ(choices.groups[0][0].demand.at({"h100", "nvidia.com/gpu"}), 4);
}

TEST_F(QuotaFlavorsTest, BorrowsFromTheCohortThenWaits) {
  Start(TwoTeams());
  // 12 of team-a's 8 + team-b's idle 8: borrowing fits.
  EXPECT_TRUE(Choose(SinglePodWorkload("team-a", "job", 12)).fits);
  quota_->AddUsage("team-b", {{{"h100", "nvidia.com/gpu"}, 8}});
  FlavorChoices choices = Choose(SinglePodWorkload("team-a", "job", 12));
  EXPECT_FALSE(choices.fits);
  EXPECT_EQ(choices.why.code, ReasonCode::kWaitingForQuota);
  EXPECT_EQ(choices.why.text,
            "queue team-a: needs 12 nvidia.com/gpu of flavor h100; 8 free of "
            "nominal 8, cohort has 0 to lend");
}

TEST_F(QuotaFlavorsTest, MoreThanTheCohortEverHasExceedsMaxQuota) {
  Start(TwoTeams());
  FlavorChoices choices = Choose(SinglePodWorkload("team-a", "job", 17));
  EXPECT_FALSE(choices.fits);
  EXPECT_EQ(choices.why.code, ReasonCode::kExceedsMaxQuota);
}

TEST_F(QuotaFlavorsTest, UnknownQueueAndUncoveredResourceMatchNoFlavor) {
  Start(TwoTeams());
  FlavorChoices unknown = Choose(SinglePodWorkload("team-z", "job", 1));
  EXPECT_FALSE(unknown.fits);
  EXPECT_EQ(unknown.why.code, ReasonCode::kNoMatchingFlavor);
  Workload w = SinglePodWorkload("team-a", "job", 1);
  w.pods.begin()->second.containers[0].requests.Set("example.com/fpga", 1);
  FlavorChoices uncovered = Choose(w);
  EXPECT_FALSE(uncovered.fits);
  EXPECT_EQ(uncovered.why.text,
            "queue team-a: resource example.com/fpga is not covered by its "
            "resourceGroups");
}

TEST_F(QuotaFlavorsTest, UntoleratedTaintSkipsToTheNextFlavor) {
  Policy policy = TwoTeams();
  policy.flavors.push_back(ResourceFlavor{
      .name = "a100", .node_labels = {{"nvidia.com/gpu.product", "A100"}}});
  policy.flavors[0].node_taints.push_back(
      Taint{.key = "reserved", .value = "yes", .effect = "NoSchedule"});
  policy.cluster_queues[0].resource_groups[0].flavors.push_back(FlavorQuotas{
      .flavor = "a100",
      .resources = {ResourceQuota{.name = "nvidia.com/gpu", .nominal = 8}}});
  Start(std::move(policy));
  FlavorChoices choices = Choose(SinglePodWorkload("team-a", "job", 2));
  ASSERT_TRUE(choices.fits);
  ASSERT_EQ(choices.groups[0].size(), 1u);
  EXPECT_EQ(choices.groups[0][0].flavor->flavor, "a100");
  EXPECT_EQ(choices.why.text,
            "flavor h100: the pods do not tolerate its node taints");
}

TEST_F(QuotaFlavorsTest, CohortTreesAndBorrowingQueues) {
  Start(TwoTeams());
  ASSERT_NE(flavors_->RootOf("team-a"), nullptr);
  EXPECT_EQ(flavors_->TreeOf("team-a"), flavors_->TreeOf("team-b"));
  const std::string root = *flavors_->RootOf("team-a");
  EXPECT_TRUE(flavors_->BorrowingQueuesOf(*quota_, root).empty());
  quota_->AddUsage("team-b", {{{"h100", "nvidia.com/gpu"}, 10}});
  ASSERT_EQ(flavors_->BorrowingQueuesOf(*quota_, root).size(), 1u);
  EXPECT_EQ(*flavors_->BorrowingQueuesOf(*quota_, root)[0], "team-b");
  EXPECT_EQ(flavors_->FirstFlavorDemand(SinglePodWorkload("team-a", "j", 3))
                .at({"h100", "nvidia.com/gpu"}),
            3);
}

}  // namespace
}  // namespace gpusched
