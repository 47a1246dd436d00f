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
  EXPECT_THAT(ServingProblems(certs, {"webhook.other.svc", "10.0.0.1"}),
              ElementsAre(HasSubstr("webhook.other.svc"),
                          HasSubstr("10.0.0.1")));
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
  EXPECT_FALSE(http::Server::Start({.listen = "127.0.0.1:0",
                                    .tls_cert_pem = certs.cert_pem},
                                   handler)
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

TEST(WebhookCertsTest, SecretRoundTrips) {
  WebhookCerts certs = MustMake({"localhost"});
  std::string json = WebhookSecretJson({}, certs);
  Json secret = Json::parse(json);
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  EXPECT_EQ(secret["metadata"]["namespace"], "gpusched-system");
  EXPECT_EQ(secret["metadata"]["name"], "gpusched-webhook-tls");
  absl::StatusOr<WebhookCerts> back = WebhookCertsFromSecret(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ca_pem, certs.ca_pem);
  EXPECT_EQ(back->cert_pem, certs.cert_pem);
  EXPECT_EQ(back->key_pem, certs.key_pem);
}

TEST(WebhookCertsTest, SecretWithoutAKeyNamesIt) {
  Json secret = Json::parse(WebhookSecretJson({}, MustMake({"localhost"})));
  secret["data"].erase("tls.key");
  absl::StatusOr<WebhookCerts> certs = WebhookCertsFromSecret(secret.dump());
  ASSERT_FALSE(certs.ok());
  EXPECT_THAT(std::string(certs.status().message()), HasSubstr("data.tls.key"));
  EXPECT_FALSE(WebhookCertsFromSecret("not json").ok());
}

Json WebhookConfig(Json ca_bundle) {
  Json config = {
      {"apiVersion", "admissionregistration.k8s.io/v1"},
      {"kind", "MutatingWebhookConfiguration"},
      {"metadata", {{"name", "gpusched"}, {"resourceVersion", "42"}}},
      {"webhooks",
       {{{"name", "pods.gpusched.io"},
         {"clientConfig", {{"url", "https://127.0.0.1:9443/mutate-pods"}}},
         {"sideEffects", "None"}}}}};
  if (!ca_bundle.is_null()) {
    config["webhooks"][0]["clientConfig"]["caBundle"] = ca_bundle;
  }
  return config;
}

TEST(CaBundlePatchTest, SetsTheCaAndKeepsEverythingElse) {
  const std::string ca = "-----BEGIN CERTIFICATE-----\nabc\n";
  for (const Json& config : {WebhookConfig(nullptr), WebhookConfig("b2xk")}) {
    absl::StatusOr<std::optional<std::string>> patch =
        CaBundlePatch(config.dump(), ca);
    ASSERT_TRUE(patch.ok()) << patch.status();
    ASSERT_TRUE(patch->has_value());
    Json patched = config;
    patched.merge_patch(Json::parse(**patch));
    Json want = WebhookConfig(absl::Base64Escape(ca));
    EXPECT_EQ(patched, want);
    EXPECT_EQ(Json::parse(**patch)["metadata"]["resourceVersion"], "42");
  }
}

TEST(CaBundlePatchTest, NothingToDoWhenTheCaIsThere) {
  const std::string ca = "pem";
  absl::StatusOr<std::optional<std::string>> patch =
      CaBundlePatch(WebhookConfig(absl::Base64Escape(ca)).dump(), ca);
  ASSERT_TRUE(patch.ok()) << patch.status();
  EXPECT_FALSE(patch->has_value());
}

TEST(CaBundlePatchTest, ConfigWithoutWebhooksIsAnError) {
  EXPECT_FALSE(CaBundlePatch(R"({"metadata":{}})", "pem").ok());
  EXPECT_FALSE(CaBundlePatch("nope", "pem").ok());
}

}  // namespace
}  // namespace gpusched::kube
