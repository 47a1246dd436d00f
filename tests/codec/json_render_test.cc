// An API answer as kubectl's -o json and -o yaml print it (json_render.h).
#include "api/codec/json_render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched {
namespace {

using ::testing::ElementsAre;

TEST(JsonRenderTest, IndentsByFourKeepingTheServersOrderAndNumbers) {
  absl::StatusOr<std::string> text = IndentJson(
      R"({"z":1,"a":[1.5,-3,"x\"y"],"e":{},"l":[],"n":null,"t":true})");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, R"({
    "z": 1,
    "a": [
        1.5,
        -3,
        "x\"y"
    ],
    "e": {},
    "l": [],
    "n": null,
    "t": true
}
)");
}

TEST(JsonRenderTest, YamlListsSitAtTheirKeysColumn) {
  absl::StatusOr<std::string> text = JsonToYaml(R"({
    "kind": "List",
    "items": [{"name": "a", "resources": [{"name": "nvidia.com/gpu", "count": 8}]},
              [1, 2], "plain"],
    "metadata": {"labels": {}, "finalizers": []}})");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, R"(kind: List
items:
- name: a
  resources:
  - name: nvidia.com/gpu
    count: 8
- - 1
  - 2
- plain
metadata:
  labels: {}
  finalizers: []
)");
}

TEST(JsonRenderTest, YamlQuotesStringsItWouldReadAsSomethingElse) {
  absl::StatusOr<std::string> text = JsonToYaml(R"({
    "empty": "", "bool": "true", "Yes": "No", "number": "12",
    "time": "2026-11-28T02:00:00Z", "colon": "a: b", "comment": "a #b",
    "dash": "-x", "newline": "a\nb", "sentence": "needs 16 GPUs, none free",
    "null": null, "real": 12})");
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_EQ(*text, R"(empty: ""
bool: "true"
"Yes": "No"
number: "12"
time: "2026-11-28T02:00:00Z"
colon: "a: b"
comment: "a #b"
dash: "-x"
newline: "a\nb"
sentence: "needs 16 GPUs, none free"
"null": null
real: 12
)");
}

TEST(JsonRenderTest, ListItemsAndListsOfObjects) {
  absl::StatusOr<std::vector<std::string>> items =
      ListItemsJson(R"({"items": [{"a": 1}, {"b": [2, 3]}]})");
  ASSERT_TRUE(items.ok()) << items.status();
  EXPECT_THAT(*items, ElementsAre(R"({"a":1})", R"({"b":[2,3]})"));
  EXPECT_EQ(JsonList(*items),
            R"({"apiVersion":"v1","kind":"List","items":[{"a":1},{"b":[2,3]}],)"
            R"("metadata":{"resourceVersion":""}})");
}

TEST(JsonRenderTest, MalformedJsonIsAnError) {
  EXPECT_FALSE(IndentJson("{").ok());
  EXPECT_FALSE(JsonToYaml("[1,").ok());
  EXPECT_FALSE(ListItemsJson("[]").ok());
}

}  // namespace
}  // namespace gpusched
