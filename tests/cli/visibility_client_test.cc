// A failed read becomes a message saying what to do (DescribeFailure),
// from the API server's answer and, for a 404 or 503, discovery's.
#include "api/cli/visibility_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched::cli {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A KubeClient error for an answer `code` carrying a Status `message`.
absl::Status Answered(int code, std::string_view message) {
  return kube::StatusFromHttp(
      code,
      std::string(R"({"kind":"Status","apiVersion":"v1","status":"Failure",)") +
          R"("message":")" + std::string(message) + R"(","code":)" +
          std::to_string(code) + "}",
      "GET /apis/visibility.gpusched.io/v1alpha1/x");
}

std::string Described(const absl::Status& failure, const ApiRead& read,
                      std::optional<Discovery> discovery = std::nullopt) {
  absl::Status described = DescribeFailure(failure, read, discovery);
  EXPECT_EQ(described.code(), failure.code());  // callers may still branch
  return std::string(described.message());
}

TEST(DescribeFailureTest, ForbiddenNamesTheRoleToBindInTheNamespace) {
  const std::string text = Described(
      Answered(403,
               "localqueues.visibility.gpusched.io \\\"training\\\" is "
               "forbidden: User \\\"bob\\\" cannot get resource"),
      PendingWorkloadsRead("team-a", "training", 500, 0));
  EXPECT_THAT(text, StartsWith("Error from server (Forbidden): "
                               "localqueues.visibility.gpusched.io "
                               "\"training\" is forbidden: User \"bob\""));
  EXPECT_THAT(text, HasSubstr("You may not get localqueues/pendingworkloads "
                              "(visibility.gpusched.io) in namespace team-a"));
  EXPECT_THAT(text,
              HasSubstr("kubectl create rolebinding gpusched-visibility-viewer "
                        "-n team-a --clusterrole=gpusched-visibility-viewer "
                        "--user=YOUR-USER"));
  EXPECT_THAT(text, HasSubstr("kubectl auth can-i get "
                              "localqueues.visibility.gpusched.io "
                              "--subresource=pendingworkloads -n team-a"));
}

TEST(DescribeFailureTest, ForbiddenClusterWideNamesTheClusterRole) {
  const std::string text =
      Described(Answered(403, "forbidden"), ClusterQueuesRead());
  EXPECT_THAT(text, HasSubstr("You may not list clusterqueues "
                              "(visibility.gpusched.io) cluster-wide"));
  EXPECT_THAT(text, HasSubstr("--clusterrole=gpusched-visibility-cluster-"
                              "viewer --user=YOUR-USER"));
  EXPECT_THAT(text, EndsWith("Check with: kubectl auth can-i list "
                             "clusterqueues.visibility.gpusched.io"));
}

TEST(DescribeFailureTest, NotFoundWithoutTheApiSaysItIsNotInstalled) {
  const std::string text =
      Described(Answered(404,
                         "the server could not find the requested "
                         "resource"),
                ClusterQueuesRead(), Discovery::kNotFound);
  EXPECT_THAT(text, StartsWith("error: gpusched's visibility API "
                               "(visibility.gpusched.io/v1alpha1) is not "
                               "installed in this cluster."));
  EXPECT_THAT(text, HasSubstr("kubectl get apiservice "
                              "v1alpha1.visibility.gpusched.io"));
}

TEST(DescribeFailureTest, NotFoundFromGpuschedIsTheServersMessage) {
  EXPECT_EQ(Described(Answered(404,
                               "pod \\\"web\\\" is not gpusched's to "
                               "queue: it has no queue label"),
                      ExplainRead("team-a", "web"), Discovery::kServed),
            "Error from server (NotFound): pod \"web\" is not gpusched's to "
            "queue: it has no queue label");
}

TEST(DescribeFailureTest, UnavailableWhileDiscoveryWorksIsAStandbyToRetry) {
  const std::string text =
      Described(Answered(503, "this replica is on standby"),
                ClusterQueuesRead(), Discovery::kServed);
  EXPECT_THAT(text, StartsWith("Error from server (ServiceUnavailable): "
                               "this replica is on standby\n"));
  EXPECT_THAT(text, HasSubstr("Retry in a few seconds."));
}

TEST(DescribeFailureTest, UnavailableApiServiceSaysNotReadyAndHowToCheck) {
  const std::string text =
      Described(Answered(503, "service unavailable"), ClusterQueuesRead(),
                Discovery::kUnavailable);
  EXPECT_THAT(text, StartsWith("error: gpusched's visibility API is installed "
                               "but not ready"));
  EXPECT_THAT(text, HasSubstr("kubectl get apiservice "
                              "v1alpha1.visibility.gpusched.io"));
}

TEST(DescribeFailureTest, NoAnswerAtAllKeepsTheClientsMessage) {
  absl::Status refused = absl::UnavailableError(
      "GET /apis/visibility.gpusched.io/v1alpha1/clusterqueues: connect: "
      "Connection refused");
  EXPECT_FALSE(NeedsDiscovery(refused));
  EXPECT_EQ(Described(refused, ClusterQueuesRead()),
            absl::StrCat("error: ", refused.message(),
                         "\nIs the API server reachable? Check with: kubectl "
                         "cluster-info"));
}

TEST(DescribeFailureTest, OnlyA404OrA503AsksDiscovery) {
  EXPECT_TRUE(NeedsDiscovery(Answered(404, "x")));
  EXPECT_TRUE(NeedsDiscovery(Answered(503, "x")));
  EXPECT_FALSE(NeedsDiscovery(Answered(403, "x")));
  EXPECT_FALSE(NeedsDiscovery(Answered(500, "x")));
}

}  // namespace
}  // namespace gpusched::cli
