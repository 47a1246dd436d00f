// The admission loop takes an admission check's state from its controller
// (the ProvisioningRequest watch) as an input, as the simulator's
// admissionCheck event does: Ready admits the workload holding its quota
// reserved, Retry gives the quota back and requeues it.
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "api/controller/admission_loop.h"
#include "gtest/gtest.h"
#include "tests/controller/admission_loop_fixture.h"
#include "tests/queueing/builders.h"
#include "tests/queueing/checked_policy.h"

namespace gpusched {
namespace {

class AdmissionCheckLoopTest : public AdmissionLoopTest {
 protected:
  // Gang team-a/g (two gated pods of 4 GPUs) holding its quota reserved
  // while check "prov" runs.
  void StartReserved() {
    Start(CheckedPolicy());
    for (int i = 0; i < 2; ++i) {
      Pod pod = GangPod("team-a", "g", i, 4, 2);
      pod.scheduling_gates.push_back(kAdmissionGate);
      ReadPodAdmissionState(pod);
      loop_->PodUpserted(std::move(pod));
    }
    loop_->WaitIdle();
  }
  bool Reserved() const {
    return loop_->ReadEngine([](const QueueingEngine& engine) {
      return engine.workloads().at("team-a/g").check_reservation.has_value();
    });
  }
  int AdmittedMembers() {
    int admitted = 0;
    for (const QueueDecision& d : sink_.Take()) {
      if (const auto* admit = std::get_if<AdmitMember>(&d)) {
        EXPECT_EQ(admit->workload, "team-a/g");
        ++admitted;
      }
    }
    return admitted;
  }
};

TEST_F(AdmissionCheckLoopTest, ReservedWorkloadIsAdmittedAfterReady) {
  StartReserved();
  ASSERT_TRUE(Reserved());
  EXPECT_EQ(AdmittedMembers(), 0);

  loop_->CheckStateChanged("team-a/g", kCheck, CheckState::kReady,
                           "Provisioned");
  loop_->WaitIdle();
  EXPECT_EQ(AdmittedMembers(), 2);
  EXPECT_FALSE(Reserved());
}

TEST_F(AdmissionCheckLoopTest, ReservedWorkloadIsRequeuedAfterRetry) {
  StartReserved();
  ASSERT_TRUE(Reserved());

  loop_->CheckStateChanged("team-a/g", kCheck, CheckState::kRetry,
                           "no capacity");
  loop_->WaitIdle();
  EXPECT_FALSE(Reserved());
  EXPECT_EQ(AdmittedMembers(), 0);
  const auto [code, retries] = loop_->ReadEngine([](const auto& engine) {
    const Workload& w = engine.workloads().at("team-a/g");
    return std::pair(w.code, w.checks.at(0).retry_count);
  });
  EXPECT_EQ(code, ReasonCode::kAdmissionCheck);
  EXPECT_EQ(retries, 1);

  now_ += 10'000;  // the config's backoff: base 10 s
  loop_->WaitIdle();
  EXPECT_TRUE(Reserved());
}

// The update a Ready check brings (a provisioned request's podSetUpdates)
// goes with each gated member's admission.
TEST_F(AdmissionCheckLoopTest, ReadyChecksUpdateGoesWithTheAdmission) {
  StartReserved();
  loop_->CheckStateChanged(
      "team-a/g", kCheck, CheckState::kReady, "Provisioned",
      PodSetUpdate{.annotations = {
                       {kConsumeProvisioningRequestAnnotation, "g-prov-1"}}});
  loop_->WaitIdle();
  int admitted = 0;
  for (const QueueDecision& d : sink_.Take()) {
    const auto* admit = std::get_if<AdmitMember>(&d);
    if (admit == nullptr) continue;
    ++admitted;
    EXPECT_EQ(admit->update.annotations,
              (std::map<std::string, std::string>{
                  {kConsumeProvisioningRequestAnnotation, "g-prov-1"}}));
  }
  EXPECT_EQ(admitted, 2);
}

}  // namespace
}  // namespace gpusched
