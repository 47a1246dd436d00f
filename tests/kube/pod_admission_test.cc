#include "api/kube/pod_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "api/codec/k8s_json.h"
#include "simdjson.h"
#include "tests/kube/fake_apiserver.h"

namespace gpusched::kube::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kOurGate[] = "gpusched.io/admission";
const Json kOurRequirement = {
    {"key", "metadata.name"}, {"operator", "In"}, {"values", {"dgx-3"}}};

class PodAdmissionTest : public ::testing::Test {
 protected:
  PodAdmissionTest() : client_(*KubeClient::Create(server_.Config())) {}

  AdmitResult Admit(std::string_view name, std::string_view node,
                    std::string uid = "") {
    absl::StatusOr<AdmitResult> result = AdmitPod(
        *client_,
        {.namespace_name = "team-a", .name = std::string(name), .uid = uid},
        node);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : AdmitResult{AdmitOutcome::kPodGone, ""};
  }
  // The stored pod as the pod watch decodes it.
  Pod Watched(std::string_view key) {
    simdjson::dom::parser parser;
    absl::StatusOr<Pod> pod =
        DecodePod(parser.parse(server_.Pod(key).dump()).value(), "Pod");
    EXPECT_TRUE(pod.ok()) << pod.status();
    return pod.ok() ? *pod : Pod{};
  }
  AdmitResult AdmitWatched(const Pod& watched, std::string_view node) {
    absl::StatusOr<AdmitResult> result = AdmitPod(*client_,
                                                  {.namespace_name = "team-a",
                                                   .name = watched.meta.name,
                                                   .uid = watched.meta.uid},
                                                  node, {}, &watched);
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : AdmitResult{AdmitOutcome::kPodGone, ""};
  }
  Json Required(std::string_view key) {
    return server_.Pod(key)["spec"]["affinity"]["nodeAffinity"]
                           ["requiredDuringSchedulingIgnoredDuringExecution"];
  }

  FakeApiServer server_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(PodAdmissionTest, GatedPodIsPinnedUngatedAndMarkedInOnePatch) {
  server_.AddPod(Gated(GpuPod("team-a/ring-0", 4), {kOurGate}));
  AdmitResult result = Admit("ring-0", "dgx-3");
  EXPECT_EQ(result.outcome, AdmitOutcome::kUngated) << result.message;
  Json pod = server_.Pod("team-a/ring-0");
  EXPECT_FALSE(pod["spec"].contains("schedulingGates"));  // null removes it
  EXPECT_EQ(
      Required("team-a/ring-0"),
      Json({{"nodeSelectorTerms", {{{"matchFields", {kOurRequirement}}}}}}));
  EXPECT_EQ(pod["metadata"]["labels"]["gpusched.io/admitted"], "true");
  EXPECT_EQ(pod["metadata"]["annotations"]["gpusched.io/assigned-node"],
            "dgx-3");
  EXPECT_EQ(server_.Count("PATCH pod"), 1);
  EXPECT_EQ(server_.Count("PATCH pod/status"), 0);  // no nomination needed
}

TEST_F(PodAdmissionTest, EveryExistingTermKeepsItsRequirementsAndGainsOurs) {
  const Json zone = {{"key", "topology.kubernetes.io/zone"},
                     {"operator", "In"},
                     {"values", {"a", "b"}}};
  const Json gpu = {{"key", "nvidia.com/gpu.product"}, {"operator", "Exists"}};
  const Json not_n9 = {
      {"key", "metadata.name"}, {"operator", "NotIn"}, {"values", {"n9"}}};
  Json pod = Gated(GpuPod("team-a/ring-1", 4), {kOurGate});
  pod["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           {{{"matchExpressions", {zone}}},
            {{"matchExpressions", {gpu}}, {"matchFields", {not_n9}}}}}}},
        {"preferredDuringSchedulingIgnoredDuringExecution",
         {{{"weight", 5}, {"preference", {{"matchExpressions", {gpu}}}}}}}}}};
  server_.AddPod(pod);
  ASSERT_EQ(Admit("ring-1", "dgx-3").outcome, AdmitOutcome::kUngated);
  Json terms = Required("team-a/ring-1")["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 2u);  // narrowed, not replaced
  EXPECT_EQ(terms[0], Json({{"matchExpressions", {zone}},
                            {"matchFields", {kOurRequirement}}}));
  EXPECT_EQ(terms[1], Json({{"matchExpressions", {gpu}},
                            {"matchFields", {not_n9, kOurRequirement}}}));
  EXPECT_EQ(server_
                .Pod("team-a/ring-1")
                    ["spec"]["affinity"]["nodeAffinity"]
                    ["preferredDuringSchedulingIgnoredDuringExecution"]
                .size(),
            1u);
}

