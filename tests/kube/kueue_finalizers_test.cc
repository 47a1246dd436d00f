#include "api/kube/kueue_finalizers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace gpusched::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

struct PodState {
  std::string group;
  bool terminal = false;
  bool deleting = false;
  bool finalizer = true;
};

std::map<std::string, KueueManagedPod> Pods(
    const std::map<std::string, PodState>& states) {
  std::map<std::string, KueueManagedPod> pods;
  for (const auto& [name, s] : states) {
    KueueManagedPod pod{.namespace_name = "ns",
                        .name = name,
                        .uid = "uid-" + name,
                        .group = s.group,
                        .has_finalizer = s.finalizer,
                        .terminal = s.terminal,
                        .deleting = s.deleting};
    pods.emplace(pod.Key(), pod);
  }
  return pods;
}

TEST(FinalizersToReleaseTest, APodAloneIsReleasedWhenItEndsOrIsDeleted) {
  EXPECT_THAT(FinalizersToRelease(Pods({{"running", {}},
                                        {"ended", {.terminal = true}},
                                        {"deleted", {.deleting = true}}})),
              ElementsAre("ns/deleted", "ns/ended"));
}

// A group's ended members keep the finalizer (Kueue counts them) until
// the group has ended; a member being deleted is released at once.
TEST(FinalizersToReleaseTest, AGroupIsReleasedWholeOnceEveryMemberEnded) {
  EXPECT_THAT(
      FinalizersToRelease(Pods({{"g-0", {.group = "g", .terminal = true}},
                                {"g-1", {.group = "g"}}})),
      IsEmpty());
  EXPECT_THAT(
      FinalizersToRelease(Pods({{"g-0", {.group = "g", .terminal = true}},
                                {"g-1", {.group = "g", .deleting = true}},
                                {"h-0", {.group = "h"}}})),
      ElementsAre("ns/g-0", "ns/g-1"));
  EXPECT_THAT(
      FinalizersToRelease(Pods({{"g-0", {.group = "g"}},
                                {"g-1", {.group = "g", .deleting = true}}})),
      ElementsAre("ns/g-1"));
}

TEST(FinalizersToReleaseTest, PodsWithoutTheFinalizerAreLeftAlone) {
  EXPECT_THAT(
      FinalizersToRelease(
          Pods({{"a", {.terminal = true, .finalizer = false}},
                {"g-0", {.group = "g", .terminal = true, .finalizer = false}},
                {"g-1", {.group = "g", .terminal = true}}})),
      ElementsAre("ns/g-1"));
}

}  // namespace
}  // namespace gpusched::kube
