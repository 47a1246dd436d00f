// Kueue's topology annotations read as gpusched's own, and Kueue v0.19.2's
// rules for them (pkg/controller/jobframework/tas_validation.go, which its
// pod webhook applies): an invalid set leaves the pod's request unset and
// says why, naming the annotation.
#include "api/codec/pod_topology_request.h"

#include <string>
#include <utility>

#include "api/codec/pod_admission_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

constexpr char kRack[] = "cloud.com/topology-rack";
constexpr char kHost[] = "kubernetes.io/hostname";

// A pod of a Kueue pod group of `count` pods with these annotations.
PodAdmissionState GroupPod(StringMap annotations, int count = 4) {
  Pod pod;
  pod.meta.name = "p";
  pod.meta.namespace_name = "ml";
  pod.meta.labels = {{kKueueGroupLabel, "g"}};
  annotations[kKueueGroupCountAnnotation] = std::to_string(count);
  pod.meta.annotations = std::move(annotations);
  return DecodePodAdmissionState(pod);
}

TEST(PodTopologyRequestTest, KueueRequiredIsTheRequiredLevel) {
  const PodAdmissionState s =
      GroupPod({{kKueueRequiredTopologyAnnotation, kRack}});
  EXPECT_EQ(s.topology_required, kRack);
  EXPECT_EQ(s.topology_preferred, "");
  EXPECT_EQ(s.topology_invalid, "");
}

TEST(PodTopologyRequestTest, KueuePreferredIsThePreferredLevel) {
  const PodAdmissionState s =
      GroupPod({{kKueuePreferredTopologyAnnotation, kRack}});
  EXPECT_EQ(s.topology_preferred, kRack);
  EXPECT_EQ(s.topology_required, "");
}

TEST(PodTopologyRequestTest, UnconstrainedAsksForNoLevel) {
  const PodAdmissionState s =
      GroupPod({{kKueueUnconstrainedTopologyAnnotation, "true"}});
  EXPECT_EQ(s.topology_required, "");
  EXPECT_EQ(s.topology_preferred, "");
  EXPECT_EQ(s.topology_invalid, "");
}

TEST(PodTopologyRequestTest, UnconstrainedMustBeABoolean) {
  EXPECT_EQ(GroupPod({{kKueueUnconstrainedTopologyAnnotation, "yes"}})
                .topology_invalid,
            "kueue.x-k8s.io/podset-unconstrained-topology: Invalid value "
            "\"yes\": must be a boolean value");
}

TEST(PodTopologyRequestTest, RequiredAndPreferredTogetherAreInvalid) {
  EXPECT_THAT(GroupPod({{kKueueRequiredTopologyAnnotation, kRack},
                        {kKueuePreferredTopologyAnnotation, kRack}})
                  .topology_invalid,
              HasSubstr("must not contain more than one topology annotation"));
}

TEST(PodTopologyRequestTest, SlicesWithinTheRequiredLevel) {
  const PodAdmissionState s =
      GroupPod({{kKueueRequiredTopologyAnnotation, kRack},
                {kKueueSliceTopologyAnnotation, kHost},
                {kKueueSliceSizeAnnotation, "2"}});
  EXPECT_EQ(s.topology_invalid, "");
  EXPECT_EQ(s.topology_required, kRack);
  EXPECT_EQ(s.topology_slice_level, kHost);
  EXPECT_EQ(s.topology_slice_size, 2);
}

TEST(PodTopologyRequestTest, SliceLevelNeedsASliceSize) {
  const PodAdmissionState s =
      GroupPod({{kKueueSliceTopologyAnnotation, kHost}});
  EXPECT_EQ(s.topology_invalid,
            "kueue.x-k8s.io/podset-slice-size: Required value: must be set "
            "when 'kueue.x-k8s.io/podset-slice-required-topology' is "
            "specified");
  EXPECT_EQ(s.topology_slice_size, 0);
}

TEST(PodTopologyRequestTest, SliceSizeNeedsASliceLevel) {
  EXPECT_EQ(GroupPod({{kKueueSliceSizeAnnotation, "2"}}).topology_invalid,
            "kueue.x-k8s.io/podset-slice-size: Forbidden: may not be set when "
            "'kueue.x-k8s.io/podset-slice-required-topology' is not "
            "specified");
}

