#include "scheduler/cluster_model.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/scheduler/builders.h"

namespace gpusched {
namespace {

using ::gpusched::testing::MakeNode;
using ::gpusched::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The GPU indices `pod_key` holds on `node`.
std::vector<int> GpusOf(const ClusterModel& model, std::string_view node,
                        std::string_view pod_key) {
  const NodeState* state = model.FindNode(node);
  if (state == nullptr) return {-1};
  const PodAllocation* allocation = state->FindPod(pod_key);
  if (allocation == nullptr) return {-2};
  return allocation->gpus.gpu_ids;
}

// The number of pods holding each GPU of `node`.
std::vector<size_t> HoldersPerGpu(const ClusterModel& model,
                                  std::string_view node) {
  std::vector<size_t> holders;
  for (const GpuDevice& d : model.FindNode(node)->gpus().devices()) {
    holders.push_back(d.holders.size());
  }
  return holders;
}

ClusterModel OneNode(int gpus = 8) {
  ClusterModel model;
  model.UpsertNode(MakeNode("n1").Gpus(gpus));
  return model;
}

TEST(AddRunningPod, HonoursTheGpuIdsAnnotation) {
  ClusterModel model = OneNode();
  std::string warning;
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n1").Annotation(
                             kGpuIdsAnnotation, "5,6"),
                         &warning)
          .ok());
  EXPECT_EQ(warning, "");
  EXPECT_THAT(GpusOf(model, "n1", "ml/a"), ElementsAre(5, 6));
  ASSERT_NE(model.FindPodByUid("uid-ml-a"), nullptr);
  EXPECT_EQ(model.FindPodByUid("uid-ml-a")->node, "n1");
  EXPECT_EQ(model.pod_count(), 1u);
}

TEST(AddRunningPod, WithoutTheAnnotationTheAllocatorPicks) {
  ClusterModel model = OneNode();
  std::string warning;
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n1"), &warning).ok());
  EXPECT_EQ(warning, "");
  EXPECT_EQ(GpusOf(model, "n1", "ml/a").size(), 2u);
}

TEST(AddRunningPod, FallsBackWithAWarningWhenTheIdsAreTaken) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/a").Gpus(1).OnNode("n1").Annotation(
              kGpuIdsAnnotation, "5"))
          .ok());
  std::string warning;
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/b").Gpus(2).OnNode("n1").Annotation(
                             kGpuIdsAnnotation, "4,5"),
                         &warning)
          .ok());
  const std::vector<int> b = GpusOf(model, "n1", "ml/b");
  EXPECT_EQ(warning,
            absl::StrCat("pod ml/b: gpusched.io/gpu-ids=\"4,5\" does not match "
                         "free GPUs; using ",
                         FormatGpuIds(b)));
  EXPECT_THAT(b, ::testing::Not(::testing::Contains(5)));
  EXPECT_THAT(HoldersPerGpu(model, "n1"), ::testing::Each(::testing::Le(1u)));
}

// Another scheduler's pod without ids got GPUs 0,1 by guess; a pod whose
// record says it holds 0-3 arrives next. The record is what it was given,
// so the guess moves, and no GPU ends up with two holders.
TEST(AddRunningPod, AGuessYieldsToARecordOfTheSameGpus) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/guessed").Gpus(2).OnNode("n1")).ok());
  ASSERT_THAT(GpusOf(model, "n1", "ml/guessed"), ElementsAre(0, 1));
  std::string warning;
  ASSERT_TRUE(model
                  .AddRunningPod(MakePod("ml/recorded")
                                     .Gpus(4)
                                     .OnNode("n1")
                                     .Annotation(kGpuIdsAnnotation, "0,1,2,3"),
                                 &warning)
                  .ok());
  EXPECT_EQ(warning, "");
  EXPECT_THAT(GpusOf(model, "n1", "ml/recorded"), ElementsAre(0, 1, 2, 3));
  const std::vector<int> moved = GpusOf(model, "n1", "ml/guessed");
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_THAT(moved, ::testing::Each(::testing::Ge(4)));
  EXPECT_THAT(HoldersPerGpu(model, "n1"), ::testing::Each(::testing::Le(1u)));
}

// Two records of the same GPU are a real conflict: the later one is moved
// and says so, as before; a recorded pod never moves for another record.
TEST(AddRunningPod, ARecordNeverYieldsToAnotherRecord) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/a").Gpus(1).OnNode("n1").Annotation(
              kGpuIdsAnnotation, "0"))
          .ok());
  std::string warning;
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/b").Gpus(1).OnNode("n1").Annotation(
                             kGpuIdsAnnotation, "0"),
                         &warning)
          .ok());
  EXPECT_THAT(GpusOf(model, "n1", "ml/a"), ElementsAre(0));
  EXPECT_THAT(warning, HasSubstr("does not match free GPUs"));
}

TEST(AddRunningPod, FallsBackWhenTheIdsAreMalformedOrTheWrongCount) {
  for (std::string ids : {"x", "1", "1,2,3", "1,1"}) {
    SCOPED_TRACE(ids);
    ClusterModel model = OneNode();
    std::string warning;
    ASSERT_TRUE(
        model
            .AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n1").Annotation(
                               kGpuIdsAnnotation, ids),
                           &warning)
            .ok());
    EXPECT_THAT(warning, HasSubstr("does not match free GPUs; using "));
    EXPECT_EQ(GpusOf(model, "n1", "ml/a").size(), 2u);
  }
}

