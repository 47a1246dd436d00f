// The admission cycle's flavor search (admission_flavor_search.cc) on
// small clusters of two node groups: flavorFungibility decides between a
// flavor that needs borrowing or preemption and the next one, and a
// flavor whose nodes cannot take the gang is never chosen for its quota.
#include <string>

#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

constexpr char kModel[] = "gpu.example.com/model";

Node ModelNode(const std::string& model, int index) {
  Node node = Dgx(model + "-" + std::to_string(index));
  node.meta.labels[kModel] = model;
  return node;
}

// One flavor per GPU model, quota per flavor in the queue's order.
ClusterQueue TwoFlavorQueue(const std::string& name, int64_t h100, int64_t a100,
                            FlavorFungibility fungibility = {},
                            PreemptionPolicy preemption = {}) {
  auto quota = [](const std::string& flavor, int64_t gpus) {
    return FlavorQuotas{.flavor = flavor,
                        .resources = {ResourceQuota{.name = "nvidia.com/gpu",
                                                    .nominal = gpus}}};
  };
  return ClusterQueue{
      .name = name,
      .cohort = "research",
      .resource_groups = {ResourceGroup{
          .covered_resources = {"nvidia.com/gpu"},
          .flavors = {quota("h100", h100), quota("a100", a100)}}},
      .preemption = preemption,
      .flavor_fungibility = fungibility};
}

class FlavorChoiceTest : public ::testing::Test {
 protected:
  // team-a and team-b in one cohort; `h100_nodes` and `a100_nodes` DGXs.
  void Start(ClusterQueue team_a, ClusterQueue team_b, int h100_nodes,
             int a100_nodes) {
    for (int i = 0; i < h100_nodes; ++i)
      model_.UpsertNode(ModelNode("h100", i));
    for (int i = 0; i < a100_nodes; ++i)
      model_.UpsertNode(ModelNode("a100", i));
    Policy policy;
    for (const char* model : {"h100", "a100"}) {
      policy.flavors.push_back(
          ResourceFlavor{.name = model, .node_labels = {{kModel, model}}});
    }
    policy.cluster_queues = {std::move(team_a), std::move(team_b)};
    policy.local_queues = {LocalQueue{"team-a", "q", "team-a"},
                           LocalQueue{"team-b", "q", "team-b"}};
    auto engine = QueueingEngine::Create(std::move(policy), &model_);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
  }
  void Add(const std::string& ns, const std::string& group, int pods,
           int32_t priority = 0) {
    for (int i = 0; i < pods; ++i) {
      engine_->AddPod(GangPod(ns, group, i, 8, pods, priority), 0);
    }
  }
  void Submit(const std::string& ns, const std::string& group, int pods,
              int32_t priority = 0) {
    Add(ns, group, pods, priority);
    engine_->Schedule(0);
  }
  const Workload& W(const std::string& key) {
    return engine_->workloads().at(key);
  }
  // The GPU model of the node a member of `key` was placed on.
  std::string ModelOf(const std::string& key, const std::string& pod) {
    const Workload& w = W(key);
    if (!w.placements.contains(pod)) return "";
    return model_.FindNode(w.placements.at(pod).node)
        ->node()
        .meta.labels.at(kModel);
  }

  ClusterModel model_;
  std::unique_ptr<QueueingEngine> engine_;
};

constexpr FlavorFungibility kTryNextForBorrowing{
    .when_can_borrow = FungibilityPolicy::kTryNextFlavor};

TEST_F(FlavorChoiceTest, BorrowingStopsTheSearchByDefault) {
  Start(TwoFlavorQueue("team-a", 0, 8), TwoFlavorQueue("team-b", 8, 0), 1, 1);
  Submit("team-a", "train", 1);
  EXPECT_EQ(ModelOf("team-a/train", "team-a/train-0"), "h100");
  EXPECT_TRUE(engine_->quota().IsBorrowing("team-a"));  // 8 > nominal 0
}

TEST_F(FlavorChoiceTest, TryNextFlavorTakesOwnQuotaBeforeBorrowing) {
  Start(TwoFlavorQueue("team-a", 0, 8, kTryNextForBorrowing),
        TwoFlavorQueue("team-b", 8, 0), 1, 1);
  Submit("team-a", "train", 1);
  EXPECT_EQ(ModelOf("team-a/train", "team-a/train-0"), "a100");
  EXPECT_FALSE(engine_->quota().IsBorrowing("team-a"));
}