TEST(PodTopologyRequestTest, SliceSizeMustBeANumberOfAtLeastOne) {
  EXPECT_EQ(GroupPod({{kKueueSliceTopologyAnnotation, kHost},
                      {kKueueSliceSizeAnnotation, "two"}})
                .topology_invalid,
            "kueue.x-k8s.io/podset-slice-size: Invalid value \"two\": must be "
            "a numeric value");
  EXPECT_EQ(GroupPod({{kKueueSliceTopologyAnnotation, kHost},
                      {kKueueSliceSizeAnnotation, "0"}})
                .topology_invalid,
            "kueue.x-k8s.io/podset-slice-size: Invalid value \"0\": must be "
            "greater than or equal to 1");
}

TEST(PodTopologyRequestTest, SliceSizeAboveTheGroupCountIsInvalid) {
  EXPECT_EQ(GroupPod({{kKueueSliceTopologyAnnotation, kHost},
                      {kKueueSliceSizeAnnotation, "8"}},
                     4)
                .topology_invalid,
            "kueue.x-k8s.io/podset-slice-size: Invalid value \"8\": must not "
            "be greater than pod set count 4");
}

TEST(PodTopologyRequestTest, SliceSizeThatDoesNotDivideTheGroupIsInvalid) {
  EXPECT_EQ(GroupPod({{kKueueSliceTopologyAnnotation, kHost},
                      {kKueueSliceSizeAnnotation, "3"}},
                     4)
                .topology_invalid,
            "kueue.x-k8s.io/podset-slice-size: Invalid value \"3\": must "
            "divide the pod group's 4 pods");
}

TEST(PodTopologyRequestTest, GroupNameNeedsRequiredOrPreferred) {
  EXPECT_EQ(
      GroupPod({{kKueuePodSetGroupAnnotation, "workers"}}).topology_invalid,
      "kueue.x-k8s.io/podset-group-name: Forbidden: may not be set when "
      "neither 'kueue.x-k8s.io/podset-preferred-topology' nor "
      "'kueue.x-k8s.io/podset-required-topology' is specified");
}

TEST(PodTopologyRequestTest, GroupNameWithRequiredIsAccepted) {
  const PodAdmissionState s =
      GroupPod({{kKueuePodSetGroupAnnotation, "workers"},
                {kKueueRequiredTopologyAnnotation, kRack}});
  EXPECT_EQ(s.topology_invalid, "");
  EXPECT_EQ(s.topology_required, kRack);
}

TEST(PodTopologyRequestTest, GroupNameMustNotBeANumber) {
  EXPECT_EQ(GroupPod({{kKueuePodSetGroupAnnotation, "7"},
                      {kKueueRequiredTopologyAnnotation, kRack}})
                .topology_invalid,
            "kueue.x-k8s.io/podset-group-name: Invalid value \"7\": must not "
            "be a number");
}

TEST(PodTopologyRequestTest, GpuschedsOwnAnnotationStillWorks) {
  EXPECT_EQ(GroupPod({{kTopologyRequiredAnnotation, kRack}}).topology_required,
            kRack);
}

TEST(PodTopologyRequestTest, KueueAndGpuschedNamingTheSameLevelAgree) {
  const PodAdmissionState s =
      GroupPod({{kTopologyRequiredAnnotation, kRack},
                {kKueueRequiredTopologyAnnotation, kRack}});
  EXPECT_EQ(s.topology_required, kRack);
  EXPECT_EQ(s.topology_invalid, "");
}

TEST(PodTopologyRequestTest, KueueAndGpuschedNamingDifferentLevelsAreInvalid) {
  EXPECT_EQ(
      GroupPod({{kTopologyRequiredAnnotation, kHost},
                {kKueueRequiredTopologyAnnotation, kRack}})
          .topology_invalid,
      "kueue.x-k8s.io/podset-required-topology \"cloud.com/topology-rack\" "
      "and gpusched.io/topology-required \"kubernetes.io/hostname\" name "
      "different levels");
}

}  // namespace
}  // namespace gpusched
