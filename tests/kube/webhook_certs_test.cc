// The webhook's own certificates: made with OpenSSL, served from memory,
// verified by a client that trusts only their CA, and the Secret and caBundle
// JSON. The calls against a real API server (create, 409, patch) are covered
// by the e2e test TestAdmissionWebhookGatesGpuschedPods.
#include "api/kube/webhook_certs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "absl/strings/escaping.h"
#include "api/http/server.h"
#include "api/kube/kube_client.h"

namespace gpusched::kube {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr std::chrono::hours kYear{24 * 365};

WebhookCerts MustMake(const std::vector<std::string>& names) {
  absl::StatusOr<WebhookCerts> certs = MakeWebhookCerts(names, kYear);
  EXPECT_TRUE(certs.ok()) << certs.status();
  return certs.ok() ? *certs : WebhookCerts{};
}

TEST(WebhookCertsTest, ServingCertificateCoversDnsNamesAndIps) {
  std::vector<std::string> names = {"gpusched-webhook.gpusched-system.svc",
                                    "127.0.0.1", "localhost", "::1"};
  WebhookCerts certs = MustMake(names);
  EXPECT_THAT(certs.ca_pem, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(certs.key_pem, HasSubstr("PRIVATE KEY"));
  EXPECT_THAT(ServingProblems(certs, names), IsEmpty());
  EXPECT_THAT(
      ServingProblems(certs, {"webhook.other.svc", "10.0.0.1"}),
      ElementsAre(HasSubstr("webhook.other.svc"), HasSubstr("10.0.0.1")));
}

TEST(WebhookCertsTest, ShortValidityIsReportedAsExpiringSoon) {
  absl::StatusOr<WebhookCerts> certs =
      MakeWebhookCerts({"localhost"}, std::chrono::hours(24));
  ASSERT_TRUE(certs.ok()) << certs.status();
  EXPECT_THAT(ServingProblems(*certs, {"localhost"}),
              ElementsAre(HasSubstr("expires within 30 days")));
}

TEST(WebhookCertsTest, NoNamesIsAnError) {
  EXPECT_FALSE(MakeWebhookCerts({}, kYear).ok());
}

// The server holds the key in memory only (http::ServerOptions PEM fields),
// and a client that trusts nothing but the CA accepts it for 127.0.0.1.
TEST(WebhookCertsTest, ServedFromMemoryAndTrustedThroughTheCa) {
  WebhookCerts certs = MustMake({"127.0.0.1"});
  auto server = http::Server::Start(
      {.listen = "127.0.0.1:0",
       .tls_cert_pem = certs.cert_pem,
       .tls_key_pem = certs.key_pem},
      [](const http::Request&) { return http::Response{.body = "{}"}; });
  ASSERT_TRUE(server.ok()) << server.status();
  KubeConfig config;
  config.host = "127.0.0.1";
  config.port = (*server)->port();
  config.ca_pem = certs.ca_pem;
  auto client = KubeClient::Create(config);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<std::string> body = (*client)->Get("/mutate-pods");
  EXPECT_TRUE(body.ok()) << body.status();

  config.ca_pem = MustMake({"127.0.0.1"}).ca_pem;  // another CA
  auto stranger = KubeClient::Create(config);
  ASSERT_TRUE(stranger.ok()) << stranger.status();
  EXPECT_FALSE((*stranger)->Get("/mutate-pods").ok());
}

TEST(WebhookCertsTest, PemAndFileOptionsExcludeEachOther) {
  WebhookCerts certs = MustMake({"127.0.0.1"});
  auto handler = [](const http::Request&) { return http::Response{}; };
  EXPECT_FALSE(
      http::Server::Start(
          {.listen = "127.0.0.1:0", .tls_cert_pem = certs.cert_pem}, handler)
          .ok());
  EXPECT_FALSE(http::Server::Start({.listen = "127.0.0.1:0",
                                    .tls_key_file = "/nonexistent",
                                    .tls_cert_pem = certs.cert_pem,
                                    .tls_key_pem = certs.key_pem},
                                   handler)
                   .ok());
  std::string other_key = MustMake({"x"}).key_pem;
  auto mismatched = http::Server::Start({.listen = "127.0.0.1:0",
                                         .tls_cert_pem = certs.cert_pem,
                                         .tls_key_pem = other_key},
                                        handler);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_THAT(std::string(mismatched.status().message()),
              HasSubstr("tls_key_pem"));
}

}  // namespace
}  // namespace gpusched::kube
