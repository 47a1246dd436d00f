// The front proxy's authentication and the cached SubjectAccessReviews.
#include "api/kube/delegated_auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "tests/http/test_certs.h"

namespace gpusched::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first certificate of a PEM file as DER, as the TLS session hands it on.
std::string Der(const std::string& pem_path) {
  FILE* file = std::fopen(pem_path.c_str(), "r");
  X509* cert = PEM_read_X509(file, nullptr, nullptr, nullptr);
  std::fclose(file);
  unsigned char* bytes = nullptr;
  const int size = i2d_X509(cert, &bytes);
  std::string der(reinterpret_cast<char*>(bytes), size);
  OPENSSL_free(bytes);
  X509_free(cert);
  return der;
}

class RequestHeaderAuthenticatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new http::testing::TestPki(http::testing::CreateTestPki());
  }
  static void TearDownTestSuite() {
    http::testing::RemoveTestPki(*pki_);
    delete pki_;
  }
  // The test PKI's client certificate has CN "test client".
  static RequestHeaderConfig Config(std::vector<std::string> allowed) {
    return {.client_ca_pem = ReadFile(pki_->ca_cert),
            .allowed_names = std::move(allowed),
            .username_headers = {"X-Remote-User"},
            .group_headers = {"X-Remote-Group"},
            .extra_headers_prefixes = {"X-Remote-Extra-"}};
  }
  static http::Request FromProxy(const std::string& cert_path) {
    http::Request request{.method = "GET", .target = "/apis"};
    request.peer_certificates =
        std::make_shared<std::vector<std::string>>(1, Der(cert_path));
    request.headers = {{"x-remote-user", "alice"},
                       {"x-remote-group", "team-a"},
                       {"x-remote-group", "system:authenticated"},
                       {"x-remote-extra-scopes", "read"},
                       {"x-remote-extra-acme.com%2fproject", "p1"}};
    return request;
  }
  static http::testing::TestPki* pki_;
};

http::testing::TestPki* RequestHeaderAuthenticatorTest::pki_ = nullptr;

TEST_F(RequestHeaderAuthenticatorTest, AllowedProxyNamesTheUser) {
  RequestHeaderAuthenticator authenticator;
  ASSERT_TRUE(authenticator.Update(Config({"test client"})).ok());
  absl::StatusOr<RequestUser> user =
      authenticator.Authenticate(FromProxy(pki_->client_cert));
  ASSERT_TRUE(user.ok()) << user.status();
  EXPECT_EQ(user->name, "alice");
  EXPECT_THAT(user->groups, ElementsAre("team-a", "system:authenticated"));
  using Extra = std::pair<std::string, std::vector<std::string>>;
  EXPECT_THAT(user->extra, ElementsAre(Extra{"scopes", {"read"}},
                                       Extra{"acme.com/project", {"p1"}}));
}

TEST_F(RequestHeaderAuthenticatorTest, NoAllowedNamesTakesAnyCertOfTheCa) {
  RequestHeaderAuthenticator authenticator;
  ASSERT_TRUE(authenticator.Update(Config({})).ok());
  EXPECT_TRUE(authenticator.Authenticate(FromProxy(pki_->client_cert)).ok());
}

TEST_F(RequestHeaderAuthenticatorTest, NameNotAllowedIsRefused) {
  RequestHeaderAuthenticator authenticator;
  ASSERT_TRUE(authenticator.Update(Config({"front-proxy-client"})).ok());
  absl::StatusOr<RequestUser> user =
      authenticator.Authenticate(FromProxy(pki_->client_cert));
  EXPECT_TRUE(absl::IsUnauthenticated(user.status()));
  EXPECT_THAT(std::string(user.status().message()),
              HasSubstr("\"test client\" is not an allowed front proxy"));
}

TEST_F(RequestHeaderAuthenticatorTest, OtherCaOrServingCertIsRefused) {
  RequestHeaderAuthenticator authenticator;
  ASSERT_TRUE(authenticator.Update(Config({})).ok());
  absl::StatusOr<RequestUser> stranger =
      authenticator.Authenticate(FromProxy(pki_->stranger_cert));
  EXPECT_TRUE(absl::IsUnauthenticated(stranger.status()));
  EXPECT_THAT(std::string(stranger.status().message()),
              HasSubstr("not signed by the requestheader CA"));
  // Same CA, but its extended key usage is serverAuth only.
  EXPECT_FALSE(authenticator.Authenticate(FromProxy(pki_->server_cert)).ok());
}

TEST_F(RequestHeaderAuthenticatorTest, HeadersWithoutACertificateAreIgnored) {
  RequestHeaderAuthenticator authenticator;
  ASSERT_TRUE(authenticator.Update(Config({})).ok());
  http::Request request = FromProxy(pki_->client_cert);
  request.peer_certificates = nullptr;
  EXPECT_EQ(authenticator.Authenticate(request).status().message(),
            "no client certificate");
  request = FromProxy(pki_->client_cert);
  request.headers.erase(request.headers.begin());  // no x-remote-user
  EXPECT_EQ(authenticator.Authenticate(request).status().message(),
            "no user in the request headers");
}

