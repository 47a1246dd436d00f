#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "api/http/client.h"
#include "api/http/server.h"
#include "tests/http/test_certs.h"
#include "tests/http/test_server.h"

namespace gpusched::http {
namespace {

using testing::Constant;
using ::testing::HasSubstr;
using testing::LocalOptions;
using testing::StartOrFail;
using ::testing::StartsWith;
using testing::TestPki;

class TlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { pki_ = new TestPki(testing::CreateTestPki()); }
  static void TearDownTestSuite() {
    testing::RemoveTestPki(*pki_);
    delete pki_;
  }

  static ServerOptions HttpsOptions() {
    ServerOptions options = LocalOptions();
    options.tls_cert_file = pki_->server_cert;
    options.tls_key_file = pki_->server_key;
    return options;
  }
  static ServerOptions MutualTlsOptions() {
    ServerOptions options = HttpsOptions();
    options.client_ca_file = pki_->ca_cert;
    return options;
  }
  static ClientOptions TrustingClient() {
    return ClientOptions{.tls = true, .ca_file = pki_->ca_cert};
  }

  // Connect and one request; for mutual TLS a refused certificate may
  // surface at either step (with TLS 1.3 the server's verdict arrives after
  // the client's handshake completes).
  static absl::StatusOr<Response> Get(uint16_t port, ClientOptions options,
                                      std::string host = "127.0.0.1") {
    auto client = Client::Connect(host, port, std::move(options));
    if (!client.ok()) return client.status();
    return (*client)->Send("GET", "/", "");
  }

  static std::string Pem(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  static TestPki* pki_;
};

TestPki* TlsTest::pki_ = nullptr;

TEST_F(TlsTest, ServesHttps) {
  auto server = StartOrFail(HttpsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  EXPECT_THAT(server->url(), StartsWith("https://127.0.0.1:"));
  auto response = Get(server->port(), TrustingClient());
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "secret");
}

TEST_F(TlsTest, CertificateNamesLocalhostToo) {
  auto server = StartOrFail(HttpsOptions(), Constant("named"));
  ASSERT_NE(server, nullptr);
  auto response = Get(server->port(), TrustingClient(), "localhost");
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "named");
}

TEST_F(TlsTest, ClientRejectsServerItCannotVerify) {
  auto server = StartOrFail(HttpsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  // The system trust store does not know the throwaway CA.
  auto response = Get(server->port(), ClientOptions{.tls = true});
  EXPECT_FALSE(response.ok());
}

TEST_F(TlsTest, PlainClientGetsNoHttpResponse) {
  auto server = StartOrFail(HttpsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  auto response = Get(server->port(), ClientOptions{});
  EXPECT_FALSE(response.ok());
}

TEST_F(TlsTest, ClientWithoutCertificateIsRefusedWhenClientCaIsSet) {
  auto server = StartOrFail(MutualTlsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  auto response = Get(server->port(), TrustingClient());
  EXPECT_FALSE(response.ok());
}

TEST_F(TlsTest, ClientWithCertificateFromTheCaIsServed) {
  auto server = StartOrFail(MutualTlsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  ClientOptions options = TrustingClient();
  options.cert_file = pki_->client_cert;
  options.key_file = pki_->client_key;
  auto response = Get(server->port(), options);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "secret");
}

TEST_F(TlsTest, ClientWithCertificateFromAnotherCaIsRefused) {
  auto server = StartOrFail(MutualTlsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  ClientOptions options = TrustingClient();
  options.cert_file = pki_->stranger_cert;
  options.key_file = pki_->stranger_key;
  auto response = Get(server->port(), options);
  EXPECT_FALSE(response.ok());
}

TEST_F(TlsTest, KeepAliveWorksOverTls) {
  auto server = StartOrFail(HttpsOptions(), [](const Request& request) {
    return Response{.body = request.remote};
  });
  ASSERT_NE(server, nullptr);
  auto client = Client::Connect("127.0.0.1", server->port(), TrustingClient());
  ASSERT_TRUE(client.ok()) << client.status();
  auto first = (*client)->Send("GET", "/", "");
  auto second = (*client)->Send("GET", "/", "");
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->body, second->body);
}

TEST_F(TlsTest, ClientTakesItsCaAndCertificateAsPemText) {
  auto server = StartOrFail(MutualTlsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  auto response = Get(server->port(), {.tls = true,
                                       .ca_pem = Pem(pki_->ca_cert),
                                       .cert_pem = Pem(pki_->client_cert),
                                       .key_pem = Pem(pki_->client_key)});
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "secret");
}

TEST_F(TlsTest, ClientVerifiesTheServerNameAgainstTheCertificate) {
  auto server = StartOrFail(HttpsOptions(), Constant("secret"));
  ASSERT_NE(server, nullptr);
  ClientOptions options = TrustingClient();
  options.server_name = "api.elsewhere.example";  // not in the SANs
  auto response = Get(server->port(), options);
  ASSERT_FALSE(response.ok());
  EXPECT_THAT(std::string(response.status().message()),
              HasSubstr("TLS handshake"));
}

TEST_F(TlsTest, ClientCaFileAndPemTogetherAreAnError) {
  ClientOptions options = TrustingClient();
  options.ca_pem = Pem(pki_->ca_cert);
  EXPECT_FALSE(Client::Create("127.0.0.1", 443, options).ok());
}

TEST_F(TlsTest, ClientKeyNotMatchingItsCertificateIsAnErrorAtCreate) {
  ClientOptions options = TrustingClient();
  options.cert_pem = Pem(pki_->client_cert);
  options.key_pem = Pem(pki_->stranger_key);
  auto client = Client::Create("127.0.0.1", 443, options);
  ASSERT_FALSE(client.ok());
  EXPECT_THAT(std::string(client.status().message()), HasSubstr("client key"));
}

TEST_F(TlsTest, MissingCertificateFileIsAnErrorNamingIt) {
  ServerOptions options = HttpsOptions();
  options.tls_cert_file = pki_->dir + "/absent.pem";
  auto server = Server::Start(options, Constant(""));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("absent.pem"));
}

TEST_F(TlsTest, KeyNotMatchingCertificateIsAnError) {
  ServerOptions options = HttpsOptions();
  options.tls_key_file = pki_->client_key;
  auto server = Server::Start(options, Constant(""));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("tls_key_file"));
}

TEST_F(TlsTest, CertificateWithoutKeyIsAnError) {
  ServerOptions options = LocalOptions();
  options.tls_cert_file = pki_->server_cert;
  EXPECT_FALSE(Server::Start(options, Constant("")).ok());
}

TEST_F(TlsTest, ClientCaWithoutServerCertificateIsAnError) {
  ServerOptions options = LocalOptions();
  options.client_ca_file = pki_->ca_cert;
  EXPECT_FALSE(Server::Start(options, Constant("")).ok());
}

}  // namespace
}  // namespace gpusched::http
