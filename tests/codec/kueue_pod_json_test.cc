#include "api/codec/kueue_pod_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace gpusched {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<KueueManagedPod> DecodeManagedPod(const std::string& json) {
  simdjson::dom::parser parser;
  simdjson::dom::element pod;
  EXPECT_EQ(parser.parse(json).get(pod), simdjson::SUCCESS) << json;
  return DecodeKueueManagedPod(pod);
}

TEST(KueueManagedPodTest, ReadsGroupFinalizerPhaseAndDeletion) {
  absl::StatusOr<KueueManagedPod> pod = DecodeManagedPod(R"({"metadata":{
    "name":"train-0","namespace":"team-a","uid":"u1",
    "labels":{"kueue.x-k8s.io/managed":"true",
              "kueue.x-k8s.io/pod-group-name":"train"},
    "finalizers":["batch.kubernetes.io/job-tracking","kueue.x-k8s.io/managed"],
    "deletionTimestamp":"2026-11-29T10:00:00Z"},
    "status":{"phase":"Succeeded"}})");
  ASSERT_TRUE(pod.ok()) << pod.status();
  EXPECT_EQ(pod->Key(), "team-a/train-0");
  EXPECT_EQ(pod->uid, "u1");
  EXPECT_EQ(pod->group, "train");
  EXPECT_TRUE(pod->has_finalizer);
  EXPECT_TRUE(pod->terminal);
  EXPECT_TRUE(pod->deleting);
}

// Kueue's WorkloadIdentifierAnnotations gate moves the group name to an
// annotation; a pod alone has none.
TEST(KueueManagedPodTest, GroupFromTheAnnotationAndPodsAlone) {
  absl::StatusOr<KueueManagedPod> grouped = DecodeManagedPod(R"({"metadata":{
    "name":"p","namespace":"n",
    "annotations":{"kueue.x-k8s.io/pod-group-name":"g"}},
    "status":{"phase":"Running"}})");
  ASSERT_TRUE(grouped.ok()) << grouped.status();
  EXPECT_EQ(grouped->group, "g");
  EXPECT_FALSE(grouped->terminal);
  absl::StatusOr<KueueManagedPod> alone = DecodeManagedPod(
      R"({"metadata":{"name":"p","namespace":"n","finalizers":null,
          "deletionTimestamp":null}})");
  ASSERT_TRUE(alone.ok()) << alone.status();
  EXPECT_EQ(alone->group, "");
  EXPECT_FALSE(alone->has_finalizer);
  EXPECT_FALSE(alone->deleting);
}

TEST(KueueManagedPodTest, ErrorsNameTheField) {
  EXPECT_THAT(
      std::string(DecodeManagedPod(R"({"spec":{}})").status().message()),
      HasSubstr("metadata: expected an object"));
  EXPECT_THAT(std::string(DecodeManagedPod(R"({"metadata":{"namespace":"n"}})")
                              .status()
                              .message()),
              HasSubstr("metadata: expected a name and a namespace"));
  EXPECT_THAT(
      std::string(DecodeManagedPod(R"({"metadata":{"name":"p","namespace":"n",
                  "finalizers":[7]}})")
                      .status()
                      .message()),
      HasSubstr("metadata.finalizers: expected an array of strings"));
  EXPECT_THAT(
      std::string(DecodeManagedPod(R"({"metadata":{"name":"p","namespace":"n"},
                  "status":{"phase":3}})")
                      .status()
                      .message()),
      HasSubstr("status.phase: expected a string"));
}

// The patch removes Kueue's finalizer only, from that pod only.
TEST(KueueManagedPodTest, ReleasePatchNamesTheFinalizerAndTheUid) {
  nlohmann::json patch =
      nlohmann::json::parse(ReleaseKueueFinalizerPatch("u\"1"));
  EXPECT_EQ(patch, nlohmann::json::parse(R"({"metadata":{
      "$deleteFromPrimitiveList/finalizers":["kueue.x-k8s.io/managed"],
      "uid":"u\"1"}})"));
}

}  // namespace
}  // namespace gpusched