TEST_F(RequestHeaderAuthenticatorTest, GarbageCertificateIsRefused) {
  RequestHeaderAuthenticator authenticator;
  ASSERT_TRUE(authenticator.Update(Config({})).ok());
  http::Request request = FromProxy(pki_->client_cert);
  request.peer_certificates =
      std::make_shared<std::vector<std::string>>(1, "not DER");
  EXPECT_EQ(authenticator.Authenticate(request).status().message(),
            "unreadable client certificate");
}

TEST_F(RequestHeaderAuthenticatorTest, UnusableUpdateKeepsTheOldSettings) {
  RequestHeaderAuthenticator authenticator;
  EXPECT_TRUE(absl::IsUnavailable(
      authenticator.Authenticate(FromProxy(pki_->client_cert)).status()));
  ASSERT_TRUE(authenticator.Update(Config({})).ok());
  RequestHeaderConfig broken = Config({});
  broken.client_ca_pem = "not PEM";
  EXPECT_FALSE(authenticator.Update(broken).ok());
  EXPECT_TRUE(authenticator.Authenticate(FromProxy(pki_->client_cert)).ok());
}

// Answers allowed for alice, denied for anyone else; counts the calls.
class AccessReviewerTest : public ::testing::Test {
 protected:
  AccessReviewer Reviewer(size_t max_entries = 16) {
    return AccessReviewer(
        {.post =
             [this](const std::string& body) -> absl::StatusOr<std::string> {
           ++posts_;
           if (!fail_.ok()) return fail_;
           const bool alice =
               body.find(R"("user":"alice")") != std::string::npos;
           return std::string(alice ? R"({"status":{"allowed":true}})"
                                    : R"({"status":{"allowed":false}})");
         },
         .max_entries = max_entries,
         .now = [this] { return now_; }});
  }
  void Advance(std::chrono::milliseconds by) { now_ += by; }

  int posts_ = 0;
  absl::Status fail_;
  std::chrono::steady_clock::time_point now_{};
  const ResourceAttributes get_{.verb = "get", .resource = "localqueues"};
};

TEST_F(AccessReviewerTest, AllowedIsCachedTenSeconds) {
  AccessReviewer reviewer = Reviewer();
  EXPECT_TRUE(reviewer.Review({.name = "alice"}, get_)->allowed);
  Advance(std::chrono::milliseconds(9999));
  EXPECT_TRUE(reviewer.Review({.name = "alice"}, get_)->allowed);
  EXPECT_EQ(posts_, 1);
  Advance(std::chrono::milliseconds(1));
  reviewer.Review({.name = "alice"}, get_).IgnoreError();
  EXPECT_EQ(posts_, 2);
}

TEST_F(AccessReviewerTest, DeniedIsCachedTwoSeconds) {
  AccessReviewer reviewer = Reviewer();
  EXPECT_FALSE(reviewer.Review({.name = "bob"}, get_)->allowed);
  Advance(std::chrono::milliseconds(1999));
  reviewer.Review({.name = "bob"}, get_).IgnoreError();
  EXPECT_EQ(posts_, 1);
  Advance(std::chrono::milliseconds(1));
  reviewer.Review({.name = "bob"}, get_).IgnoreError();
  EXPECT_EQ(posts_, 2);
}

TEST_F(AccessReviewerTest, DifferentAttributesAreReviewedApart) {
  AccessReviewer reviewer = Reviewer();
  reviewer.Review({.name = "alice"}, get_).IgnoreError();
  ResourceAttributes other = get_;
  other.namespace_name = "team-b";
  reviewer.Review({.name = "alice"}, other).IgnoreError();
  EXPECT_EQ(posts_, 2);
}

TEST_F(AccessReviewerTest, FailureIsAnErrorAndNotCached) {
  AccessReviewer reviewer = Reviewer();
  fail_ = absl::PermissionDeniedError("cannot create subjectaccessreviews");
  absl::StatusOr<AccessVerdict> verdict =
      reviewer.Review({.name = "alice"}, get_);
  EXPECT_THAT(std::string(verdict.status().message()),
              HasSubstr("SubjectAccessReview: cannot create"));
  fail_ = absl::OkStatus();
  EXPECT_TRUE(reviewer.Review({.name = "alice"}, get_)->allowed);
  EXPECT_EQ(posts_, 2);
}

TEST_F(AccessReviewerTest, CacheStaysWithinItsBound) {
  AccessReviewer reviewer = Reviewer(/*max_entries=*/2);
  for (const char* name : {"u1", "u2", "u3"}) {
    reviewer.Review({.name = name}, get_).IgnoreError();
  }
  // u3 found the cache full of fresh entries and emptied it: u1 is asked
  // again, u3 is not.
  reviewer.Review({.name = "u3"}, get_).IgnoreError();
  EXPECT_EQ(posts_, 3);
  reviewer.Review({.name = "u1"}, get_).IgnoreError();
  EXPECT_EQ(posts_, 4);
}

}  // namespace
}  // namespace gpusched::kube
