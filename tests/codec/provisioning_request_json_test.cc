// autoscaling.x-k8s.io/v1 ProvisioningRequests: Kueue's names (with the
// hash of a long one), the attempt a name carries, the body gpusched
// creates, and the conditions it reads back.
#include "api/codec/provisioning_request_json.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace gpusched {
namespace {

// `decode` on `json` parsed; the decoder's error type when it does not
// parse.
template <typename T>
absl::StatusOr<T> Decode(absl::StatusOr<T> (*decode)(simdjson::dom::element,
                                                     std::string_view),
                         const std::string& json) {
  static simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(json).get(root)) return absl::InvalidArgumentError("json");
  return decode(root, "ProvisioningRequest");
}

absl::StatusOr<RequestConditions> DecodeRequest(const std::string& json) {
  return Decode(&DecodeProvisioningRequestConditions, json);
}

absl::StatusOr<RequestMadeWith> DecodeMadeWith(const std::string& json) {
  return Decode(&DecodeProvisioningRequestMadeWith, json);
}

TEST(ProvisioningRequestMadeWithTest, ReadsClassAndParameters) {
  absl::StatusOr<RequestMadeWith> made = DecodeMadeWith(R"({"spec": {
      "provisioningClassName": "queued-provisioning.gke.io",
      "parameters": {"ValidUntilSeconds": "60"}}})");
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->class_name, "queued-provisioning.gke.io");
  EXPECT_EQ(made->parameters.at("ValidUntilSeconds"), "60");
}

TEST(ProvisioningRequestMadeWithTest, ParameterThatIsNoStringIsNamed) {
  absl::StatusOr<RequestMadeWith> made =
      DecodeMadeWith(R"({"spec": {"parameters": {"x": 1}}})");
  ASSERT_FALSE(made.ok());
  EXPECT_NE(
      made.status().message().find("ProvisioningRequest.spec.parameters.x"),
      std::string::npos)
      << made.status();
}

// Kueue's provReqSyncedWithConfig: the class and every parameter of the
// config; a parameter the pods' annotations added does not matter.
TEST(ProvisioningRequestMadeWithTest, SyncedWithConfigComparesTheConfigs) {
  const ProvisioningRequestConfig config{.provisioning_class_name = "c",
                                         .parameters = {{"a", "1"}}};
  EXPECT_TRUE(RequestSyncedWithConfig(
      {.class_name = "c", .parameters = {{"a", "1"}, {"from-pod", "x"}}},
      config));
  EXPECT_FALSE(RequestSyncedWithConfig(
      {.class_name = "d", .parameters = {{"a", "1"}}}, config));
  EXPECT_FALSE(RequestSyncedWithConfig(
      {.class_name = "c", .parameters = {{"a", "2"}}}, config));
  EXPECT_FALSE(RequestSyncedWithConfig({.class_name = "c"}, config));
}

TEST(ProvisioningRequestNameTest, WorkloadCheckAndAttempt) {
  EXPECT_EQ(ProvisioningRequestName("train", "prov", 1), "train-prov-1");
  EXPECT_EQ(ProvisioningPodTemplateName("train-prov-1", "main"),
            "ppt-train-prov-1-main");
}

// Kueue's limitObjectName: 247 characters, "-", five hex digits of the
// SHA-1 of the full name (hashlib.sha1(full).hexdigest()[:5]).
TEST(ProvisioningRequestNameTest, LongNameIsCutAndHashed) {
  const std::string name =
      ProvisioningRequestName(std::string(250, 'w'), "prov", 1);
  ASSERT_EQ(name.size(), 253u);
  EXPECT_EQ(name.substr(0, 247), std::string(247, 'w'));
  EXPECT_EQ(name.substr(247), "-2a7a6");
}

TEST(ProvisioningRequestNameTest, AttemptIsReadFromTheName) {
  EXPECT_EQ(ProvisioningRequestAttempt("train-prov-12", "train", "prov"), 12);
  EXPECT_EQ(ProvisioningRequestAttempt("train-prov-x", "train", "prov"),
            std::nullopt);
  EXPECT_EQ(ProvisioningRequestAttempt("train-other-1", "train", "prov"),
            std::nullopt);
}

TEST(ProvisioningRequestJsonTest, BodyCarriesClassParametersPodSetsOwners) {
  const ProvisioningRequestSpec spec{
      .namespace_name = "team-a",
      .name = "train-prov-1",
      .class_name = "check-capacity.autoscaling.x-k8s.io",
      .parameters = {{"ValidUntilSeconds", "60"}},
      .pod_sets = {{.pod_template = "ppt-train-prov-1-main", .count = 2}},
      .owners = {{.api_version = "v1",
                  .kind = "Pod",
                  .name = "train-0",
                  .uid = "u0"}}};
  EXPECT_EQ(
      ProvisioningRequestJson(spec),
      R"({"apiVersion":"autoscaling.x-k8s.io/v1","kind":"ProvisioningRequest",)"
      R"("metadata":{"name":"train-prov-1","namespace":"team-a",)"
      R"("labels":{"kueue.x-k8s.io/managed":"true"},)"
      R"("ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"train-0",)"
      R"("uid":"u0"}]},"spec":{"provisioningClassName":)"
      R"("check-capacity.autoscaling.x-k8s.io",)"
      R"("parameters":{"ValidUntilSeconds":"60"},"podSets":[{"podTemplateRef":)"
      R"({"name":"ppt-train-prov-1-main"},"count":2}]}})");
}

TEST(ProvisioningRequestConditionsTest, ReadsTrueConditionsWithMessages) {
  absl::StatusOr<RequestConditions> c = DecodeRequest(R"({
    "status": {"conditions": [
      {"type": "Accepted", "status": "True", "reason": "A"},
      {"type": "Provisioned", "status": "False", "message": "not yet"},
      {"type": "Failed", "status": "True", "message": "out of stock"}]}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->accepted);
  EXPECT_FALSE(c->provisioned);
  EXPECT_TRUE(c->failed);
  EXPECT_EQ(c->failed_message, "out of stock");
}

TEST(ProvisioningRequestConditionsTest, NoStatusIsNoCondition) {
  absl::StatusOr<RequestConditions> c = DecodeRequest(R"({"spec": {}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->accepted || c->provisioned || c->failed);
}

TEST(ProvisioningRequestConditionsTest, ConditionWithoutTypeIsNamed) {
  absl::StatusOr<RequestConditions> c =
      DecodeRequest(R"({"status": {"conditions": [{"status": "True"}]}})");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "ProvisioningRequest.status.conditions[0].type: missing");
}

TEST(ProvisioningRequestConditionsTest, ReadsProvisioningClassDetails) {
  absl::StatusOr<RequestConditions> c = DecodeRequest(R"({
    "status": {"provisioningClassDetails": {"nodePool": "pool-7"}}})");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->class_details,
            (std::map<std::string, std::string>{{"nodePool", "pool-7"}}));
}

TEST(ProvisioningRequestConditionsTest, DetailThatIsNoStringIsNamed) {
  absl::StatusOr<RequestConditions> c = DecodeRequest(R"({
    "status": {"provisioningClassDetails": {"nodePool": 7}}})");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find(
                "ProvisioningRequest.status.provisioningClassDetails"),
            std::string::npos)
      << c.status();
}

}  // namespace
}  // namespace gpusched
