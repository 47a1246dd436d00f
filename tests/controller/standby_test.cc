// Two replicas: the standby's admission loop keeps its state in step with
// the cluster (adopting what the deciding replica admitted) and decides
// nothing; once it decides, it starts from that state.
#include <memory>
#include <variant>

#include "api/controller/admission_loop.h"
#include "gtest/gtest.h"
#include "tests/queueing/builders.h"

namespace gpusched {
namespace {

class StandbyTest : public ::testing::Test {
 protected:
  void Start() {
    auto loop = AdmissionLoop::Create(
        TwoTeams(),
        {.clock = [] { return int64_t{1000}; }, .start_deciding = false});
    ASSERT_TRUE(loop.ok()) << loop.status();
    loop_ = *std::move(loop);
    service_ = std::make_unique<ExtenderService>(ServiceOptions{
        .gate = loop_.get(), .clock = [] { return int64_t{1000}; }});
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
  // Gang "ring" of four 2-GPU members, each as the webhook left it.
  std::vector<Pod> UpsertGatedRing() {
    std::vector<Pod> members;
    for (int i = 0; i < 4; ++i) {
      Pod member = GangPod("team-a", "ring", i, 2, 4);
      member.scheduling_gates.push_back(kAdmissionGate);
      ReadPodAdmissionState(member);
      members.push_back(member);
      Upsert(member);
    }
    return members;
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
  ReadPodAdmissionState(first);
  Upsert(first);
  first.scheduling_gates.clear();  // PinnedTo decodes the pod again
  Upsert(PinnedTo(first, "dgx-0"));
  Upsert(QueuedPod("team-a", "second", 8));  // borrows team-b's 8
  Upsert(QueuedPod("team-a", "third", 8));   // nothing left to borrow
  loop_->SetDeciding(true);
  loop_->WaitIdle();
  EXPECT_EQ(Admitted(), std::vector<std::string>{"second"});
}

// The deciding replica was killed in the middle of a gang's admission
// writes: two members of four carry their admission (ungated, pinned), two
// are still gated. The standby holds the gang admitted with two of four
// placed and lets neither pinned member bind (filter answers
// GangIncomplete); once it decides, it places the other two, admits only
// those (the first two were told by the replica before it), and then all
// four may bind.
TEST_F(StandbyTest, GangTakenOverHalfWrittenBindsOnlyOnceWhole) {
  Start();
  std::vector<Pod> members = UpsertGatedRing();
  for (int i = 0; i < 2; ++i) {
    members[i].scheduling_gates.clear();
    members[i] = PinnedTo(members[i], "dgx-0");
    Upsert(members[i]);
  }
  for (const Pod& member : members) {
    const GateVerdict verdict = loop_->Check(member);
    EXPECT_EQ(verdict.assigned_node, "") << member.meta.name;
    EXPECT_NE(verdict.waiting_reason.find("GangIncomplete"), std::string::npos)
        << member.meta.name << ": " << verdict.waiting_reason;
  }
  loop_->SetDeciding(true);
  loop_->WaitIdle();
  EXPECT_EQ(Admitted(), (std::vector<std::string>{"ring-2", "ring-3"}));
  for (const Pod& member : members) {
    EXPECT_NE(loop_->Check(member).assigned_node, "") << member.meta.name;
  }
  EXPECT_EQ(loop_->Check(members[0]).assigned_node, "dgx-0");
}

// As above, but the one member written ran alone and succeeded before the
// standby took over: it counts towards the gang, so the other three, once
// placed, may bind (they are not held for a fourth that already ran).
TEST_F(StandbyTest, GangTakenOverCountsAMemberThatAlreadySucceeded) {
  Start();
  std::vector<Pod> members = UpsertGatedRing();
  members[0].scheduling_gates.clear();
  Pod done = BoundTo(PinnedTo(members[0], "dgx-0"), "dgx-0", "0,1");
  Upsert(done);
  done.phase = PodPhase::kSucceeded;
  Upsert(done);
  loop_->SetDeciding(true);
  loop_->WaitIdle();
  EXPECT_EQ(Admitted(),
            (std::vector<std::string>{"ring-1", "ring-2", "ring-3"}));
  for (int i = 1; i < 4; ++i) {
    EXPECT_NE(loop_->Check(members[i]).assigned_node, "")
        << members[i].meta.name << ": "
        << loop_->Check(members[i]).waiting_reason;
  }
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