TEST_F(PodAdmissionTest, OnlyOurGateIsLifted) {
  server_.AddPod(Gated(GpuPod("team-a/ring-2", 1),
                       {"example.com/quota", kOurGate, "example.com/data"}));
  ASSERT_EQ(Admit("ring-2", "dgx-3").outcome, AdmitOutcome::kUngated);
  EXPECT_EQ(
      server_.Pod("team-a/ring-2")["spec"]["schedulingGates"],
      Json({{{"name", "example.com/quota"}}, {{"name", "example.com/data"}}}));
}

// Issue G: the watch already holds the pod, so an admission is one PATCH
// with no GET before it, and the patch it sends keeps every other gate and
// every term exactly as a patch made against a freshly read pod does.
TEST_F(PodAdmissionTest, WatchedPodIsAdmittedWithoutAReadAndKeepsItsTerms) {
  const Json zone = {{"key", "topology.kubernetes.io/zone"},
                     {"operator", "In"},
                     {"values", {"a", "b"}}};
  const Json gpu = {{"key", "nvidia.com/gpu.product"}, {"operator", "Exists"}};
  const Json not_n9 = {
      {"key", "metadata.name"}, {"operator", "NotIn"}, {"values", {"n9"}}};
  Json pod = Gated(GpuPod("team-a/ring-5", 4),
                   {"example.com/quota", kOurGate, "example.com/data"});
  pod["spec"]["affinity"] = {
      {"nodeAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           {{{"matchExpressions", {zone}}},
            {{"matchExpressions", {gpu}}, {"matchFields", {not_n9}}}}}}}}}};
  server_.AddPod(pod);
  pod["metadata"]["name"] = "ring-6";
  server_.AddPod(pod);
  ASSERT_EQ(Admit("ring-5", "dgx-3").outcome, AdmitOutcome::kUngated);
  ASSERT_EQ(server_.Count("GET pod"), 1);

  ASSERT_EQ(AdmitWatched(Watched("team-a/ring-6"), "dgx-3").outcome,
            AdmitOutcome::kUngated);
  EXPECT_EQ(server_.Count("GET pod"), 1);  // none for the watched pod
  EXPECT_EQ(server_.Count("PATCH pod"), 2);
  Json read = server_.Pod("team-a/ring-5");
  Json watched = server_.Pod("team-a/ring-6");
  EXPECT_EQ(watched["spec"]["affinity"], read["spec"]["affinity"]);
  EXPECT_EQ(watched["spec"]["schedulingGates"],
            read["spec"]["schedulingGates"]);
  EXPECT_EQ(watched["metadata"]["labels"], read["metadata"]["labels"]);
  EXPECT_EQ(watched["metadata"]["annotations"],
            read["metadata"]["annotations"]);
}

// A watch that is behind holds an older resourceVersion: the patch made
// against it loses with a 409, and the pod is read and written again.
TEST_F(PodAdmissionTest, StaleWatchedPodCostsOneConflictAndARead) {
  server_.AddPod(Gated(GpuPod("team-a/ring-7", 1), {kOurGate}));
  const Pod stale = Watched("team-a/ring-7");
  server_.UpdatePod("team-a/ring-7",
                    [](Json& pod) { pod["metadata"]["labels"]["team"] = "a"; });
  ASSERT_EQ(AdmitWatched(stale, "dgx-3").outcome, AdmitOutcome::kUngated);
  EXPECT_EQ(server_.Count("GET pod"), 1);
  EXPECT_EQ(server_.Count("PATCH pod"), 2);
  Json pod = server_.Pod("team-a/ring-7");
  EXPECT_EQ(pod["metadata"]["labels"]["team"], "a");  // the newer write kept
  EXPECT_FALSE(pod["spec"].contains("schedulingGates"));
}

