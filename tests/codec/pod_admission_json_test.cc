// What admission reads of a pod and the patches it writes.
#include "api/codec/pod_admission_json.h"

#include <gtest/gtest.h>

#include <string>

#include "api/codec/k8s_json.h"

namespace gpusched {
namespace {

// A gated pod with another gate and a required affinity term.
constexpr char kGatedPod[] = R"({
  "metadata": {"name": "p", "namespace": "ml", "uid": "u1",
               "resourceVersion": "41",
               "labels": {"gpusched.io/admitted": "true"},
               "annotations": {"gpusched.io/assigned-node": "dgx-1"}},
  "spec": {"nodeName": "",
           "schedulingGates": [{"name": "example.com/other"},
                               {"name": "gpusched.io/admission"}],
           "affinity": {"nodeAffinity": {
             "requiredDuringSchedulingIgnoredDuringExecution": {
               "nodeSelectorTerms": [{
                 "matchExpressions": [{"key": "zone", "operator": "In",
                                       "values": ["a"]}]}]}}}},
  "status": {"nominatedNodeName": "dgx-2"}})";

TEST(PodAdmissionJsonTest, ReadsWhatAdmissionNeeds) {
  absl::StatusOr<PodAdmissionView> view = DecodePodAdmissionView(kGatedPod);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_EQ(view->uid, "u1");
  EXPECT_EQ(view->resource_version, "41");
  EXPECT_EQ(view->admitted_label, "true");
  EXPECT_EQ(view->assigned_node, "dgx-1");
  EXPECT_EQ(view->nominated, "dgx-2");
  EXPECT_TRUE(view->gated);
  EXPECT_EQ(view->other_gates,
            std::vector<std::string>{R"({"name":"example.com/other"})"});
  ASSERT_EQ(view->terms.size(), 1u);
  EXPECT_EQ(view->PinnedNode(), "");
}

// The pod as the API server answers it and as the watch delivered it give
// the same patch: the watched view can stand in for a GET.
TEST(PodAdmissionJsonTest, WatchedAndReadPodsPatchAlike) {
  absl::StatusOr<PodAdmissionView> read = DecodePodAdmissionView(kGatedPod);
  absl::StatusOr<Pod> watched = PodFromJson(kGatedPod);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(watched.ok()) << watched.status();
  EXPECT_EQ(EncodeUngatePatch(*read, "dgx-3"),
            EncodeUngatePatch(PodAdmissionViewOf(*watched), "dgx-3"));
}

TEST(PodAdmissionJsonTest, UngatePatchPinsEveryTermAndKeepsOtherGates) {
  absl::StatusOr<PodAdmissionView> view = DecodePodAdmissionView(kGatedPod);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(
      EncodeUngatePatch(*view, "dgx-3"),
      R"({"metadata":{"resourceVersion":"41","labels":{"gpusched.io/admitted":"true"},)"
      R"("annotations":{"gpusched.io/assigned-node":"dgx-3"}},"spec":{"schedulingGates":)"
      R"([{"name":"example.com/other"}],"affinity":{"nodeAffinity":{"requiredDuring)"
      R"(SchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":)"
      R"([{"key":"zone","operator":"In","values":["a"]}],"matchFields":[{"key":)"
      R"("metadata.name","operator":"In","values":["dgx-3"]}]}]}}}}})");
}

// Kueue's two gates go with gpusched's on admission; others stay.
TEST(PodAdmissionJsonTest, UngatePatchLiftsKueuesGatesToo) {
  std::string pod = kGatedPod;
  const std::string ours = R"({"name": "gpusched.io/admission"})";
  pod.replace(pod.find(ours), ours.size(),
              R"({"name": "kueue.x-k8s.io/admission"},)"
              R"({"name": "kueue.x-k8s.io/topology"})");
  absl::StatusOr<PodAdmissionView> view = DecodePodAdmissionView(pod);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_TRUE(view->gated);
  EXPECT_EQ(view->other_gates,
            std::vector<std::string>{R"({"name":"example.com/other"})"});
  absl::StatusOr<Pod> watched = PodFromJson(pod);
  ASSERT_TRUE(watched.ok()) << watched.status();
  EXPECT_TRUE(PodAdmissionViewOf(*watched).gated);
  EXPECT_EQ(PodAdmissionViewOf(*watched).other_gates, view->other_gates);
}

TEST(PodAdmissionJsonTest, ClearingPatchesRemoveWithNull) {
  EXPECT_EQ(
      EncodeAdmittedMarkPatch("7", ""),
      R"({"metadata":{"resourceVersion":"7","labels":{"gpusched.io/admitted":null},)"
      R"("annotations":{"gpusched.io/assigned-node":null}}})");
  EXPECT_EQ(
      EncodeNominationPatch("8", ""),
      R"({"metadata":{"resourceVersion":"8"},"status":{"nominatedNodeName":null}})");
  EXPECT_EQ(
      EncodeNominationPatch("8", "n"),
      R"({"metadata":{"resourceVersion":"8"},"status":{"nominatedNodeName":"n"}})");
}

TEST(PodAdmissionJsonTest, MalformedPodsNameTheField) {
  struct Case {
    std::string json;
    std::string message;
  } cases[] = {
      {R"({"spec":{"schedulingGates":{}}})",
       "Pod.spec.schedulingGates: expected array, got object"},
      {R"({"spec":{"schedulingGates":[{"name":1}]}})",
       "Pod.spec.schedulingGates[0].name: expected string, got number"},
      {R"({"spec":{"affinity":{"nodeAffinity":{"requiredDuringScheduling)"
       R"(IgnoredDuringExecution":{"nodeSelectorTerms":[{"matchFields":{}}]}}}}})",
       "Pod.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuring"
       "Execution.nodeSelectorTerms[0].matchFields: expected array, got "
       "object"},
      {R"({"metadata":{"uid":5}})",
       "Pod.metadata.uid: expected string, got number"},
      {R"({"status":[]})", "Pod.status: expected object, got array"},
      {R"("pod")", "Pod: expected object, got string"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(DecodePodAdmissionView(c.json).status().message(), c.message)
        << c.json;
  }
  EXPECT_FALSE(DecodePodAdmissionView("{").ok());
}

// Kueue's podSetUpdates of a provisioned request go with the admission:
// annotations beside gpusched's, node selector entries added.
TEST(PodAdmissionJsonTest, UngatePatchCarriesTheChecksUpdate) {
  absl::StatusOr<PodAdmissionView> view = DecodePodAdmissionView(kGatedPod);
  ASSERT_TRUE(view.ok());
  const std::string patch = EncodeUngatePatch(
      *view, "dgx-3",
      PodSetUpdate{.annotations = {{"autoscaling.x-k8s.io/"
                                    "consume-provisioning-request",
                                    "g-prov-1"}},
                   .node_selector = {{"pool", "new"}}});
  EXPECT_NE(patch.find(R"("annotations":{"gpusched.io/assigned-node":"dgx-3",)"
                       R"("autoscaling.x-k8s.io/consume-provisioning-request":)"
                       R"("g-prov-1"}})"),
            std::string::npos)
      << patch;
  EXPECT_NE(patch.find(R"("spec":{"nodeSelector":{"pool":"new"},)"
                       R"("schedulingGates":)"),
            std::string::npos)
      << patch;
}

}  // namespace
}  // namespace gpusched
