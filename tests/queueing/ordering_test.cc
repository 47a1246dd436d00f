// Ordering and classes: equal workloads share a class, a class yields its
// members in queue order, and a failed head speaks for the rest.
#include "gtest/gtest.h"
#include "queueing/pending_classes.h"
#include "tests/queueing/stage_builders.h"

namespace gpusched {
namespace {

class OrderingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    policy_ = TwoTeams();
    auto quota = QuotaTree::Build(policy_);
    ASSERT_TRUE(quota.ok());
    quota_.emplace(*std::move(quota));
    flavors_.emplace();
    flavors_->Rebuild(policy_, *quota_);
    classes_.emplace();
  }
  Workload& Add(const std::string& name, int gpus, int32_t priority,
                int64_t created) {
    Workload& w = workloads_[name] =
        SinglePodWorkload("team-a", name, gpus, priority);
    w.created_ms = created;
    classes_->Reindex(w, *flavors_);
    return w;
  }

  Policy policy_;
  std::optional<QuotaTree> quota_;
  std::optional<QuotaFlavors> flavors_;
  std::optional<PendingClasses> classes_;
  std::map<std::string, Workload> workloads_;
  std::function<bool(const Workload&)> all_ready_ = [](const Workload&) {
    return true;
  };
};

TEST_F(OrderingTest, QueueOrderIsPriorityThenCreationThenName) {
  Workload a = SinglePodWorkload("team-a", "a", 1, 5);
  Workload b = SinglePodWorkload("team-a", "b", 1, 1);
  b.created_ms = -10;  // older, but lower priority
  EXPECT_TRUE(QueueOrder(&a, &b));
  b.priority = 5;
  EXPECT_FALSE(QueueOrder(&a, &b));  // equal priority: the older first
  b.created_ms = a.created_ms;
  EXPECT_TRUE(QueueOrder(&a, &b));  // then the name
}

TEST_F(OrderingTest, EqualShapesShareAClassInQueueOrder) {
  Workload& late = Add("late", 4, 0, 20);
  Workload& early = Add("early", 4, 0, 10);
  Workload& first = Add("first", 4, 0, 5);
  Workload& other = Add("other", 2, 0, 0);    // another shape
  Workload& urgent = Add("urgent", 4, 9, 0);  // another priority
  EXPECT_EQ(late.indexed_signature, early.indexed_signature);
  EXPECT_EQ(late.indexed_signature, first.indexed_signature);
  EXPECT_NE(late.indexed_signature, other.indexed_signature);
  EXPECT_NE(late.indexed_signature, urgent.indexed_signature);
  EXPECT_EQ(classes_->Signatures().size(), 3u);
  const int cls = late.indexed_signature;
  EXPECT_EQ(classes_->queue_of(cls), "team-a");
  EXPECT_EQ(classes_->demand_of(cls).at({"h100", "nvidia.com/gpu"}), 4);
  EXPECT_EQ(classes_->ReadyFrom(cls, nullptr, all_ready_), &first);
  const PendingClasses::OrderKey after_first{0, 5, first.key};
  EXPECT_EQ(classes_->ReadyFrom(cls, &after_first, all_ready_), &early);
  // Not ready members are skipped.
  auto not_early = [&](const Workload& w) { return &w != &early; };
  EXPECT_EQ(classes_->ReadyFrom(cls, &after_first, not_early), &late);
}

// Only the annotations a node fit reads tell shapes apart: an expected
// runtime per job would otherwise make every job a class of its own.
TEST_F(OrderingTest, AnnotationsTheFitIgnoresDoNotSplitAClass) {
  Workload& a = Add("a", 1, 0, 0);
  Workload& b = Add("b", 1, 0, 1);
  Workload& shared = Add("shared", 1, 0, 2);
  auto annotate = [&](Workload& w, const std::string& key,
                      const std::string& value) {
    for (auto& [name, pod] : w.pods) pod.meta.annotations[key] = value;
    w.signature_id = -1;
    classes_->Reindex(w, *flavors_);
  };
  annotate(a, "gpusched.io/expected-runtime", "10m");
  annotate(b, "gpusched.io/expected-runtime", "3h");
  annotate(shared, "gpusched.io/gpu-milli", "500");
  EXPECT_EQ(classes_->SignatureId(a, *flavors_),
            classes_->SignatureId(b, *flavors_));
  EXPECT_NE(classes_->SignatureId(a, *flavors_),
            classes_->SignatureId(shared, *flavors_));
}

TEST_F(OrderingTest, AdmittedWorkloadLeavesItsClass) {
  Workload& w = Add("job", 4, 0, 0);
  const int cls = w.indexed_signature;
  w.state = Workload::State::kAdmitted;
  classes_->Reindex(w, *flavors_);
  EXPECT_EQ(w.indexed_signature, -1);
  EXPECT_EQ(classes_->ReadyFrom(cls, nullptr, all_ready_), nullptr);
  EXPECT_TRUE(classes_->Signatures().empty());
}

TEST_F(OrderingTest, NewerFailureOfTheClassSpeaksForOlderAttempts) {
  Workload& first = Add("first", 4, 0, 0);
  Workload& second = Add("second", 4, 0, 1);
  classes_->StampAttempt(second);
  classes_->StampAttempt(first);
  classes_->RecordFailure(first.indexed_signature, first,
                          {ReasonCode::kWaitingForQuota, "no quota"});
  const WaitReason* shared = classes_->SharedFailure(second);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->text, "no quota");
  // Its own attempt is not older than the failure: nothing shared.
  EXPECT_EQ(classes_->SharedFailure(first), nullptr);
  classes_->StampAttempt(second);
  EXPECT_EQ(classes_->SharedFailure(second), nullptr);
}

TEST_F(OrderingTest, ResetForgetsEverySignature) {
  Workload& w = Add("job", 4, 0, 0);
  classes_->Reset(workloads_);
  EXPECT_EQ(classes_->signature_count(), 0u);
  EXPECT_EQ(w.indexed_signature, -1);
  EXPECT_EQ(w.signature_id, -1);
}

}  // namespace
}  // namespace gpusched
