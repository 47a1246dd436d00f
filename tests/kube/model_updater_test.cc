#include "api/kube/model_updater.h"

#include <gtest/gtest.h>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

using internal::ModelUpdater;

Node DomainNode(std::string_view name, int gpus) {
  absl::StatusOr<Node> node = NodeFromJson(GpuNode(name, gpus).dump());
  EXPECT_TRUE(node.ok()) << node.status();
  return *node;
}

TEST(ModelUpdaterTest, PodOnAnUnknownNodeWaitsForTheNode) {
  ExtenderService service;
  ModelUpdater updater(service);
  updater.ApplyPod(WatchEventType::kAdded,
                   DomainPod(GpuPod("a/early", 2, "n1")));
  EXPECT_FALSE(HasPod(service, "uid-a-early"));
  EXPECT_EQ(updater.orphan_count(), 1u);
  updater.ApplyNode(WatchEventType::kAdded, DomainNode("n1", 8));
  EXPECT_TRUE(HasPod(service, "uid-a-early"));
  EXPECT_EQ(updater.orphan_count(), 0u);
}

TEST(ModelUpdaterTest, DeletedOrphanIsForgotten) {
  ExtenderService service;
  ModelUpdater updater(service);
  Pod pod = DomainPod(GpuPod("a/early", 2, "n1"));
  updater.ApplyPod(WatchEventType::kAdded, pod);
  updater.ApplyPod(WatchEventType::kDeleted, pod);
  EXPECT_EQ(updater.orphan_count(), 0u);
}

TEST(ModelUpdaterTest, RelistKeepsAPodABindAssumedButRemovesVanishedOnes) {
  ExtenderService service;
  ModelUpdater updater(service);
  updater.ReplaceNodes({DomainNode("n1", 8)});
  Pod assumed = DomainPod(GpuPod("a/assumed", 2, "n1"));
  Pod vanished = DomainPod(GpuPod("a/vanished", 2, "n1"));
  updater.ReplacePods({assumed, vanished});
  ASSERT_TRUE(HasPod(service, "uid-a-vanished"));
  // The new list shows the assumed pod not yet bound, the other not at all.
  Pod unbound = assumed;
  unbound.node_name.clear();
  updater.ReplacePods({unbound});
  EXPECT_TRUE(HasPod(service, "uid-a-assumed"));
  EXPECT_FALSE(HasPod(service, "uid-a-vanished"));
}

TEST(ModelUpdaterTest, RelistRemovesNodesNoLongerListed) {
  ExtenderService service;
  ModelUpdater updater(service);
  updater.ReplaceNodes({DomainNode("n1", 8), DomainNode("n2", 8)});
  updater.ReplaceNodes({DomainNode("n2", 8)});
  EXPECT_FALSE(HasNode(service, "n1"));
  EXPECT_TRUE(HasNode(service, "n2"));
}

TEST(ModelUpdaterTest, FailedPodIsRemoved) {
  ExtenderService service;
  ModelUpdater updater(service);
  updater.ReplaceNodes({DomainNode("n1", 8)});
  Pod pod = DomainPod(GpuPod("a/job", 8, "n1"));
  updater.ApplyPod(WatchEventType::kAdded, pod);
  ASSERT_TRUE(HasPod(service, "uid-a-job"));
  pod.phase = PodPhase::kFailed;
  updater.ApplyPod(WatchEventType::kModified, pod);
  EXPECT_FALSE(HasPod(service, "uid-a-job"));
}

}  // namespace
}  // namespace gpusched::kube::testing
