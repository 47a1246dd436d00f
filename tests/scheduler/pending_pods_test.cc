#include "scheduler/pending_pods.h"

#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakePod;

TEST(PendingPods, FindsARememberedPodByUid) {
  PendingPods pending(10);
  pending.Remember(MakePod("ml/a").Uid("u1").Gpus(2));
  ASSERT_NE(pending.Find("u1"), nullptr);
  EXPECT_EQ(pending.Find("u1")->Key(), "ml/a");
  EXPECT_EQ(pending.Find("u2"), nullptr);
}

TEST(PendingPods, RememberingAgainKeepsTheNewestVersion) {
  PendingPods pending(10);
  pending.Remember(MakePod("ml/a").Uid("u1").Gpus(1));
  pending.Remember(MakePod("ml/a").Uid("u1").Gpus(4));
  EXPECT_EQ(pending.size(), 1u);
  EXPECT_EQ(EffectiveRequests(*pending.Find("u1")).Get(kNvidiaGpu), 4);
}

TEST(PendingPods, EvictsTheOldestBeyondCapacity) {
  PendingPods pending(2);
  pending.Remember(MakePod("ml/a").Uid("a"));
  pending.Remember(MakePod("ml/b").Uid("b"));
  pending.Remember(MakePod("ml/c").Uid("c"));
  EXPECT_EQ(pending.size(), 2u);
  EXPECT_EQ(pending.Find("a"), nullptr);
  EXPECT_NE(pending.Find("b"), nullptr);
  EXPECT_NE(pending.Find("c"), nullptr);
}

TEST(PendingPods, ARememberedAgainPodIsNoLongerTheOldest) {
  PendingPods pending(2);
  pending.Remember(MakePod("ml/a").Uid("a"));
  pending.Remember(MakePod("ml/b").Uid("b"));
  pending.Remember(MakePod("ml/a").Uid("a"));  // a is now newer than b
  pending.Remember(MakePod("ml/c").Uid("c"));
  EXPECT_NE(pending.Find("a"), nullptr);
  EXPECT_EQ(pending.Find("b"), nullptr);
  EXPECT_NE(pending.Find("c"), nullptr);
}

TEST(PendingPods, ForgetDropsThePod) {
  PendingPods pending(10);
  pending.Remember(MakePod("ml/a").Uid("u1"));
  pending.Forget("u1");
  EXPECT_EQ(pending.Find("u1"), nullptr);
  EXPECT_EQ(pending.size(), 0u);
  pending.Forget("never-seen");  // harmless
}

TEST(PendingPods, IndexesPodsWithoutUidByKey) {
  PendingPods pending(10);
  pending.Remember(MakePod("ml/a").Uid(""));
  EXPECT_NE(pending.Find("ml/a"), nullptr);
}

}  // namespace
}  // namespace gpusched
