// Kueue's admission checks on the engine: a workload of a ClusterQueue with
// checks holds its quota reserved (pending, not placed) until every check
// is Ready; Retry gives the quota back and requeues after the
// ProvisioningRequestConfig's backoff; Retry past backoffLimitCount, or
// Rejected, deactivates it (Kueue v0.19.2,
// pkg/controller/admissionchecks/provisioning/controller.go and
// pkg/controller/core/workload_controller.go reconcileCheckBasedEviction).

#include "queueing/admission_checks.h"

#include <limits>

#include "gtest/gtest.h"
#include "queueing/engine.h"
#include "tests/queueing/checked_policy.h"
#include "tests/queueing/engine_fixture.h"

namespace gpusched {
namespace {

class AdmissionChecksTest : public EngineFixture {
 protected:
  const Workload& W(const std::string& key) {
    return engine_->workloads().at(key);
  }
  // Gang team-a/g (two pods of 4 GPUs) holding its reservation at 0.
  void StartReserved(Policy policy = CheckedPolicy(), int nodes = 2) {
    Start(std::move(policy), nodes);
    SubmitGang("team-a", "g", 2, 4, 0);
    engine_->Schedule(0);
  }
  void Set(const std::string& key, CheckState state, int64_t now) {
    engine_->SetCheckState(key, kCheck, state, "from the test", now);
    engine_->Schedule(now);
  }
};

TEST_F(AdmissionChecksTest, QuotaIsReservedWithoutPlacement) {
  StartReserved();
  const Workload& w = W("team-a/g");
  EXPECT_EQ(w.state, Workload::State::kPending);
  ASSERT_TRUE(w.check_reservation.has_value());
  EXPECT_EQ(w.check_reservation->flavors, std::vector<std::string>{"h100"});
  EXPECT_TRUE(w.placements.empty());
  EXPECT_EQ(w.code, ReasonCode::kUnsatisfiedChecks);
  ASSERT_EQ(w.checks.size(), 1u);
  EXPECT_EQ(w.checks[0].state, CheckState::kPending);
}

TEST_F(AdmissionChecksTest, ReservedQuotaKeepsOthersOut) {
  Policy policy = CheckedPolicy();
  policy.cluster_queues[0].cohort.clear();  // nothing to borrow
  StartReserved(policy);                    // 8 of team-a's 8 GPUs reserved
  engine_->AddPod(QueuedPod("team-a", "late", 1), 1);
  engine_->Schedule(1);
  EXPECT_EQ(W("team-a/late").state, Workload::State::kPending);
  EXPECT_FALSE(W("team-a/late").check_reservation.has_value());
  // Nothing admitted holds team-a's quota at rest: the reservation is
  // charged only during a pass.
  EXPECT_EQ(engine_->quota().Usage("team-a", {"h100", "nvidia.com/gpu"}), 0);
}

TEST_F(AdmissionChecksTest, ReadyOnEveryCheckAdmits) {
  StartReserved();
  Set("team-a/g", CheckState::kReady, 5'000);
  const Workload& w = W("team-a/g");
  EXPECT_TRUE(w.admitted());
  EXPECT_EQ(w.placements.size(), 2u);
  EXPECT_FALSE(w.check_reservation.has_value());
  EXPECT_EQ(w.admitted_at_ms, 5'000);
}

TEST_F(AdmissionChecksTest, ReadyWithoutRoomKeepsTheReservation) {
  StartReserved(CheckedPolicy(), /*nodes=*/0);  // capacity to be provisioned
  Set("team-a/g", CheckState::kReady, 5'000);
  EXPECT_FALSE(W("team-a/g").admitted());
  EXPECT_TRUE(W("team-a/g").check_reservation.has_value());
  model_.UpsertNode(Dgx("dgx-new"));  // the provisioned node comes up
  engine_->Schedule(6'000);
  EXPECT_TRUE(W("team-a/g").admitted());
}

TEST_F(AdmissionChecksTest, RetryReleasesAndRequeuesAfterBackoff) {
  StartReserved();
  Set("team-a/g", CheckState::kRetry, 5'000);
  const Workload& w = W("team-a/g");
  EXPECT_FALSE(w.check_reservation.has_value());
  EXPECT_EQ(w.code, ReasonCode::kAdmissionCheck);
  EXPECT_EQ(w.backoff_until_ms, 15'000);  // base 10 s * 2^0
  EXPECT_EQ(w.checks[0].retry_count, 1);
  EXPECT_EQ(w.checks[0].state, CheckState::kPending);
  engine_->Schedule(15'000);
  EXPECT_TRUE(W("team-a/g").check_reservation.has_value());
}

TEST_F(AdmissionChecksTest, SecondRetryDoublesBackoffUpToTheMaximum) {
  StartReserved(CheckedPolicy(/*limit=*/3));
  Set("team-a/g", CheckState::kRetry, 0);
  engine_->Schedule(10'000);
  Set("team-a/g", CheckState::kRetry, 10'000);
  // 10 s * 2^1 = 20 s, capped at backoffMaxSeconds 15.
  EXPECT_EQ(W("team-a/g").backoff_until_ms, 25'000);
}

TEST_F(AdmissionChecksTest, RetryPastBackoffLimitRejects) {
  StartReserved(CheckedPolicy(/*limit=*/1));
  Set("team-a/g", CheckState::kRetry, 0);  // attempt 1 <= 1: retried
  engine_->Schedule(10'000);
  ASSERT_TRUE(W("team-a/g").check_reservation.has_value());
  const CheckUpdate update = engine_->SetCheckState(
      "team-a/g", kCheck, CheckState::kRetry, "still no capacity", 11'000);
  EXPECT_EQ(update, CheckUpdate::kRejected);  // attempt 2 > 1
  EXPECT_TRUE(W("team-a/g").deactivated);
}

TEST_F(AdmissionChecksTest, RejectedDeactivatesAndFreesTheQuota) {
  StartReserved();
  engine_->AddPod(QueuedPod("team-a", "late", 1), 1);
  Set("team-a/g", CheckState::kRejected, 2'000);
  const Workload& w = W("team-a/g");
  EXPECT_TRUE(w.deactivated);
  EXPECT_EQ(w.backoff_until_ms, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(w.code, ReasonCode::kAdmissionCheck);
  EXPECT_EQ(w.reason.rfind("Deactivated due to AdmissionCheck in Rejected "
                           "state: \"prov\" (from the test)",
                           0),
            0u)
      << w.reason;
  EXPECT_TRUE(W("team-a/late").check_reservation.has_value());
}

// Kueue's CapacityRevoked on an admitted workload: Rejected, so it is
// evicted and deactivated.
TEST_F(AdmissionChecksTest, RejectedAfterAdmissionEvicts) {
  StartReserved();
  Set("team-a/g", CheckState::kReady, 1'000);
  ASSERT_TRUE(W("team-a/g").admitted());
  Set("team-a/g", CheckState::kRejected, 2'000);
  EXPECT_FALSE(W("team-a/g").admitted());
  EXPECT_TRUE(W("team-a/g").placements.empty());
  EXPECT_TRUE(W("team-a/g").deactivated);
}

TEST_F(AdmissionChecksTest, UpdateOfWorkloadHoldingNoQuotaIsIgnored) {
  Start(CheckedPolicy());
  engine_->AddPod(QueuedPod("team-b", "free", 1), 0);
  engine_->Schedule(0);
  EXPECT_EQ(
      engine_->SetCheckState("team-b/free", kCheck, CheckState::kReady, "", 1),
      CheckUpdate::kNotRunning);
  EXPECT_EQ(
      engine_->SetCheckState("team-b/none", kCheck, CheckState::kReady, "", 1),
      CheckUpdate::kUnknownWorkload);
}

TEST_F(AdmissionChecksTest, QueueWithoutChecksAdmitsAtOnce) {
  Start(CheckedPolicy());
  engine_->AddPod(QueuedPod("team-b", "free", 1), 0);
  engine_->Schedule(0);
  EXPECT_TRUE(W("team-b/free").admitted());
}

// onFlavors: the check runs only for workloads assigned one of them.
TEST_F(AdmissionChecksTest, CheckOnOtherFlavorDoesNotRun) {
  Policy policy = CheckedPolicy();
  policy.cluster_queues[0].admission_checks[0].on_flavors = {"spot"};
  Start(policy);
  engine_->AddPod(QueuedPod("team-a", "p", 1), 0);
  engine_->Schedule(0);
  EXPECT_TRUE(W("team-a/p").admitted());
  EXPECT_TRUE(W("team-a/p").checks.empty());
}

// Kueue's reqIsNeeded: a config that manages none of the workload's
// resources needs no request, and the check is Ready at once.
TEST_F(AdmissionChecksTest, UnmanagedResourcesNeedNoRequest) {
  Policy policy = CheckedPolicy();
  policy.provisioning_request_configs[0].managed_resources = {
      "example.com/tpu"};
  Start(policy);
  engine_->AddPod(QueuedPod("team-a", "p", 1), 0);
  engine_->Schedule(0);
  const Workload& w = W("team-a/p");
  EXPECT_TRUE(w.admitted());
  ASSERT_EQ(w.checks.size(), 1u);
  EXPECT_EQ(w.checks[0].message, kNoRequestNeeded);
}

TEST_F(AdmissionChecksTest, ManagedResourceRequestedNeedsTheCheck) {
  Policy policy = CheckedPolicy();
  policy.provisioning_request_configs[0].managed_resources = {"nvidia.com/gpu"};
  Start(policy);
  engine_->AddPod(QueuedPod("team-a", "p", 1), 0);
  engine_->Schedule(0);
  const Workload& w = W("team-a/p");
  EXPECT_FALSE(w.admitted());
  ASSERT_EQ(w.checks.size(), 1u);
  EXPECT_EQ(w.checks[0].state, CheckState::kPending);
}

// A new policy whose ClusterQueue no longer names the check: nothing is
// left to wait for, and the reservation is admitted.
TEST_F(AdmissionChecksTest, CheckRemovedFromQueueAdmitsTheReservation) {
  StartReserved();
  Policy policy = CheckedPolicy();
  policy.cluster_queues[0].admission_checks.clear();
  ASSERT_TRUE(engine_->UpdatePolicy(std::move(policy)).ok());
  engine_->Schedule(1'000);
  EXPECT_TRUE(W("team-a/g").admitted());
  EXPECT_TRUE(W("team-a/g").checks.empty());
}

TEST(AdmissionCheckRulesTest, BackoffDoublesFromBaseAndCapsAtMaximum) {
  const ProvisioningRetryStrategy strategy;  // 60 s, max 1800 s
  EXPECT_EQ(CheckRetryBackoffMs(strategy, 1), 60'000);
  EXPECT_EQ(CheckRetryBackoffMs(strategy, 3), 240'000);  // 60 * 2^2
  EXPECT_EQ(CheckRetryBackoffMs(strategy, 10), 1'800'000);
}

TEST(AdmissionCheckRulesTest, DefaultLimitAllowsThreeRetries) {
  const ProvisioningRetryStrategy strategy;
  EXPECT_TRUE(RetryAllowed(strategy, 2));   // attempt 3 <= 3
  EXPECT_FALSE(RetryAllowed(strategy, 3));  // attempt 4 > 3
}

TEST(AdmissionCheckRulesTest, ResetKeepsRetryCountsButNotReadyOnes) {
  const std::vector<WorkloadCheck> had = {
      {.name = "a", .state = CheckState::kPending, .retry_count = 2},
      {.name = "b", .state = CheckState::kReady, .retry_count = 1}};
  const std::vector<WorkloadCheck> started = StartChecks(had, {"a", "b", "c"});
  ASSERT_EQ(started.size(), 3u);
  EXPECT_EQ(started[0].retry_count, 2);
  EXPECT_EQ(started[1].retry_count, 0);
  EXPECT_EQ(started[2].state, CheckState::kPending);
}

TEST(AdmissionCheckRulesTest, MessageNamesChecksInStateLikeKueue) {
  const std::vector<WorkloadCheck> checks = {
      {.name = "b", .state = CheckState::kRetry, .message = "no capacity"},
      {.name = "c", .state = CheckState::kRetry}};
  EXPECT_EQ(ChecksInStateMessage(checks, CheckState::kRetry),
            "AdmissionChecks in Retry state: \"b\" (no capacity); \"c\"");
}

// Kueue v0.19.2 provisioning/controller_test.go TestReconcile, the rows
// that map a request's conditions to the check's state.
struct VerdictCase {
  const char* kueue_case;
  RequestConditions conditions;
  bool admitted;
  std::optional<CheckState> expected;
};

class RequestVerdictTest : public ::testing::TestWithParam<VerdictCase> {};

TEST_P(RequestVerdictTest, MapsConditionsAsKueuesController) {
  const VerdictCase& c = GetParam();
  const std::optional<CheckVerdict> verdict =
      CheckVerdictOfRequest(c.conditions, c.admitted);
  ASSERT_EQ(verdict.has_value(), c.expected.has_value()) << c.kueue_case;
  if (verdict) {
    EXPECT_EQ(verdict->state, *c.expected) << c.kueue_case;
  }
}

INSTANTIATE_TEST_SUITE_P(
    KueueTestReconcile, RequestVerdictTest,
    ::testing::Values(
        VerdictCase{"when request fails and is retried",
                    {.failed = true, .failed_message = "boom"},
                    false,
                    CheckState::kRetry},
        VerdictCase{"when request is provisioned",
                    {.accepted = true, .provisioned = true},
                    false,
                    CheckState::kReady},
        VerdictCase{"workload sets AdmissionCheck status to Rejected when it "
                    "is not finished and receives CapacityRevoked",
                    {.provisioned = true, .capacity_revoked = true},
                    true,
                    CheckState::kRejected},
        VerdictCase{"Rejected when it is not admitted and receives "
                    "CapacityRevoked",
                    {.capacity_revoked = true},
                    false,
                    CheckState::kRejected},
        VerdictCase{"workload does nothing when admitted and receives "
                    "BookingExpired",
                    {.provisioned = true, .booking_expired = true},
                    true,
                    std::nullopt},
        VerdictCase{"workload retries the admission check when is not "
                    "admitted and receives BookingExpired",
                    {.provisioned = true, .booking_expired = true},
                    false,
                    CheckState::kRetry},
        VerdictCase{"when the request has no conditions yet",
                    {},
                    false,
                    CheckState::kPending},
        VerdictCase{"accepted, not provisioned yet",
                    {.accepted = true},
                    false,
                    CheckState::kPending}));

TEST(RequestVerdictMessageTest, FailureMessageSaysItRetries) {
  const std::optional<CheckVerdict> verdict = CheckVerdictOfRequest(
      {.failed = true, .failed_message = "out of stock"}, false);
  ASSERT_TRUE(verdict.has_value());
  EXPECT_EQ(verdict->message, "Retrying after failure: out of stock");
}

}  // namespace
}  // namespace gpusched
