// The human output of queue, status and explain, from the contract's
// answers (contract_samples.h) decoded as the plugin decodes them.
#include "api/cli/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/codec/visibility_decode.h"
#include "tests/cli/contract_samples.h"

namespace gpusched::cli {
namespace {

using testing::kNow;

template <typename T>
T Decoded(absl::StatusOr<T> decoded) {
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  return decoded.ok() ? *std::move(decoded) : T{};
}

TEST(RenderTest, QueueListsWorkloadsInClusterQueueOrder) {
  std::vector<PendingItem> items =
      Decoded(DecodePendingWorkloads(testing::kTrainingPending));
  std::vector<PendingItem> inference =
      Decoded(DecodePendingWorkloads(testing::kInferencePending));
  items.insert(items.end(), inference.begin(), inference.end());
  // Ages 25m20s, 4h and 45s print as kubectl prints them; starts 12m and
  // 45m30s ahead, and none (a forecast that found no start).
  EXPECT_EQ(RenderQueue(items, kNow), R"(
NAME           LOCALQUEUE   POSITION   PRIORITY   REASON             EXPECTED START   AGE
llm-pretrain   training     0          100        WaitingForQuota    in 12m           25m
batch-embed    inference    1          50         WaitingForQuota    in 45m           4h
finetune-7b    training     2          10         InsufficientGPUs   unknown          45s
)" + 1);
}

TEST(RenderTest, StatusHasARowPerFlavorAndResourceThenTheCohorts) {
  // cpu in millicores and memory in bytes print as kubectl's quantities
  // (256000 -> 256, 2^41 -> 2Ti); a queue without quota prints <none>.
  EXPECT_EQ(
      RenderStatus(Decoded(DecodeClusterQueueList(testing::kClusterQueues)),
                   Decoded(DecodeCohortList(testing::kCohorts))),
      R"(
CLUSTERQUEUE   COHORT     FLAVOR   RESOURCE         NOMINAL   USED      BORROWED   LENT     PENDING   ADMITTED
gpu            research   h100     nvidia.com/gpu   32        40        8          0        3         4
gpu            research   h100     cpu              256       181500m   0          0        3         4
gpu            research   h100     memory           2Ti       960Gi     0          0        3         4
spare          <none>     <none>   <none>           <none>    <none>    <none>     <none>   0         0

COHORT     PARENT   FLAVOR   RESOURCE         NOMINAL   USED   BORROWED   LENT
research   <none>   h100     nvidia.com/gpu   64        56     0          8
)" + 1);
}

TEST(RenderTest, ExplainShowsWhyWhenAndWhatIsAhead) {
  // Positions count from 0, so each is also how many wait ahead. The
  // second workload ahead is another namespace's: the server leaves its
  // name out.
  EXPECT_EQ(
      RenderExplanation(
          Decoded(DecodeWorkloadExplanation(testing::kExplainPending)), kNow),
      R"(
Name:             team-a/finetune-7b
State:            Pending
Members:          2 (minMember 2)
LocalQueue:       training, position 1 (1 ahead, 2 pending)
ClusterQueue:     gpu, position 2 (2 ahead, 3 pending)
Cohort:           research
Reason:           WaitingForQuota
Message:          needs 16 nvidia.com/gpu of flavor h100; the queue may use 8 more
Expected start:   in 45m (2026-11-28T02:45:00Z), at the latest in 120m (2026-11-28T04:00:00Z)
Forecast made:    30s ago
Preemption:       would preempt nothing: lower-priority workloads hold no h100 GPUs
Preempt now?:     no: nothing running may be preempted for it (its policy allows no victim among the workloads that hold what it needs)

Quota:
  LEVEL              FLAVOR   RESOURCE         NOMINAL   USED   BORROWED   AVAILABLE   MOST EVER   BORROWING LIMIT   ASKS
  clusterqueue/gpu   h100     nvidia.com/gpu   32        40     8          8           48          16                16
  cohort/research    h100     nvidia.com/gpu   64        56     0          8           64          <none>            16

Placement:
  VERDICT            NODES   EXAMPLES
  fits               2       gpu-node-3,gpu-node-7
  InsufficientGPUs   6       gpu-node-1

Ahead in ClusterQueue gpu:
  POSITION   NAMESPACE   NAME           REASON            EXPECTED START
  0          team-a      llm-pretrain   WaitingForQuota   in 12m
  1          (other)     (hidden)       WaitingForQuota   unknown
)" + 1);
}

TEST(RenderTest, ExplainOfAnAdmittedWorkloadPrintsItsState) {
  EXPECT_EQ(
      RenderExplanation(
          Decoded(DecodeWorkloadExplanation(testing::kExplainAdmitted)), kNow),
      R"(
Name:             team-a/serve-api
State:            Admitted
LocalQueue:       inference
ClusterQueue:     gpu
Cohort:           research
)" + 1);
}

TEST(RenderTest, ExplainWithoutAForecastSaysSo) {
  ExplainedWorkload pending{.name = "x", .state = "Pending"};
  EXPECT_EQ(RenderExplanation(pending, kNow), R"(
Name:             x
State:            Pending
Expected start:   unknown (no forecast yet)
)" + 1);
  pending.start = ForecastedStart{.unknown_reason = "no node will ever fit it"};
  EXPECT_EQ(RenderExplanation(pending, kNow), R"(
Name:             x
State:            Pending
Expected start:   unknown: no node will ever fit it
)" + 1);
}

// The server's own answer, as deploy/README.md quotes it from the
// end-to-end TestForecastStartComesTrue (abridged there).
constexpr std::string_view kServerExplanation = R"({
  "kind": "WorkloadExplanation", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "metadata": {"name": "waiting", "namespace": "forecast"},
  "state": "Pending", "localQueue": "lq", "clusterQueue": "forecast", "cohort": "",
  "positionInClusterQueue": 0, "pendingInClusterQueue": 1,
  "positionInLocalQueue": 0, "pendingInLocalQueue": 1,
  "reasonCode": "WaitingForQuota",
  "message": "queue forecast: needs 2 nvidia.com/gpu of flavor h100; 0 free of nominal 2, cohort has 0 to lend",
  "members": 2, "minMember": 2,
  "quota": [{"level": "forecast", "cohort": false, "flavor": "h100", "resource": "nvidia.com/gpu",
             "nominal": 2, "used": 2, "borrowed": 0, "available": 0, "mostEver": 2, "asks": 2}],
  "placement": [{"verdict": "fits", "nodes": 10, "examples": ["a100-mig-0", "a100-mig-1", "a100-mig-2"]}],
  "preemption": "ClusterQueue forecast may preempt: withinClusterQueue Never, reclaimWithinCohort Never, borrowWithinCohort Never; so it waits for running workloads to finish",
  "start": {"forecastAt": "2026-11-28T02:24:33Z", "expected": "2026-11-28T02:24:52Z"},
  "ahead": []})";

