// Two replicas: the standby's admission loop keeps its state in step with
// the cluster (adopting what the deciding replica admitted) and decides
// nothing; once it decides, it starts from that state.
#include <memory>
#include <variant>

#include "gtest/gtest.h"
#include "queueing/admission_loop.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

class StandbyTest : public ::testing::Test {
 protected:
  void Start() {
    auto loop = AdmissionLoop::Create(
        TwoTeams(), {.clock = [] { return int64_t{1000}; },
                     .start_deciding = false});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(
        ServiceOptions{.gate = loop_.get(), .clock = [] { return int64_t{1000}; }});
    service_->UpsertNodes({Dgx("dgx-0"), Dgx("dgx-1")});
    loop_->Start(*service_, &sink_);
  }
  void TearDown() override {
    if (loop_ != nullptr) loop_->Stop();
  }
  void Upsert(Pod pod) {
    loop_->PodUpserted(std::move(pod));
    loop_->WaitIdle();
  }
  // The pods the decisions so far admitted.
  std::vector<std::string> Admitted() {
    std::vector<std::string> pods;
    for (const QueueDecision& d : sink_.Take()) {
      if (const auto* admit = std::get_if<AdmitMember>(&d)) {
        pods.push_back(admit->pod.pod_name);
      }
    }
    return pods;
  }

  RecordingSink sink_;
  std::unique_ptr<AdmissionLoop> loop_;
  std::unique_ptr<ExtenderService> service_;
};

TEST_F(StandbyTest, StandbyDecidesNothingThenDecidesAtOnce) {
  Start();
  EXPECT_FALSE(loop_->deciding());
  Upsert(QueuedPod("team-a", "p", 4));
  EXPECT_TRUE(Admitted().empty());
  EXPECT_TRUE(sink_.TakeStatuses().empty());
  loop_->SetDeciding(true);
  loop_->WaitIdle();
  EXPECT_EQ(Admitted(), std::vector<std::string>{"p"});
}

// The deciding replica admitted `first` (8 GPUs, team-a's nominal quota,
// pinned to dgx-0). The standby held it as pending and adopts it from its
// labels, so once it decides it does not admit `first` again, admits
// `second` on the 8 GPUs team-a may borrow from team-b, and holds `third`:
// without the adoption it would admit two of the three and exceed nothing
// it knew of while the cluster ran 24 GPUs in a 16-GPU cohort.
TEST_F(StandbyTest, StandbyAdoptsTheDecidingReplicasAdmissions) {
  Start();
  Pod first = QueuedPod("team-a", "first", 8);
  first.scheduling_gates.push_back(kAdmissionGate);
  Upsert(first);
  first.scheduling_gates.clear();
  Upsert(PinnedTo(first, "dgx-0"));
  Upsert(QueuedPod("team-a", "second", 8));  // borrows team-b's 8
  Upsert(QueuedPod("team-a", "third", 8));   // nothing left to borrow
  loop_->SetDeciding(true);
  loop_->WaitIdle();
  EXPECT_EQ(Admitted(), std::vector<std::string>{"second"});
}

TEST_F(StandbyTest, DecidingThenStandingByStopsDecisions) {
  Start();
  loop_->SetDeciding(true);
  Upsert(QueuedPod("team-a", "p", 4));
  EXPECT_EQ(Admitted(), std::vector<std::string>{"p"});
  loop_->SetDeciding(false);
  Upsert(QueuedPod("team-a", "q", 4));
  EXPECT_TRUE(Admitted().empty());
}

}  // namespace
}  // namespace gpusched
