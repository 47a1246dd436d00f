// `gpusched serve --visibility-*`: what the flags need and what they set.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/server/serve_flags.h"
#include "api/server/visibility_server.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ParseError(const std::vector<std::string>& args) {
  ServeConfig config;
  return std::string(ParseServeFlags(args, config).message());
}

TEST(VisibilityFlagsTest, ListenNeedsLiveModeAndAPolicy) {
  EXPECT_THAT(ParseError({"--visibility-listen=127.0.0.1:8443"}),
              HasSubstr("--visibility-listen needs --kubeconfig"));
  EXPECT_THAT(
      ParseError({"--visibility-listen=127.0.0.1:8443", "--kubeconfig=/k"}),
      HasSubstr("--policy"));
  ServeConfig config;
  ASSERT_TRUE(ParseServeFlags({"--visibility-listen=127.0.0.1:8443",
                               "--kubeconfig=/k", "--policy=/p.yaml"},
                              config)
                  .ok());
  EXPECT_EQ(config.visibility.listen, "127.0.0.1:8443");
}

TEST(VisibilityFlagsTest, DefaultsNameTheDeployedObjects) {
  absl::StatusOr<VisibilityServerOptions> options =
      VisibilityServerOptionsFrom({.listen = "0.0.0.0:8443"});
  ASSERT_TRUE(options.ok()) << options.status();
  const CertifiedListenerSettings& listener = options->listener;
  EXPECT_EQ(listener.certs.secret_namespace, "gpusched-system");
  EXPECT_EQ(listener.certs.secret_name, "gpusched-visibility-tls");
  EXPECT_THAT(listener.certs.names,
              ElementsAre("gpusched-visibility.gpusched-system.svc",
                          "gpusched-visibility.gpusched-system.svc.cluster."
                          "local"));
  EXPECT_EQ(options->apiservice, "v1alpha1.visibility.gpusched.io");
  EXPECT_EQ(listener.recheck, std::chrono::seconds(30));
}

TEST(VisibilityFlagsTest, MalformedFlagsAreErrors) {
  EXPECT_THAT(
      std::string(
          VisibilityServerOptionsFrom({.secret = "nons"}).status().message()),
      HasSubstr("--visibility-secret"));
  EXPECT_FALSE(VisibilityServerOptionsFrom({.dns_names = ","}).ok());
  EXPECT_FALSE(VisibilityServerOptionsFrom({.apiservice = ""}).ok());
}

TEST(VisibilityFlagsTest, PodNamesThisReplicaInLiveMode) {
  EXPECT_THAT(ParseError({"--pod=gpusched-system/gpusched-0"}),
              HasSubstr("--pod needs --kubeconfig"));
  for (const char* bad : {"gpusched-0", "/gpusched-0", "ns/", "a/b/c"}) {
    EXPECT_THAT(ParseError({"--kubeconfig=/k", std::string("--pod=") + bad}),
                HasSubstr("want NAMESPACE/NAME"))
        << bad;
  }
  ServeConfig config;
  ASSERT_TRUE(
      ParseServeFlags({"--kubeconfig=/k", "--pod=gpusched-system/gpusched-0"},
                      config)
          .ok());
  EXPECT_EQ(config.pod, "gpusched-system/gpusched-0");
}

}  // namespace
}  // namespace gpusched