TEST(AddRunningPod, RecordsAPodThatDoesNotFitWithoutDevices) {
  ClusterModel model = OneNode(2);
  std::string warning;
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/big").Gpus(4).OnNode("n1"), &warning)
          .ok());
  EXPECT_EQ(warning,
            "pod ml/big runs on n1 but its GPUs do not fit the model: needs 4 "
            "nvidia.com/gpu; node has 2");
  EXPECT_THAT(GpusOf(model, "n1", "ml/big"), IsEmpty());
  EXPECT_EQ(model.pod_count(), 1u);
}

TEST(AddRunningPod, FailsForAnUnknownNode) {
  ClusterModel model = OneNode();
  const absl::Status status =
      model.AddRunningPod(MakePod("ml/a").Gpus(1).OnNode("elsewhere"));
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(status),
            "pod ml/a runs on node elsewhere, not known to gpusched");
  EXPECT_EQ(model.pod_count(), 0u);
}

TEST(AddRunningPod, FailsForADuplicateUidChangingNothing) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/a").Uid("u").Gpus(1).OnNode("n1")).ok());
  const absl::Status status = model.AddRunningPod(
      MakePod("ml/b").Uid("u").Gpus(1).OnNode("n1").Annotation(
          kGpuIdsAnnotation, "3"));
  EXPECT_EQ(status.code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(model.pod_count(), 1u);
  EXPECT_EQ(model.FindNode("n1")->gpus().free_milli(), 7000);  // 8000 - 1000
}

TEST(RemovePod, FreesTheGpusAndRequests) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(
      model.AddRunningPod(MakePod("ml/a").Gpus(4).Cpu("8").OnNode("n1")).ok());
  EXPECT_EQ(model.FindNode("n1")->gpus().free_milli(), 4000);  // 8000 - 4000
  EXPECT_TRUE(model.RemovePod("uid-ml-a"));
  EXPECT_EQ(model.FindNode("n1")->gpus().free_milli(), 8000);
  EXPECT_EQ(model.FindNode("n1")->requested().Get(kCpu), 0);
  EXPECT_EQ(model.FindNode("n1")->pod_count(), 0);
  EXPECT_EQ(model.FindPodByUid("uid-ml-a"), nullptr);
}

TEST(RemovePod, ReturnsFalseForAnUnknownUid) {
  ClusterModel model = OneNode();
  EXPECT_FALSE(model.RemovePod("nobody"));
}

TEST(UpsertNode, KeepsThePodsAndTheirGpus) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n1").Annotation(
              kGpuIdsAnnotation, "4,5"))
          .ok());
  EXPECT_EQ(model.UpsertNode(MakeNode("n1").Gpus(8).Label("zone", "b")), "");
  const NodeState* node = model.FindNode("n1");
  EXPECT_EQ(node->node().meta.labels.at("zone"), "b");
  EXPECT_THAT(GpusOf(model, "n1", "ml/a"), ElementsAre(4, 5));
  EXPECT_THAT(HoldersPerGpu(model, "n1"), ElementsAre(0, 0, 0, 0, 1, 1, 0, 0));
  EXPECT_EQ(model.pod_count(), 1u);
}

TEST(UpsertNode, NamesPodsWhoseGpusVanished) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/a").Gpus(2).OnNode("n1").Annotation(
              kGpuIdsAnnotation, "4,5"))
          .ok());
  ASSERT_TRUE(
      model
          .AddRunningPod(MakePod("ml/b").Gpus(1).OnNode("n1").Annotation(
              kGpuIdsAnnotation, "0"))
          .ok());
  EXPECT_EQ(model.UpsertNode(MakeNode("n1").Gpus(4)), "ml/a");
  EXPECT_THAT(GpusOf(model, "n1", "ml/a"), IsEmpty());
  EXPECT_THAT(GpusOf(model, "n1", "ml/b"), ElementsAre(0));
  EXPECT_EQ(model.pod_count(), 2u);
}

TEST(RemoveNode, ForgetsItsPods) {
  ClusterModel model = OneNode();
  ASSERT_TRUE(model.AddRunningPod(MakePod("ml/a").Gpus(1).OnNode("n1")).ok());
  EXPECT_TRUE(model.RemoveNode("n1"));
  EXPECT_EQ(model.pod_count(), 0u);
  EXPECT_EQ(model.FindPodByUid("uid-ml-a"), nullptr);
  EXPECT_FALSE(model.RemoveNode("n1"));
}

TEST(SortedNodes, AreInNameOrder) {
  ClusterModel model;
  for (const char* name : {"c", "a", "b"}) model.UpsertNode(MakeNode(name));
  std::vector<std::string> names;
  for (const NodeState* node : model.SortedNodes())
    names.push_back(node->name());
  EXPECT_THAT(names, ElementsAre("a", "b", "c"));
}

TEST(Place, FailsForAnUnknownNode) {
  ClusterModel model = OneNode();
  const absl::Status status = model.Place(MakePod("ml/a"), "ghost", {});
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Message(status), "node ghost not known to gpusched");
}

TEST(PodUid, FallsBackToTheKeyWithoutAUid) {
  EXPECT_EQ(PodUid(MakePod("ml/a").Uid("")), "ml/a");
  EXPECT_EQ(PodUid(MakePod("ml/a").Uid("1234")), "1234");
}

}  // namespace
}  // namespace gpusched
