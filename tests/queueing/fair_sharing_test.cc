// The fair-sharing tournament: shares compared at every cohort level,
// bottom-up, re-read after every admission.
#include "queueing/fair_sharing.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

const FlavorResource kGpu{"h100", "nvidia.com/gpu"};

std::vector<ResourceGroup> Gpus(int64_t nominal) {
  return {ResourceGroup{.covered_resources = {"nvidia.com/gpu"},
                        .flavors = {FlavorQuotas{.flavor = "h100",
                                                 .resources = {ResourceQuota{
                                                     .name = "nvidia.com/gpu",
                                                     .nominal = nominal}}}}}};
}

ClusterQueue Queue(std::string name, std::string cohort, int64_t nominal,
                   int64_t weight_milli = 1000) {
  ClusterQueue cq;
  cq.name = std::move(name);
  cq.cohort = std::move(cohort);
  cq.resource_groups = Gpus(nominal);
  cq.fair_weight_milli = weight_milli;
  return cq;
}

// org (root, owns 12 GPUs) -> ml {a: 0, b: 0}, infra {c: 0}: every GPU
// anyone uses is borrowed from org.
Policy TwoLevelPolicy() {
  Policy policy;
  policy.cohorts = {Cohort{.name = "org", .resource_groups = Gpus(12)},
                    Cohort{.name = "ml", .parent = "org"},
                    Cohort{.name = "infra", .parent = "org"}};
  policy.cluster_queues = {Queue("a", "ml", 0), Queue("b", "ml", 0),
                           Queue("c", "infra", 0)};
  return policy;
}

class FairSharingTest : public testing::Test {
 protected:
  Workload& Add(const std::string& key, const std::string& cq,
                int64_t created) {
    Workload& w = workloads_[key];
    w.key = key;
    w.cluster_queue = cq;
    w.created_ms = created;
    return w;
  }
  std::map<std::string, Workload> workloads_;
};

bool ByCreation(const Workload* a, const Workload* b) {
  return a->created_ms != b->created_ms ? a->created_ms < b->created_ms
                                        : a->key < b->key;
}

// Runs the tournament, charging each winner's demand as admission would,
// and returns the keys in the order they won.
std::vector<std::string> Order(
    QuotaTree& tree, std::map<std::string, std::deque<Contender>> queues) {
  FairSharingTournament tournament(tree, queues, ByCreation);
  std::map<const Workload*, FrAmounts> demand;
  for (auto& [cq, contenders] : queues) {
    for (const Contender& c : contenders) demand[c.workload] = c.demand;
  }
  std::vector<std::string> order;
  while (Workload* w = tournament.Next()) {
    tree.AddUsage(w->cluster_queue, demand[w]);
    order.push_back(w->key);
  }
  return order;
}

TEST_F(FairSharingTest, CohortsAlternateBeforeTheirQueuesDo) {
  auto tree = QuotaTree::Build(TwoLevelPolicy());
  ASSERT_TRUE(tree.ok()) << tree.status();
  std::map<std::string, std::deque<Contender>> queues;
  // ml has two queues with two jobs each; infra one queue with two jobs.
  // A flat order by queue share would let ml take 2 turns for infra's 1;
  // the tournament compares ml against infra as cohorts first.
  for (int i = 0; i < 2; ++i) {
    for (const char* cq : {"a", "b", "c"}) {
      Workload& w = Add(absl::StrCat(cq, i), cq, i * 10 + (cq[0] - 'a'));
      queues[cq].push_back(Contender{&w, {{kGpu, 2}}});
    }
  }
  EXPECT_EQ(Order(*tree, queues),
            (std::vector<std::string>{"a0", "c0", "b0", "c1", "a1", "b1"}));
}

TEST_F(FairSharingTest, WeightsScaleTheShare) {
  Policy policy;
  policy.cohorts = {Cohort{.name = "org", .resource_groups = Gpus(12)}};
  policy.cluster_queues = {Queue("heavy", "org", 0, 3000),
                           Queue("light", "org", 0, 1000)};
  auto tree = QuotaTree::Build(policy);
  ASSERT_TRUE(tree.ok()) << tree.status();
  std::map<std::string, std::deque<Contender>> queues;
  for (int i = 0; i < 4; ++i) {
    for (const char* cq : {"heavy", "light"}) {
      Workload& w = Add(absl::StrCat(cq, i), cq, i);
      queues[cq].push_back(Contender{&w, {{kGpu, 1}}});
    }
  }
  // heavy's share grows a third as fast: it wins three turns per light's
  // (light0 wins the tie at 3 vs 1 as the older workload).
  std::vector<std::string> order = Order(*tree, queues);
  ASSERT_EQ(order.size(), 8u);
  EXPECT_EQ(std::vector<std::string>(order.begin(), order.begin() + 6),
            (std::vector<std::string>{"heavy0", "heavy1", "light0", "heavy2",
                                      "heavy3", "light1"}));
}

TEST_F(FairSharingTest, ShareOfACohortCountsOnlyWhatItsQueuesBorrow) {
  Policy policy = TwoLevelPolicy();
  policy.cluster_queues[0] = Queue("a", "ml", 4);  // a owns 4 of its own
  auto tree = QuotaTree::Build(policy);
  ASSERT_TRUE(tree.ok()) << tree.status();
  // 3 GPUs in a are within a's nominal quota: ml borrows nothing.
  EXPECT_EQ(tree->WeightedShareWithDemand("a", "cohort:ml", {{kGpu, 3}}), 0);
  // 6 GPUs: 2 beyond a's quota reach ml, out of org's 16 lendable.
  EXPECT_EQ(tree->WeightedShareWithDemand("a", "cohort:ml", {{kGpu, 6}}),
            2 * 1000 / 16);
}

}  // namespace
}  // namespace gpusched
