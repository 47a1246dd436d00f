// The webhook's TLS Secret and caBundle patch.
#include "api/codec/webhook_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace gpusched {
namespace {

using Json = nlohmann::json;

const WebhookCerts kCerts{.ca_pem = "-----BEGIN CERTIFICATE-----\nca\n",
                          .cert_pem = "-----BEGIN CERTIFICATE-----\nc\n",
                          .key_pem = "-----BEGIN PRIVATE KEY-----\nk\n"};

TEST(WebhookSecretTest, RoundTrips) {
  std::string json =
      EncodeWebhookSecret("gpusched-system", "gpusched-webhook-tls", kCerts);
  Json secret = Json::parse(json);
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  EXPECT_EQ(secret["metadata"]["namespace"], "gpusched-system");
  EXPECT_EQ(secret["metadata"]["name"], "gpusched-webhook-tls");
  EXPECT_EQ(secret["metadata"]["labels"]["app.kubernetes.io/name"], "gpusched");
  // The bytes nlohmann::json wrote before: sorted keys.
  EXPECT_EQ(json, secret.dump());
  absl::StatusOr<WebhookCerts> back = DecodeWebhookSecret(json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->ca_pem, kCerts.ca_pem);
  EXPECT_EQ(back->cert_pem, kCerts.cert_pem);
  EXPECT_EQ(back->key_pem, kCerts.key_pem);
}

TEST(WebhookSecretTest, AMissingOrBadKeyIsNamed) {
  Json secret = Json::parse(EncodeWebhookSecret("ns", "s", kCerts));
  secret["data"].erase("tls.key");
  EXPECT_EQ(DecodeWebhookSecret(secret.dump()).status().message(),
            "Secret.data.tls.key: missing");
  secret["data"]["tls.key"] = "!!";
  EXPECT_EQ(DecodeWebhookSecret(secret.dump()).status().message(),
            "Secret.data.tls.key: not base64 PEM");
  EXPECT_FALSE(DecodeWebhookSecret("not json").ok());
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
        EncodeCaBundlePatch(config.dump(), ca);
    ASSERT_TRUE(patch.ok()) << patch.status();
    ASSERT_TRUE(patch->has_value());
    Json patched = config;
    patched.merge_patch(Json::parse(**patch));
    EXPECT_EQ(patched, WebhookConfig(absl::Base64Escape(ca)));
    EXPECT_EQ(Json::parse(**patch)["metadata"]["resourceVersion"], "42");
  }
}

TEST(CaBundlePatchTest, NothingToDoWhenTheCaIsThere) {
  const std::string ca = "pem";
  absl::StatusOr<std::optional<std::string>> patch =
      EncodeCaBundlePatch(WebhookConfig(absl::Base64Escape(ca)).dump(), ca);
  ASSERT_TRUE(patch.ok()) << patch.status();
  EXPECT_FALSE(patch->has_value());
}

TEST(CaBundlePatchTest, ConfigWithoutWebhooksIsAnError) {
  EXPECT_EQ(EncodeCaBundlePatch(R"({"metadata":{}})", "pem").status().message(),
            "MutatingWebhookConfiguration.webhooks: missing or not a list");
  EXPECT_FALSE(EncodeCaBundlePatch("nope", "pem").ok());
  Json no_version = WebhookConfig(nullptr);
  no_version["metadata"].erase("resourceVersion");
  EXPECT_EQ(EncodeCaBundlePatch(no_version.dump(), "pem").status().message(),
            "MutatingWebhookConfiguration.metadata.resourceVersion: missing");
}

TEST(ApiServiceCaBundleTest, PatchesOnlyWhenTheBundleDiffers) {
  Json service = {
      {"apiVersion", "apiregistration.k8s.io/v1"},
      {"kind", "APIService"},
      {"metadata",
       {{"name", "v1alpha1.visibility.gpusched.io"}, {"resourceVersion", "7"}}},
      {"spec", {{"group", "visibility.gpusched.io"}}}};
  absl::StatusOr<std::optional<std::string>> patch =
      EncodeApiServiceCaBundlePatch(service.dump(), kCerts.ca_pem);
  ASSERT_TRUE(patch.ok()) << patch.status();
  ASSERT_TRUE(patch->has_value());
  EXPECT_EQ(**patch, absl::StrCat(R"({"metadata":{"resourceVersion":"7"},)",
                                  R"("spec":{"caBundle":")",
                                  absl::Base64Escape(kCerts.ca_pem), R"("}})"));
  service["spec"]["caBundle"] = absl::Base64Escape(kCerts.ca_pem);
  patch = EncodeApiServiceCaBundlePatch(service.dump(), kCerts.ca_pem);
  ASSERT_TRUE(patch.ok());
  EXPECT_FALSE(patch->has_value());
  service["spec"]["caBundle"] = "b2xk";
  service["metadata"].erase("resourceVersion");
  EXPECT_EQ(EncodeApiServiceCaBundlePatch(service.dump(), kCerts.ca_pem)
                .status()
                .message(),
            "APIService.metadata.resourceVersion: missing");
  EXPECT_FALSE(EncodeApiServiceCaBundlePatch("[]", kCerts.ca_pem).ok());
}

}  // namespace
}  // namespace gpusched