// h100's quota holds 2 x 8 GPUs but its one node does not: the gang goes
// to a100 even though the search would stop at a fitting h100.
TEST_F(FlavorChoiceTest, FlavorWhoseNodesCannotTakeTheGangIsPassed) {
  const FlavorFungibility stop_everywhere{
      .when_can_borrow = FungibilityPolicy::kMayStopSearch,
      .when_can_preempt = FungibilityPolicy::kMayStopSearch};
  Start(TwoFlavorQueue("team-a", 16, 16, stop_everywhere),
        TwoFlavorQueue("team-b", 0, 0), 1, 2);
  Submit("team-a", "train", 2);
  ASSERT_EQ(W("team-a/train").state, Workload::State::kAdmitted);
  EXPECT_EQ(ModelOf("team-a/train", "team-a/train-0"), "a100");
  EXPECT_EQ(ModelOf("team-a/train", "team-a/train-1"), "a100");
}

// whenCanPreempt MayStopSearch: h100 needs preemption and has a victim,
// so the search stops there although a100 is free: the preemptor takes
// h100 from the victim.
TEST_F(FlavorChoiceTest, MayStopSearchPreemptsOnTheFirstFlavor) {
  const FlavorFungibility stop_at_preemption{
      .when_can_preempt = FungibilityPolicy::kMayStopSearch};
  const PreemptionPolicy lower{.within_cluster_queue =
                                   WithinClusterQueue::kLowerPriority};
  Start(TwoFlavorQueue("team-a", 8, 8, stop_at_preemption, lower),
        TwoFlavorQueue("team-b", 0, 0), 1, 1);
  Submit("team-a", "low", 1, /*priority=*/0);
  ASSERT_EQ(ModelOf("team-a/low", "team-a/low-0"), "h100");
  Submit("team-a", "high", 1, /*priority=*/10);
  EXPECT_EQ(W("team-a/low").preemptions, 1);
  EXPECT_EQ(ModelOf("team-a/high", "team-a/high-0"), "h100");
  // Requeued, the victim takes the flavor the preemptor left free.
  EXPECT_EQ(ModelOf("team-a/low", "team-a/low-0"), "a100");
}

// The default (whenCanPreempt TryNextFlavor): a100 fits, nobody is
// preempted on h100.
TEST_F(FlavorChoiceTest, TryNextFlavorTakesFreeFlavorBeforePreempting) {
  const PreemptionPolicy lower{.within_cluster_queue =
                                   WithinClusterQueue::kLowerPriority};
  Start(TwoFlavorQueue("team-a", 8, 8, {}, lower),
        TwoFlavorQueue("team-b", 0, 0), 1, 1);
  Submit("team-a", "low", 1, /*priority=*/0);
  Submit("team-a", "high", 1, /*priority=*/10);
  EXPECT_EQ(W("team-a/low").state, Workload::State::kAdmitted);
  EXPECT_EQ(W("team-a/low").preemptions, 0);
  EXPECT_EQ(ModelOf("team-a/high", "team-a/high-0"), "a100");
}

// Kueue orders a cycle's heads by the borrowing of the flavor each is
// assigned: team-b's head fits its own A100 quota (its second flavor) and
// goes before team-a's, which would borrow it there. On their first flavor
// (h100, full) both would borrow, and team-a's key would come first.
TEST_F(FlavorChoiceTest, HeadWithinNominalOnItsChosenFlavorGoesFirst) {
  Start(TwoFlavorQueue("team-a", 8, 0), TwoFlavorQueue("team-b", 0, 8), 1, 1);
  Submit("team-a", "on-h100", 1);
  Submit("team-a", "borrowing", 1);  // h100 is full: a100, borrowed
  ASSERT_EQ(ModelOf("team-a/borrowing", "team-a/borrowing-0"), "a100");
  Add("team-a", "wa", 1);
  Add("team-b", "wb", 1);
  engine_->Finish("team-a/borrowing-0", 1000);
  engine_->Schedule(1000);
  EXPECT_EQ(ModelOf("team-b/wb", "team-b/wb-0"), "a100");
  EXPECT_EQ(W("team-a/wa").state, Workload::State::kPending);
}

}  // namespace
}  // namespace gpusched
