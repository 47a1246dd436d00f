#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
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

// The handler sees how many certificates the client sent and the Accept
// header it kept.
Handler CertificatesAndAccept() {
  return [](const Request& request) {
    const size_t certs = request.peer_certificates == nullptr
                             ? 0
                             : request.peer_certificates->size();
    std::vector<std::string_view> accept = HeaderValues(request, "accept");
    return Response{
        .body = absl::StrCat(
            certs, " ", std::string(accept.empty() ? "-" : accept.front()))};
  };
}

// A server that asks for certificates and keeps headers
// (CertificatesAndAccept), and a client of it presenting `cert`/`key`.
struct AskingPair {
  std::unique_ptr<Server> server;
  std::unique_ptr<Client> client;
};
AskingPair ConnectAsking(ServerOptions server_options, const std::string& cert,
                         const std::string& key, ClientOptions options) {
  server_options.ask_client_certificate = true;
  server_options.keep_headers = true;
  AskingPair pair{.server =
                      StartOrFail(server_options, CertificatesAndAccept())};
  if (pair.server == nullptr) return pair;
  options.cert_file = cert;
  options.key_file = key;
  auto client = Client::Connect("127.0.0.1", pair.server->port(), options);
  EXPECT_TRUE(client.ok()) << client.status();
  if (client.ok()) pair.client = *std::move(client);
  return pair;
}

TEST_F(TlsTest, AskedCertificateOfAnyCaReachesTheHandlerUnverified) {
  AskingPair pair = ConnectAsking(HttpsOptions(), pki_->stranger_cert,
                                  pki_->stranger_key, TrustingClient());
  ASSERT_NE(pair.client, nullptr);
  auto response = pair.client->RoundTrip(
      {.method = "GET", .target = "/", .accept = "application/json;as=Table"},
      std::chrono::seconds(5));
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->body, "1 application/json;as=Table");
}

// The connection's certificates are shared by its requests: each of them
// still sees them (the sanitizer builds catch a double release).
TEST_F(TlsTest, AskedCertificateServesEveryRequestOfAConnection) {
  AskingPair pair = ConnectAsking(HttpsOptions(), pki_->client_cert,
                                  pki_->client_key, TrustingClient());
  ASSERT_NE(pair.client, nullptr);
  std::string first;
  for (int i = 0; i < 3; ++i) {
    auto response =
        pair.client->RoundTrip({.method = "GET", .target = "/", .accept = "a"},
                               std::chrono::seconds(5));
    ASSERT_TRUE(response.ok()) << response.status();
    if (i == 0) first = response->body;
    // The chain as the client sent it: its own certificate, maybe the CA.
    EXPECT_NE(response->body, "0 a") << "request " << i;
    EXPECT_EQ(response->body, first) << "request " << i;
  }
}

TEST_F(TlsTest, AskedCertificateMayBeAbsent) {
  ServerOptions server_options = HttpsOptions();
  server_options.ask_client_certificate = true;
  auto server = StartOrFail(server_options, CertificatesAndAccept());
  ASSERT_NE(server, nullptr);
  auto response = Get(server->port(), TrustingClient());
  ASSERT_TRUE(response.ok()) << response.status();
  // No keep_headers: the handler sees no headers.
  EXPECT_EQ(response->body, "0 -");
}

TEST_F(TlsTest, AskingAndRequiringCertificatesExcludeEachOther) {
  ServerOptions options = MutualTlsOptions();
  options.ask_client_certificate = true;
  EXPECT_FALSE(Server::Start(options, Constant("x")).ok());
  ServerOptions plain = LocalOptions();
  plain.ask_client_certificate = true;
  EXPECT_FALSE(Server::Start(plain, Constant("x")).ok());
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
