#include "api/codec/kueue_presence_json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(WebhookConfigurationsOnGroupTest, NamesTheConfigurationsOnTheGroup) {
  const char* list = R"({"items":[
    {"metadata":{"name":"kueue-mutating-webhook-configuration"},
     "webhooks":[{"name":"mpod.kb.io","rules":[{"apiGroups":[""]}]},
                 {"name":"mclusterqueue.kb.io",
                  "rules":[{"apiGroups":["kueue.x-k8s.io"]}]}]},
    {"metadata":{"name":"gpusched"},
     "webhooks":[{"name":"gate.gpusched.io","rules":[{"apiGroups":[""]}]}]},
    {"metadata":{"name":"no-webhooks"}}]})";
  absl::StatusOr<std::vector<std::string>> names =
      WebhookConfigurationsOnGroup(list, kKueueApiGroup);
  ASSERT_TRUE(names.ok()) << names.status();
  EXPECT_THAT(*names, ElementsAre("kueue-mutating-webhook-configuration"));
}

TEST(WebhookConfigurationsOnGroupTest, AWildcardGroupIsNotKueues) {
  const char* list = R"({"items":[{"metadata":{"name":"gatekeeper"},
    "webhooks":[{"rules":[{"apiGroups":["*"]}]}]}]})";
  EXPECT_THAT(*WebhookConfigurationsOnGroup(list, kKueueApiGroup),
              ::testing::IsEmpty());
}

TEST(WebhookConfigurationsOnGroupTest, AMalformedFieldIsNamed) {
  const char* list = R"({"items":[{},{"metadata":{"name":"x"},
    "webhooks":[{"rules":{"apiGroups":["kueue.x-k8s.io"]}}]}]})";
  absl::StatusOr<std::vector<std::string>> names =
      WebhookConfigurationsOnGroup(list, kKueueApiGroup);
  ASSERT_FALSE(names.ok());
  EXPECT_THAT(names.status().message(),
              HasSubstr("items[1].webhooks[0].rules: expected an array"));
}

TEST(WebhookConfigurationsOnGroupTest, NotJsonIsAnError) {
  EXPECT_FALSE(WebhookConfigurationsOnGroup("{items", kKueueApiGroup).ok());
}

}  // namespace
}  // namespace gpusched