// An admission of a pod that was since recreated under the same name is
// not written against the watched newer pod: the pod is read, and the
// admission finds its pod gone.
TEST_F(PodAdmissionTest, WatchedPodOfAnotherUidIsNotWrittenAgainst) {
  server_.AddPod(Gated(GpuPod("team-a/ring-8", 1), {kOurGate}));
  const Pod newer = Watched("team-a/ring-8");
  absl::StatusOr<AdmitResult> result = AdmitPod(*client_,
                                                {.namespace_name = "team-a",
                                                 .name = "ring-8",
                                                 .uid = "uid-of-an-older-pod"},
                                                "dgx-3", {}, &newer);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->outcome, AdmitOutcome::kPodGone);
  EXPECT_EQ(server_.Count("PATCH pod"), 0);
}

TEST_F(PodAdmissionTest, LostRaceIsRetriedWithAFreshRead) {
  server_.AddPod(Gated(GpuPod("team-a/ring-3", 1), {kOurGate}));
  server_.RaceNextGets("team-a/ring-3", 2);
  EXPECT_EQ(Admit("ring-3", "dgx-3").outcome, AdmitOutcome::kUngated);
  EXPECT_EQ(server_.Count("GET pod"), 3);    // 2 races lost, then won
  EXPECT_EQ(server_.Count("PATCH pod"), 3);  // 409, 409, 200
  EXPECT_FALSE(
      server_.Pod("team-a/ring-3")["spec"].contains("schedulingGates"));
}

TEST_F(PodAdmissionTest, EndlessRaceIsAbortedAfterTheAttemptBudget) {
  server_.AddPod(Gated(GpuPod("team-a/ring-4", 1), {kOurGate}));
  server_.RaceNextGets("team-a/ring-4", 100);
  absl::StatusOr<AdmitResult> result = AdmitPod(
      *client_, {.namespace_name = "team-a", .name = "ring-4"}, "dgx-3");
  EXPECT_EQ(result.status().code(), absl::StatusCode::kAborted);
  EXPECT_EQ(server_.Count("PATCH pod"), kMaxAdmitAttempts);
}

TEST_F(PodAdmissionTest, SecondAdmissionOnTheSameNodeWritesNothing) {
  server_.AddPod(Gated(GpuPod("team-a/ring-5", 1), {kOurGate}));
  ASSERT_EQ(Admit("ring-5", "dgx-3").outcome, AdmitOutcome::kUngated);
  EXPECT_EQ(Admit("ring-5", "dgx-3").outcome, AdmitOutcome::kAlreadyAdmitted);
  EXPECT_EQ(server_.Count("PATCH pod"), 1);
  EXPECT_EQ(server_.Count("PATCH pod/status"), 0);
}

TEST_F(PodAdmissionTest, UngatedPodPinnedToAnotherNodeIsANodeConflict) {
  server_.AddPod(Gated(GpuPod("team-a/ring-6", 1), {kOurGate}));
  ASSERT_EQ(Admit("ring-6", "dgx-3").outcome, AdmitOutcome::kUngated);
  ASSERT_TRUE(
      ClearAdmission(*client_, {.namespace_name = "team-a", .name = "ring-6"})
          .ok());
  AdmitResult again = Admit("ring-6", "dgx-7");
  EXPECT_EQ(again.outcome, AdmitOutcome::kNodeConflict);
  EXPECT_THAT(again.message, HasSubstr("pins it to node dgx-3"));
}