TEST(RenderTest, ExplainOfTheServersOwnAnswer) {
  const int64_t now = 1795832673;  // 2026-11-28T02:24:33Z, the forecast's
  EXPECT_EQ(RenderExplanation(
                Decoded(DecodeWorkloadExplanation(kServerExplanation)), now),
            R"(
Name:             forecast/waiting
State:            Pending
Members:          2 (minMember 2)
LocalQueue:       lq, position 0 (0 ahead, 1 pending)
ClusterQueue:     forecast, position 0 (0 ahead, 1 pending)
Reason:           WaitingForQuota
Message:          queue forecast: needs 2 nvidia.com/gpu of flavor h100; 0 free of nominal 2, cohort has 0 to lend
Expected start:   in 19s (2026-11-28T02:24:52Z)
Forecast made:    0s ago
Preemption:       ClusterQueue forecast may preempt: withinClusterQueue Never, reclaimWithinCohort Never, borrowWithinCohort Never; so it waits for running workloads to finish

Quota:
  LEVEL                   FLAVOR   RESOURCE         NOMINAL   USED   BORROWED   AVAILABLE   MOST EVER   BORROWING LIMIT   ASKS
  clusterqueue/forecast   h100     nvidia.com/gpu   2         2      0          0           2           <none>            2

Placement:
  VERDICT   NODES   EXAMPLES
  fits      10      a100-mig-0,a100-mig-1,a100-mig-2
)" + 1);
}

TEST(RenderTest, ExplainSaysWhenOnlyTheFirstWorkloadsAheadAreListed) {
  const ExplainedWorkload e{
      .name = "x",
      .state = "Pending",
      .cluster_queue = "gpu",
      .position_in_cluster_queue = 25,  // the server lists at most 20
      .ahead = {{.position_in_cluster_queue = 0, .reason_code = "Preempting"}}};
  EXPECT_THAT(RenderExplanation(e, kNow),
              ::testing::HasSubstr("\nAhead in ClusterQueue gpu (first 1 of "
                                   "25):\n  POSITION   NAMESPACE   NAME"));
}

}  // namespace
}  // namespace gpusched::cli
