// extension-apiserver-authentication and SubjectAccessReviews.
#include "api/codec/delegated_auth_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpusched {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// As kube-apiserver writes it: the lists are JSON text inside strings.
Json AuthConfigMap() {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata",
           {{"name", "extension-apiserver-authentication"},
            {"namespace", "kube-system"}}},
          {"data",
           {{"client-ca-file", "CLIENT CA"},
            {"requestheader-client-ca-file", "FRONT PROXY CA"},
            {"requestheader-allowed-names", R"(["front-proxy-client"])"},
            {"requestheader-username-headers", R"(["X-Remote-User"])"},
            {"requestheader-group-headers", R"(["X-Remote-Group"])"},
            {"requestheader-extra-headers-prefix", R"(["X-Remote-Extra-"])"},
            {"requestheader-uid-headers", "[]"}}}};
}

TEST(RequestHeaderConfigTest, ReadsTheFrontProxySettings) {
  absl::StatusOr<RequestHeaderConfig> config =
      DecodeRequestHeaderConfig(AuthConfigMap().dump());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->client_ca_pem, "FRONT PROXY CA");
  EXPECT_THAT(config->allowed_names, ElementsAre("front-proxy-client"));
  EXPECT_THAT(config->username_headers, ElementsAre("X-Remote-User"));
  EXPECT_THAT(config->group_headers, ElementsAre("X-Remote-Group"));
  EXPECT_THAT(config->extra_headers_prefixes, ElementsAre("X-Remote-Extra-"));
}

TEST(RequestHeaderConfigTest, EmptyAllowedNamesMeansAnyName) {
  Json map = AuthConfigMap();
  map["data"]["requestheader-allowed-names"] = "[]";
  absl::StatusOr<RequestHeaderConfig> config =
      DecodeRequestHeaderConfig(map.dump());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(config->allowed_names.empty());
}

TEST(RequestHeaderConfigTest, NoFrontProxyIsAnErrorThatSaysSo) {
  Json map = AuthConfigMap();
  map["data"].erase("requestheader-client-ca-file");
  absl::StatusOr<RequestHeaderConfig> config =
      DecodeRequestHeaderConfig(map.dump());
  EXPECT_THAT(std::string(config.status().message()),
              HasSubstr("--requestheader-client-ca-file"));
}

TEST(RequestHeaderConfigTest, MalformedListsAreNamed) {
  Json map = AuthConfigMap();
  map["data"]["requestheader-group-headers"] = "X-Remote-Group";
  EXPECT_EQ(DecodeRequestHeaderConfig(map.dump()).status().message(),
            "ConfigMap.data.requestheader-group-headers: not a JSON list of "
            "strings");
  map["data"]["requestheader-group-headers"] = "[1]";
  EXPECT_FALSE(DecodeRequestHeaderConfig(map.dump()).ok());
  EXPECT_FALSE(DecodeRequestHeaderConfig("[]").ok());
  EXPECT_FALSE(DecodeRequestHeaderConfig(R"({"data":7})").ok());
}

TEST(SubjectAccessReviewTest, EncodesUserAndNonEmptyAttributes) {
  RequestUser user{.name = "alice",
                   .groups = {"team-a", "system:authenticated"},
                   .extra = {{"scopes", {"a", "b"}}}};
  ResourceAttributes attributes{.verb = "get",
                                .group = "visibility.gpusched.io",
                                .version = "v1alpha1",
                                .resource = "localqueues",
                                .subresource = "pendingworkloads",
                                .namespace_name = "team-a",
                                .name = "lq"};
  EXPECT_EQ(
      EncodeSubjectAccessReview(user, attributes),
      R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview",)"
      R"("spec":{"resourceAttributes":{"verb":"get","group":)"
      R"("visibility.gpusched.io","version":"v1alpha1","resource":)"
      R"("localqueues","subresource":"pendingworkloads","namespace":)"
      R"("team-a","name":"lq"},"user":"alice","groups":["team-a",)"
      R"("system:authenticated"],"extra":{"scopes":["a","b"]}}})");
  attributes.namespace_name.clear();
  EXPECT_FALSE(Json::parse(EncodeSubjectAccessReview(
      {.name = "bob"}, attributes))["spec"]["resourceAttributes"]
                   .contains("namespace"));
}

TEST(SubjectAccessReviewTest, DecodesTheVerdict) {
  absl::StatusOr<AccessVerdict> allowed = DecodeSubjectAccessReview(
      R"({"status":{"allowed":true,"reason":"RBAC: allowed by RoleBinding"}})");
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_TRUE(allowed->allowed);
  EXPECT_EQ(allowed->reason, "RBAC: allowed by RoleBinding");
  absl::StatusOr<AccessVerdict> denied =
      DecodeSubjectAccessReview(R"({"status":{"allowed":false}})");
  ASSERT_TRUE(denied.ok());
  EXPECT_FALSE(denied->allowed);
  EXPECT_EQ(DecodeSubjectAccessReview(R"({"spec":{}})").status().message(),
            "SubjectAccessReview.status: missing");
  EXPECT_FALSE(DecodeSubjectAccessReview(R"({"status":{}})").ok());
}

}  // namespace
}  // namespace gpusched
