// CustomResourceDefinition JSON: established, a version served, and the
// field named when a CRD cannot be read.
#include "api/codec/crd_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/codec/crd_objects.h"

namespace gpusched {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kVolcanoCrd = "podgroups.scheduling.volcano.sh";

// Volcano's PodGroup CRD as the API server answers it, serving `version`.
Json PodGroupCrd(std::string_view version, bool established) {
  return testing::PodGroupCrdObject("scheduling.volcano.sh", version,
                                    established);
}

absl::StatusOr<CrdServing> Decode(const Json& crd,
                                  std::string_view version = "v1beta1") {
  simdjson::dom::parser parser;
  simdjson::dom::element root = parser.parse(crd.dump()).value();
  return DecodeCrd(root, version);
}

// What a well-formed CRD says of serving v1beta1.
TEST(DecodeCrdTest, SaysWhetherEstablishedAndServingTheVersion) {
  struct Case {
    std::string what;
    Json crd;
    bool established, version_served;
  };
  Json established_false = PodGroupCrd("v1beta1", true);
  established_false["status"]["conditions"][1]["status"] = "False";
  Json not_served = PodGroupCrd("v1beta1", true);
  not_served["spec"]["versions"][0]["served"] = false;
  const Case cases[] = {
      {"established", PodGroupCrd("v1beta1", true), true, true},
      {"just created, no status", PodGroupCrd("v1beta1", false), false, true},
      {"Established False", established_false, false, true},
      {"another version only", PodGroupCrd("v1alpha1", true), true, false},
      {"the version not served", not_served, true, false},
  };
  for (const Case& c : cases) {
    absl::StatusOr<CrdServing> crd = Decode(c.crd);
    ASSERT_TRUE(crd.ok()) << c.what << ": " << crd.status();
    EXPECT_EQ(crd->name, kVolcanoCrd) << c.what;
    EXPECT_EQ(crd->established, c.established) << c.what;
    EXPECT_EQ(crd->version_served, c.version_served) << c.what;
    EXPECT_EQ(crd->ready(), c.established && c.version_served) << c.what;
  }
}

// Each malformed CRD is refused with the field at fault in the message.
TEST(DecodeCrdTest, MalformedCrdNamesTheFieldItRejects) {
  struct Case {
    std::string pointer;  // the field replaced (or removed when null)
    Json value;
    std::string field;  // expected in the message
  };
  const Case cases[] = {
      {"/metadata/name", 7, "metadata.name"},
      {"/spec/versions", nullptr, "spec.versions"},
      {"/spec/versions", "v1beta1", "spec.versions"},
      {"/spec/versions/0/name", nullptr, "spec.versions[0].name"},
      {"/spec/versions/0/served", "yes", "spec.versions[0].served"},
      {"/status", "Established", "status"},
      {"/status/conditions", Json::object(), "status.conditions"},
      {"/status/conditions/0/type", nullptr, "status.conditions[0].type"},
      {"/status/conditions/1/status", true, "status.conditions[1].status"},
  };
  for (const Case& c : cases) {
    Json json = PodGroupCrd("v1beta1", true);
    const Json::json_pointer at(c.pointer);
    if (c.value.is_null()) {
      json[at.parent_pointer()].erase(at.back());
    } else {
      json[at] = c.value;
    }
    absl::StatusOr<CrdServing> crd = Decode(json);
    ASSERT_FALSE(crd.ok()) << c.pointer;
    EXPECT_EQ(crd.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(crd.status().message().find(c.field + ":"), std::string::npos)
        << c.pointer << ": " << crd.status();
  }
}

TEST(DecodeCrdTest, NotAnObjectIsRefused) {
  simdjson::dom::parser parser;
  absl::StatusOr<CrdServing> crd =
      DecodeCrd(parser.parse(std::string("[1]")).value(), "v1beta1");
  EXPECT_FALSE(crd.ok());
}

TEST(DecodeCrdTest, TheErrorNamesTheCrd) {
  Json json = PodGroupCrd("v1beta1", true);
  json["spec"]["versions"][0]["served"] = "yes";
  absl::StatusOr<CrdServing> crd = Decode(json);
  ASSERT_FALSE(crd.ok());
  EXPECT_EQ(crd.status().message(),
            "CustomResourceDefinition podgroups.scheduling.volcano.sh: "
            "spec.versions[0].served: expected boolean, got string");
}

TEST(DecodeCrdListTest, ReadsEveryItem) {
  Json list = {{"kind", "CustomResourceDefinitionList"},
               {"items", Json::array({PodGroupCrd("v1beta1", true),
                                      PodGroupCrd("v1alpha1", false)})}};
  absl::StatusOr<std::vector<CrdServing>> crds =
      DecodeCrdList(list.dump(), "v1beta1");
  ASSERT_TRUE(crds.ok()) << crds.status();
  ASSERT_EQ(crds->size(), 2u);
  EXPECT_TRUE((*crds)[0].ready());
  EXPECT_FALSE((*crds)[1].ready());
  absl::StatusOr<std::vector<CrdServing>> none =
      DecodeCrdList(R"({"items":null})", "v1beta1");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(DecodeCrdListTest, BadListsNameWhatIsWrong) {
  EXPECT_NE(DecodeCrdList(R"({"items":{}})", "v1")
                .status()
                .message()
                .find("CustomResourceDefinitionList.items: expected array"),
            std::string::npos);
  EXPECT_NE(DecodeCrdList(R"({"items":[)", "v1")
                .status()
                .message()
                .find("malformed JSON at byte"),
            std::string::npos);
}

}  // namespace
}  // namespace gpusched
