// A live bind whose API server call ends without a clear answer (timeout,
// dropped connection) may still land. Its devices must stay held until the
// API server shows the outcome, or no GPU could be given twice.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scheduler/extender_service.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::BindOf;
using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class ScriptedSink : public BindSink {
 public:
  absl::Status Bind(const Pod& pod, const std::string& node,
                    const GpuAssignment&) override {
    ++calls;
    return result;
  }
  absl::Status result = absl::OkStatus();
  int calls = 0;
};

class BindInDoubtTest : public ::testing::Test {
 protected:
  BindInDoubtTest()
      : service_({.bind_sink = &sink_,
                  .clock = [this] { return now_ms_; },
                  .bind_in_doubt_hold_ms = 30000}) {
    service_.UpsertNodes({MakeNode("n1").Gpus(2), MakeNode("n2").Gpus(2)});
  }

  // Filters and binds `pod` to n1 with the sink timing out.
  void BindTimesOut(const Pod& pod) {
    service_.Filter(pod, kNodes);
    sink_.result = absl::DeadlineExceededError("POST binding: timed out");
    EXPECT_THAT(service_.Bind(BindOf(pod, "n1")).error,
                HasSubstr("may still land"));
    sink_.result = absl::OkStatus();
  }
  std::vector<std::string> Passed(const Pod& pod) {
    return service_.Filter(pod, kNodes).passed;
  }

  const std::vector<std::string> kNodes = {"n1", "n2"};
  ScriptedSink sink_;
  int64_t now_ms_ = 1'000'000;
  ExtenderService service_;
  const Pod train_ = MakePod("ml/train").Gpus(2);
  const Pod other_ = MakePod("ml/other").Gpus(2);
};

TEST_F(BindInDoubtTest, TimedOutBindKeepsItsGpusFromOtherPods) {
  BindTimesOut(train_);
  EXPECT_EQ(service_.binds_in_doubt(), 1u);
  EXPECT_THAT(Passed(other_), ElementsAre("n2"));  // n1's two GPUs are held
}

TEST_F(BindInDoubtTest, ThePodItselfPassesOnlyWhereItMayHaveLanded) {
  BindTimesOut(train_);
  FilterOutcome outcome = service_.Filter(train_, kNodes);
  EXPECT_THAT(outcome.passed, ElementsAre("n1"));
  ASSERT_EQ(outcome.failed.size(), 1u);
  EXPECT_THAT(outcome.failed[0].second,
              HasSubstr("earlier binding of this pod to node n1"));
}

TEST_F(BindInDoubtTest, BindToAnotherNodeIsRefusedWhileInDoubt) {
  BindTimesOut(train_);
  EXPECT_THAT(service_.Bind(BindOf(train_, "n2")).error,
              HasSubstr("an earlier binding may still land"));
  EXPECT_EQ(sink_.calls, 1);
}

TEST_F(BindInDoubtTest, RetryToTheSameNodeSendsTheBindingAgain) {
  BindTimesOut(train_);
  EXPECT_EQ(service_.Bind(BindOf(train_, "n1")).error, "");
  EXPECT_EQ(sink_.calls, 2);
  EXPECT_EQ(service_.binds_in_doubt(), 0u);
  EXPECT_THAT(Passed(other_), ElementsAre("n2"));
}

TEST_F(BindInDoubtTest, WatchShowingTheBindingSettlesIt) {
  BindTimesOut(train_);
  Pod bound = train_;
  bound.node_name = "n1";
  EXPECT_THAT(service_.ObserveBound(bound), IsEmpty());
  EXPECT_EQ(service_.binds_in_doubt(), 0u);
  now_ms_ += 60000;  // long past the hold: nothing to release any more
  EXPECT_THAT(service_.ReleaseExpiredBinds(), IsEmpty());
  EXPECT_THAT(Passed(other_), ElementsAre("n2"));
}

TEST_F(BindInDoubtTest, HoldRunningOutReleasesTheGpus) {
  BindTimesOut(train_);
  now_ms_ += 29999;
  EXPECT_THAT(service_.ReleaseExpiredBinds(), IsEmpty());
  now_ms_ += 1;
  EXPECT_THAT(service_.ReleaseExpiredBinds(), ElementsAre(train_.meta.uid));
  EXPECT_THAT(Passed(other_), ElementsAre("n1", "n2"));
}

TEST_F(BindInDoubtTest, DeletedPodReleasesAtOnce) {
  BindTimesOut(train_);
  EXPECT_TRUE(service_.RemovePod(train_.meta.uid));
  EXPECT_THAT(Passed(other_), ElementsAre("n1", "n2"));
}

TEST_F(BindInDoubtTest, BindingThatLandedElsewhereIsFollowed) {
  BindTimesOut(train_);
  Pod bound = train_;
  bound.node_name = "n2";  // the API server's word wins
  EXPECT_THAT(
      service_.ObserveBound(bound),
      ElementsAre(HasSubstr("held on node n1 but is bound to node n2")));
  EXPECT_THAT(Passed(other_), ElementsAre("n1"));
}

TEST_F(BindInDoubtTest, ARefusedBindIsNotInDoubt) {
  service_.Filter(train_, kNodes);
  sink_.result = absl::AbortedError("pod is already assigned");
  EXPECT_THAT(service_.Bind(BindOf(train_, "n1")).error,
              ::testing::Not(HasSubstr("may still land")));
  EXPECT_EQ(service_.binds_in_doubt(), 0u);
  EXPECT_THAT(Passed(other_), ElementsAre("n1", "n2"));
}

TEST(BindMayHaveLanded, OnlyForUnclearOutcomes) {
  EXPECT_TRUE(BindMayHaveLanded(absl::DeadlineExceededError("")));
  EXPECT_TRUE(BindMayHaveLanded(absl::UnavailableError("")));
  EXPECT_FALSE(BindMayHaveLanded(absl::FailedPreconditionError("")));
  EXPECT_FALSE(BindMayHaveLanded(absl::AbortedError("")));
  EXPECT_FALSE(BindMayHaveLanded(absl::PermissionDeniedError("")));
}

}  // namespace
}  // namespace gpusched
