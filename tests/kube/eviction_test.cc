#include "api/kube/eviction.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {
namespace {

class EvictionTest : public ::testing::Test {
 protected:
  EvictionTest() : client_(*KubeClient::Create(server_.Config())) {}

  EvictionResult Evict(std::string_view name, std::string uid) {
    absl::StatusOr<EvictionResult> result = EvictPod(
        *client_,
        {.namespace_name = "team-a", .name = std::string(name), .uid = uid});
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : EvictionResult{};
  }

  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(EvictionTest, EvictsThePodOfThatUid) {
  server_.AddPod(GpuPod("team-a/victim", 2, "n1"));
  EXPECT_EQ(Evict("victim", "uid-team-a-victim").outcome,
            EvictionOutcome::kEvicted);
  EXPECT_TRUE(server_.Pod("team-a/victim").is_null());
  EXPECT_EQ(server_.Count("POST eviction"), 1);
}

TEST_F(EvictionTest, PodRecreatedUnderTheNameIsNotEvicted) {
  server_.AddPod(GpuPod("team-a/victim", 2, "n1"));
  EvictionResult result = Evict("victim", "uid-of-the-deleted-pod");
  EXPECT_EQ(result.outcome, EvictionOutcome::kAlreadyGone);
  EXPECT_FALSE(server_.Pod("team-a/victim").is_null());
}

TEST_F(EvictionTest, MissingPodIsAlreadyGone) {
  EXPECT_EQ(Evict("nobody", "uid-x").outcome, EvictionOutcome::kAlreadyGone);
}

TEST_F(EvictionTest, DisruptionBudgetBlocksWithTheServersMessage) {
  server_.AddPod(GpuPod("team-a/victim", 2, "n1"));
  server_.BlockEvictions("team-a/victim", "serving-pdb");
  EvictionResult result = Evict("victim", "uid-team-a-victim");
  EXPECT_EQ(result.outcome, EvictionOutcome::kBlockedByDisruptionBudget);
  // The budget is named only in the Status's causes.
  EXPECT_EQ(result.message,
            "Cannot evict pod as it would violate the pod's disruption "
            "budget. (The disruption budget serving-pdb needs 1 healthy pods "
            "and has 1 currently)");
  EXPECT_FALSE(server_.Pod("team-a/victim").is_null());
}

}  // namespace
}  // namespace gpusched::kube::testing
