// The shipped example policy validates and means what its comments say.

#include <map>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "policies/policy_loader.h"
#include "policies/validate_report.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

const std::string kExample =
    std::string(GPUSCHED_SOURCE_DIR) + "/deploy/examples/policy.yaml";

std::string ErrorsOf(const PolicyResult& result) {
  std::string out;
  for (const PolicyError& e : result.errors) out += e.message + "\n";
  return out;
}

TEST(DeployExampleTest, ValidatesCleanly) {
  const PolicyResult result = LoadPolicyFiles({kExample});
  EXPECT_THAT(result.errors, IsEmpty()) << ErrorsOf(result);
  ASSERT_TRUE(result.ok());
}

TEST(DeployExampleTest, ThreeTeamsShareCohortResearch) {
  const PolicyResult result = LoadPolicyFiles({kExample});
  ASSERT_TRUE(result.ok()) << ErrorsOf(result);
  const Policy& policy = *result.policy;
  ASSERT_EQ(policy.cluster_queues.size(), 3u);
  for (const ClusterQueue& queue : policy.cluster_queues) {
    EXPECT_EQ(queue.cohort, "research") << queue.name;
  }
  EXPECT_EQ(policy.cluster_queues[0].name, "team-a");
  EXPECT_EQ(policy.cluster_queues[2].queueing_strategy,
            QueueingStrategy::kStrictFifo);
  ASSERT_EQ(policy.local_queues.size(), 3u);
  EXPECT_EQ(policy.local_queues[1].namespace_name, "team-b");
  EXPECT_TRUE(policy.config.fair_sharing);
}

// Nominal quotas never promise more than the demo cluster has: 4 DGX H100
// (8 GPUs, 224 cpu each) and 3 A100 nodes (4 GPUs, 8 mig-1g.5gb,
// 4 mig-3g.20gb, 256 cpu each).
TEST(DeployExampleTest, NominalQuotasFitTheDemoCluster) {
  const PolicyResult result = LoadPolicyFiles({kExample});
  ASSERT_TRUE(result.ok()) << ErrorsOf(result);
  std::map<std::pair<std::string, std::string>, int64_t> total;
  for (const ClusterQueue& queue : result.policy->cluster_queues) {
    for (const ResourceGroup& group : queue.resource_groups) {
      for (const FlavorQuotas& flavor : group.flavors) {
        for (const ResourceQuota& quota : flavor.resources) {
          total[{flavor.flavor, quota.name}] += quota.nominal;
        }
      }
    }
  }
  EXPECT_EQ((total[{"h100", "nvidia.com/gpu"}]), 32);              // 4 x 8
  EXPECT_EQ((total[{"h100", "cpu"}]), 896'000);                    // 4 x 224
  EXPECT_EQ((total[{"a100-mig", "nvidia.com/gpu"}]), 12);          // 3 x 4
  EXPECT_EQ((total[{"a100-mig", "nvidia.com/mig-1g.5gb"}]), 24);   // 3 x 8
  EXPECT_EQ((total[{"a100-mig", "nvidia.com/mig-3g.20gb"}]), 12);  // 3 x 4
  EXPECT_EQ((total[{"a100-mig", "cpu"}]), 768'000);                // 3 x 256
  // 2113287468Ki per DGX, 1056510800Ki per A100 node.
  EXPECT_LE((total[{"h100", "memory"}]), int64_t{4} * 2113287468 * 1024);
  EXPECT_LE((total[{"a100-mig", "memory"}]), int64_t{3} * 1056510800 * 1024);
}

TEST(DeployExampleTest, ValidateReportPrintsSummary) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(ValidatePolicyFiles({kExample}, out, err), 0);
  EXPECT_EQ(err.str(), "");
  EXPECT_THAT(out.str(), HasSubstr("policy.yaml: OK"));
  EXPECT_THAT(out.str(),
              HasSubstr("Policy: 3 ClusterQueues, 3 LocalQueues, 1 Cohort, 2 "
                        "ResourceFlavors, 2 WorkloadPriorityClasses\n"));
}

}  // namespace
}  // namespace gpusched
