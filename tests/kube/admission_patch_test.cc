#include "api/kube/admission_patch.h"

#include <gtest/gtest.h>

#include <memory>

#include "tests/kube/fake_apiserver.h"
#include "tests/kube/test_util.h"

namespace gpusched::kube::testing {
namespace {

TEST(AdmissionPatchTest, LabelsAnnotatesAndNominatesTheAssignedNode) {
  FakeApiServer server;
  auto client = *KubeClient::Create(server.Config());
  server.AddPod(GpuPod("team-a/ring-0", 4));
  absl::Status applied = ApplyAdmissionPatch(
      *client, AdmissionPatch{"team-a", "ring-0", "dgx-h100-3"});
  ASSERT_TRUE(applied.ok()) << applied;
  Json pod = server.Pod("team-a/ring-0");
  EXPECT_EQ(pod["metadata"]["labels"]["gpusched.io/admitted"], "true");
  EXPECT_EQ(pod["metadata"]["annotations"]["gpusched.io/assigned-node"], "dgx-h100-3");
  EXPECT_EQ(pod["status"]["nominatedNodeName"], "dgx-h100-3");
  EXPECT_EQ(server.Count("PATCH pod"), 2);  // metadata, then status
}

TEST(AdmissionPatchTest, MissingPodIsNotFound) {
  FakeApiServer server;
  auto client = *KubeClient::Create(server.Config());
  absl::Status applied =
      ApplyAdmissionPatch(*client, AdmissionPatch{"team-a", "gone", "n1"});
  EXPECT_TRUE(absl::IsNotFound(applied)) << applied;
}

}  // namespace
}  // namespace gpusched::kube::testing