TEST_F(PodAdmissionTest, PodWithoutTheGateIsLabelledThenNominated) {
  server_.AddPod(GpuPod("team-a/solo", 4));
  AdmitResult result = Admit("solo", "dgx-3");
  EXPECT_EQ(result.outcome, AdmitOutcome::kNominated) << result.message;
  Json pod = server_.Pod("team-a/solo");
  EXPECT_EQ(pod["metadata"]["labels"]["gpusched.io/admitted"], "true");
  EXPECT_EQ(pod["metadata"]["annotations"]["gpusched.io/assigned-node"],
            "dgx-3");
  EXPECT_EQ(pod["status"]["nominatedNodeName"], "dgx-3");
  EXPECT_FALSE(pod["spec"].contains("affinity"));  // immutable once ungated
  EXPECT_EQ(server_.Count("PATCH pod"), 1);
  EXPECT_EQ(server_.Count("PATCH pod/status"), 1);
}

TEST_F(PodAdmissionTest, PodBoundElsewhereIsANodeConflict) {
  server_.AddPod(GpuPod("team-a/bound", 1, "dgx-1"));
  EXPECT_EQ(Admit("bound", "dgx-3").outcome, AdmitOutcome::kNodeConflict);
  EXPECT_EQ(server_.Count("PATCH pod"), 0);
}

TEST_F(PodAdmissionTest, MissingOrRecreatedPodIsGone) {
  EXPECT_EQ(Admit("nobody", "dgx-3").outcome, AdmitOutcome::kPodGone);
  server_.AddPod(Gated(GpuPod("team-a/reborn", 1), {kOurGate}));
  EXPECT_EQ(Admit("reborn", "dgx-3", "uid-of-the-deleted-pod").outcome,
            AdmitOutcome::kPodGone);
  EXPECT_EQ(server_.Count("PATCH pod"), 0);
}

TEST_F(PodAdmissionTest, ClearRemovesLabelAnnotationAndNomination) {
  server_.AddPod(GpuPod("team-a/solo", 4));
  ASSERT_EQ(Admit("solo", "dgx-3").outcome, AdmitOutcome::kNominated);
  absl::StatusOr<ClearResult> cleared = ClearAdmission(
      *client_,
      {.namespace_name = "team-a", .name = "solo", .uid = "uid-team-a-solo"});
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(cleared->outcome, ClearOutcome::kCleared);
  Json pod = server_.Pod("team-a/solo");
  EXPECT_FALSE(pod["metadata"]["labels"].contains("gpusched.io/admitted"));
  EXPECT_FALSE(
      pod["metadata"]["annotations"].contains("gpusched.io/assigned-node"));
  EXPECT_FALSE(pod["status"].contains("nominatedNodeName"));
}

TEST_F(PodAdmissionTest, ClearingAMissingPodIsGoneNotAnError) {
  absl::StatusOr<ClearResult> cleared =
      ClearAdmission(*client_, {.namespace_name = "team-a", .name = "nobody"});
  ASSERT_TRUE(cleared.ok()) << cleared.status();
  EXPECT_EQ(cleared->outcome, ClearOutcome::kPodGone);
}

// The fake refuses what the real API server refuses, so the tests above
// would catch a patch that replaced terms or touched an ungated pod.
TEST_F(PodAdmissionTest, FakeRefusesAffinityChangesTheApiServerRefuses) {
  server_.AddPod(GpuPod("team-a/ungated", 1));
  const std::string pin =
      R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringScheduling)"
      R"(IgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":)"
      R"([{"key":"metadata.name","operator":"In","values":["n1"]}]}]}}}}})";
  absl::StatusOr<std::string> patched =
      client_->Patch("/api/v1/namespaces/team-a/pods/ungated", pin);
  EXPECT_EQ(patched.status().code(), absl::StatusCode::kInvalidArgument);
  Json gated = Gated(GpuPod("team-a/gated", 1), {kOurGate});
  gated["spec"]["affinity"]["nodeAffinity"]
       ["requiredDuringSchedulingIgnoredDuringExecution"] = {
           {"nodeSelectorTerms",
            {{{"matchExpressions",
               {{{"key", "zone"}, {"operator", "Exists"}}}}}}}};
  server_.AddPod(gated);
  patched = client_->Patch("/api/v1/namespaces/team-a/pods/gated", pin);
  EXPECT_EQ(patched.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(patched.status().message()),
              HasSubstr("only additions"));
}

}  // namespace
}  // namespace gpusched::kube::testing
