// Answers of the visibility API shaped as its contract says (the server
// writes them in api/codec/visibility_json.h), for the plugin's tests. The
// clock of every test that prints them reads kNow, 2026-11-28T02:00:00Z.
#ifndef GPUSCHED_TESTS_CLI_CONTRACT_SAMPLES_H_
#define GPUSCHED_TESTS_CLI_CONTRACT_SAMPLES_H_

#include <cstdint>
#include <string_view>

namespace gpusched::cli::testing {

inline constexpr int64_t kNow = 1795831200;  // 2026-11-28T02:00:00Z

// namespaces/team-a/localqueues
inline constexpr std::string_view kLocalQueues = R"({
  "kind": "LocalQueueList", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "items": [
    {"kind": "LocalQueue", "metadata": {"name": "training", "namespace": "team-a"},
     "status": {"clusterQueue": "gpu", "pendingWorkloads": 2, "admittedWorkloads": 3}},
    {"kind": "LocalQueue", "metadata": {"name": "inference", "namespace": "team-a"},
     "status": {"clusterQueue": "gpu", "pendingWorkloads": 1, "admittedWorkloads": 1}}
  ]})";

// namespaces/team-a/localqueues/training/pendingworkloads: a forecast for
// the first (in 12 minutes), none for the second.
inline constexpr std::string_view kTrainingPending = R"({
  "kind": "PendingWorkloadsSummary", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "metadata": {},
  "items": [
    {"metadata": {"name": "llm-pretrain", "namespace": "team-a",
                  "creationTimestamp": "2026-11-28T01:34:40Z"},
     "priority": 100, "localQueueName": "training",
     "positionInClusterQueue": 0, "positionInLocalQueue": 0,
     "reasonCode": "WaitingForQuota",
     "expectedStart": "2026-11-28T02:12:00Z", "latestStart": "2026-11-28T02:40:00Z"},
    {"metadata": {"name": "finetune-7b", "namespace": "team-a",
                  "creationTimestamp": "2026-11-28T01:59:15Z"},
     "priority": 10, "localQueueName": "training",
     "positionInClusterQueue": 2, "positionInLocalQueue": 1,
     "reasonCode": "InsufficientGPUs",
     "startUnknownReason": "needs 16 GPUs in one NVLink domain; none will free"}
  ]})";

// namespaces/team-a/localqueues/inference/pendingworkloads
inline constexpr std::string_view kInferencePending = R"({
  "kind": "PendingWorkloadsSummary", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "items": [
    {"metadata": {"name": "batch-embed", "namespace": "team-a",
                  "creationTimestamp": "2026-11-27T22:00:00Z"},
     "priority": 50, "localQueueName": "inference",
     "positionInClusterQueue": 1, "positionInLocalQueue": 0,
     "reasonCode": "WaitingForQuota", "expectedStart": "2026-11-28T02:45:30Z"}
  ]})";

// clusterqueues
inline constexpr std::string_view kClusterQueues = R"({
  "kind": "ClusterQueueList", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "metadata": {},
  "items": [
    {"kind": "ClusterQueue", "apiVersion": "visibility.gpusched.io/v1alpha1",
     "metadata": {"name": "gpu"},
     "status": {"cohort": "research", "pendingWorkloads": 3, "admittedWorkloads": 4,
       "flavorsUsage": [
         {"name": "h100", "resources": [
           {"name": "nvidia.com/gpu", "nominal": 32, "used": 40, "borrowed": 8, "lent": 0,
            "borrowingLimit": 16},
           {"name": "cpu", "nominal": 256000, "used": 181500, "borrowed": 0, "lent": 0},
           {"name": "memory", "nominal": 2199023255552, "used": 1030792151040,
            "borrowed": 0, "lent": 0}]}]}},
    {"kind": "ClusterQueue", "apiVersion": "visibility.gpusched.io/v1alpha1",
     "metadata": {"name": "spare"},
     "status": {"cohort": "", "pendingWorkloads": 0, "admittedWorkloads": 0}}
  ]})";

// cohorts
inline constexpr std::string_view kCohorts = R"({
  "kind": "CohortList", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "items": [
    {"kind": "Cohort", "metadata": {"name": "research"},
     "status": {"parent": "",
       "flavorsUsage": [{"name": "h100", "resources": [
         {"name": "nvidia.com/gpu", "nominal": 64, "used": 56, "borrowed": 0, "lent": 8}]}]}}
  ]})";

// namespaces/team-a/workloads/finetune-7b/explain
inline constexpr std::string_view kExplainPending = R"json({
  "kind": "WorkloadExplanation", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "metadata": {"name": "finetune-7b", "namespace": "team-a"},
  "state": "Pending", "localQueue": "training", "clusterQueue": "gpu",
  "cohort": "research",
  "positionInClusterQueue": 2, "pendingInClusterQueue": 3,
  "positionInLocalQueue": 1, "pendingInLocalQueue": 2,
  "reasonCode": "WaitingForQuota",
  "message": "needs 16 nvidia.com/gpu of flavor h100; the queue may use 8 more",
  "members": 2, "minMember": 2,
  "quota": [
    {"level": "gpu", "cohort": false, "flavor": "h100", "resource": "nvidia.com/gpu",
     "nominal": 32, "used": 40, "borrowed": 8, "available": 8, "mostEver": 48,
     "borrowingLimit": 16, "asks": 16},
    {"level": "research", "cohort": true, "flavor": "h100", "resource": "nvidia.com/gpu",
     "nominal": 64, "used": 56, "borrowed": 0, "available": 8, "mostEver": 64, "asks": 16}
  ],
  "placement": [
    {"verdict": "fits", "nodes": 2, "examples": ["gpu-node-3", "gpu-node-7"]},
    {"verdict": "InsufficientGPUs", "nodes": 6, "examples": ["gpu-node-1"]}
  ],
  "preemption": "would preempt nothing: lower-priority workloads hold no h100 GPUs",
  "preemptionDryRun": {"verdict": "NoCandidates",
    "summary": "no: nothing running may be preempted for it (its policy allows no victim among the workloads that hold what it needs)",
    "victims": []},
  "start": {"forecastAt": "2026-11-28T01:59:30Z", "expected": "2026-11-28T02:45:00Z",
            "latest": "2026-11-28T04:00:00Z"},
  "ahead": [
    {"namespace": "team-a", "name": "llm-pretrain", "positionInClusterQueue": 0,
     "reasonCode": "WaitingForQuota", "expectedStart": "2026-11-28T02:12:00Z"},
    {"positionInClusterQueue": 1, "reasonCode": "WaitingForQuota"}
  ]})json";

// namespaces/team-a/workloads/serve-api/explain: admitted, not an error.
inline constexpr std::string_view kExplainAdmitted = R"({
  "kind": "WorkloadExplanation", "apiVersion": "visibility.gpusched.io/v1alpha1",
  "metadata": {"name": "serve-api", "namespace": "team-a"},
  "state": "Admitted", "localQueue": "inference", "clusterQueue": "gpu",
  "cohort": "research"})";

}  // namespace gpusched::cli::testing

#endif  // GPUSCHED_TESTS_CLI_CONTRACT_SAMPLES_H_
