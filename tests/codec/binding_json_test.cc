// The v1 Binding a bind posts, and where a pod read back is bound.
#include "api/codec/binding_json.h"

#include <gtest/gtest.h>

namespace gpusched {
namespace {

Pod NamedPod() {
  Pod pod;
  pod.meta.namespace_name = "ns";
  pod.meta.name = "p";
  pod.meta.uid = "uid-ns-p";
  return pod;
}

TEST(BindingJsonTest, IsAV1BindingWithTheUidPreconditionAndTheGpuIds) {
  const Pod pod = NamedPod();
  EXPECT_EQ(EncodeBinding(pod, "n1", GpuAssignment{.gpu_ids = {0, 1}}),
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p",)"
            R"("namespace":"ns","uid":"uid-ns-p","annotations":)"
            R"({"gpusched.io/gpu-ids":"0,1"}},"target":{"apiVersion":"v1",)"
            R"("kind":"Node","name":"n1"}})");
  EXPECT_EQ(EncodeBinding(pod, "n1", GpuAssignment{}),
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p",)"
            R"("namespace":"ns","uid":"uid-ns-p"},"target":{"apiVersion":"v1",)"
            R"("kind":"Node","name":"n1"}})");
}

// On a DRA node the driver allocates: the binding records gpusched's plan
// by device name, and no gpu-ids that would claim to be the truth.
TEST(BindingJsonTest, OnADraNodeNamesThePlannedDevices) {
  EXPECT_EQ(EncodeBinding(NamedPod(), "n1",
                          GpuAssignment{.gpu_ids = {0, 3},
                                        .dra_names = {"gpu-0", "gpu-3"}}),
            R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p",)"
            R"("namespace":"ns","uid":"uid-ns-p","annotations":)"
            R"({"gpusched.io/planned-gpus":"gpu-0,gpu-3"}},"target":)"
            R"({"apiVersion":"v1","kind":"Node","name":"n1"}})");
}

TEST(PodPlacementTest, ReadsUidAndNode) {
  absl::StatusOr<PodPlacement> placement = DecodePodPlacement(
      R"({"metadata":{"uid":"u"},"spec":{"nodeName":"n1"}})");
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(placement->uid, "u");
  EXPECT_EQ(placement->node, "n1");
  absl::StatusOr<PodPlacement> unbound =
      DecodePodPlacement(R"({"metadata":{"uid":"u"},"spec":{}})");
  ASSERT_TRUE(unbound.ok());
  EXPECT_EQ(unbound->node, "");
}

TEST(PodPlacementTest, BadPodsNameTheField) {
  EXPECT_EQ(DecodePodPlacement(R"({"spec":{"nodeName":1}})").status().message(),
            "Pod.spec.nodeName: expected string, got number");
  EXPECT_EQ(DecodePodPlacement(R"({"metadata":"x"})").status().message(),
            "Pod.metadata: expected object, got string");
  EXPECT_FALSE(DecodePodPlacement("").ok());
}

}  // namespace
}  // namespace gpusched
