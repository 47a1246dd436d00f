// client.authentication.k8s.io ExecCredential: the request a credential
// plugin reads and the answer it prints.
#include "api/codec/exec_credential_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpusched {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

constexpr char kV1[] = "client.authentication.k8s.io/v1";

Json Answer(Json status) {
  return {{"apiVersion", kV1}, {"kind", "ExecCredential"}, {"status", status}};
}

std::string Msg(const absl::Status& status) {
  return std::string(status.message());
}

TEST(ExecCredentialRequestTest, OmitsTheClusterUnlessAsked) {
  EXPECT_EQ(EncodeExecCredentialRequest({.api_version = kV1}),
            R"({"apiVersion":"client.authentication.k8s.io/v1",)"
            R"("kind":"ExecCredential","spec":{"interactive":false}})");
}

TEST(ExecCredentialRequestTest, WritesTheClusterWithItsCaInBase64) {
  const Json request = Json::parse(EncodeExecCredentialRequest(
      {.api_version = kV1,
       .cluster = ExecClusterInfo{.server = "https://k:6443",
                                  .ca_pem = "PEM \"quoted\"\n"}}));
  EXPECT_EQ(request["spec"]["cluster"],
            Json({{"server", "https://k:6443"},
                  {"certificate-authority-data", "UEVNICJxdW90ZWQiCg=="}}));
}

TEST(ExecCredentialDecodeTest, ReadsTokenAndExpiry) {
  absl::StatusOr<ExecCredentialStatus> status = DecodeExecCredential(
      Answer({{"token", "t"},
              {"expirationTimestamp", "2030-01-01T01:00:00.5+01:00"}})
          .dump(),
      kV1);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->token, "t");
  EXPECT_EQ(status->expiration_unix_seconds, 1893456000);  // 00:00:00Z
}

TEST(ExecCredentialDecodeTest, NullExpiryMeansNone) {
  absl::StatusOr<ExecCredentialStatus> status = DecodeExecCredential(
      Answer({{"token", "t"}, {"expirationTimestamp", nullptr}}).dump(), kV1);
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_FALSE(status->expiration_unix_seconds.has_value());
}

TEST(ExecCredentialDecodeTest, MissingStatusIsNamed) {
  Json answer = Answer({});
  answer.erase("status");
  absl::StatusOr<ExecCredentialStatus> status =
      DecodeExecCredential(answer.dump(), kV1);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(Msg(status.status()),
              HasSubstr("ExecCredential.status: missing"));
}

TEST(ExecCredentialDecodeTest, WrongTypeIsNamed) {
  absl::StatusOr<ExecCredentialStatus> status =
      DecodeExecCredential(Answer({{"token", 42}}).dump(), kV1);
  ASSERT_FALSE(status.ok());
  EXPECT_THAT(Msg(status.status()),
              HasSubstr("ExecCredential.status.token: expected string, got "
                        "number"));
}

TEST(ExecCredentialDecodeTest, AnotherApiVersionIsRefused) {
  Json answer = Answer({{"token", "t"}});
  answer["apiVersion"] = "client.authentication.k8s.io/v1beta1";
  absl::StatusOr<ExecCredentialStatus> status =
      DecodeExecCredential(answer.dump(), kV1);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(Msg(status.status()),
            "exec plugin is configured to use API version "
            "client.authentication.k8s.io/v1, plugin returned version "
            "client.authentication.k8s.io/v1beta1");
}

}  // namespace
}  // namespace gpusched
