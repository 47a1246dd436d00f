// The client's TLS path end to end: CA and client certificate held as PEM
// text (as kubeconfig *-data fields give them), against an HTTPS server that
// requires a client certificate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "api/http/server.h"
#include "api/kube/kube_client.h"
#include "api/kube/kube_config.h"
#include "nlohmann/json.hpp"
#include "tests/http/test_certs.h"
#include "tests/kube/exec_plugin_util.h"
// The throwaway PKI generator lives with the http tests; the kube test target
// may only name its library in tests/CMakeLists.txt, so it is compiled here.
#include "tests/http/test_certs.cc"  // NOLINT(build/include)

namespace gpusched::kube {
namespace {

using ::testing::HasSubstr;

class KubeTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_ = http::testing::CreateTestPki();
    auto server = http::Server::Start(
        {.listen = "127.0.0.1:0",
         .tls_cert_file = pki_.server_cert,
         .tls_key_file = pki_.server_key,
         .client_ca_file = pki_.ca_cert},
        [](const http::Request&) {
          return http::Response{
              .body =
                  R"({"kind":"NodeList","metadata":{"resourceVersion":"7"},)"
                  R"("items":[]})"};
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    http::testing::RemoveTestPki(pki_);
  }

  KubeConfig Config(std::string host) {
    KubeConfig config;
    config.host = std::move(host);
    config.port = server_->port();
    config.ca_pem = *ReadFileText(pki_.ca_cert);
    config.client_cert_pem = *ReadFileText(pki_.client_cert);
    config.client_key_pem = *ReadFileText(pki_.client_key);
    return config;
  }

  http::testing::TestPki pki_;
  std::unique_ptr<http::Server> server_;
};

TEST_F(KubeTlsTest, ListsOverTlsWithAClientCertificateFromPem) {
  auto client = KubeClient::Create(Config("127.0.0.1"));
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ListResult> list = (*client)->List("/api/v1/nodes");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "7");
}

TEST_F(KubeTlsTest, VerifiesTheServerNameAgainstTheCertificate) {
  KubeConfig config = Config("127.0.0.1");
  config.tls_server_name = "api.elsewhere.example";  // not in the SANs
  auto client = KubeClient::Create(config);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ListResult> list = (*client)->List("/api/v1/nodes");
  ASSERT_FALSE(list.ok());
  EXPECT_THAT(std::string(list.status().message()), HasSubstr("TLS handshake"));
}

TEST_F(KubeTlsTest, ServerSignedByAnotherCaIsRejected) {
  KubeConfig config = Config("127.0.0.1");
  config.ca_pem = *ReadFileText(pki_.stranger_cert);  // not our CA
  auto client = KubeClient::Create(config);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_FALSE((*client)->List("/api/v1/nodes").ok());
}

TEST_F(KubeTlsTest, KeyNotMatchingTheCertificateIsRejectedAtCreate) {
  KubeConfig config = Config("127.0.0.1");
  config.client_key_pem = *ReadFileText(pki_.stranger_key);
  auto client = KubeClient::Create(config);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(std::string(client.status().message()),
              HasSubstr("kube client: client key: not usable PEM"));
}

TEST_F(KubeTlsTest, WithoutAClientCertificateTheServerRefuses) {
  KubeConfig config = Config("127.0.0.1");
  config.client_cert_pem.clear();
  config.client_key_pem.clear();
  auto client = KubeClient::Create(config);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_FALSE((*client)->List("/api/v1/nodes").ok());
}

TEST_F(KubeTlsTest, PresentsTheClientCertificateAnExecPluginGives) {
  KubeConfig config = Config("127.0.0.1");
  const nlohmann::json credential = {
      {"apiVersion", kExecApiV1},
      {"kind", "ExecCredential"},
      {"status",
       {{"clientCertificateData", config.client_cert_pem},
        {"clientKeyData", config.client_key_pem}}}};
  config.client_cert_pem.clear();
  config.client_key_pem.clear();
  testing::PluginDir dir;
  std::ofstream(dir.path() + "/credential.json") << credential.dump();
  config.exec = testing::PluginSpec(
      dir.Script("plugin", "cat '" + dir.path() + "/credential.json'"));
  auto client = KubeClient::Create(config);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<ListResult> list = (*client)->List("/api/v1/nodes");
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_TRUE((*client)->List("/api/v1/nodes").ok());
  EXPECT_EQ(dir.Runs(), 1);
}

}  // namespace
}  // namespace gpusched::kube
