// The Kubernetes API's envelopes: List metadata and items, watch event
// lines and Status error bodies.
#include "api/codec/kube_list_json.h"

#include <gtest/gtest.h>

#include <string>

namespace gpusched {
namespace {

TEST(ListMetaTest, ReadsVersionAndContinue) {
  absl::StatusOr<ListMeta> meta = DecodeListMeta(
      R"({"kind":"PodList","metadata":{"resourceVersion":"12","continue":"x"},"items":[]})");
  ASSERT_TRUE(meta.ok()) << meta.status();
  EXPECT_EQ(meta->resource_version, "12");
  EXPECT_EQ(meta->continue_token, "x");
}

TEST(ListMetaTest, BadListsNameTheField) {
  EXPECT_EQ(DecodeListMeta(R"({"metadata":{"resourceVersion":12}})")
                .status()
                .message(),
            "List.metadata.resourceVersion: expected string, got number");
  EXPECT_EQ(DecodeListMeta("[1]").status().message(),
            "List: expected object, got array");
  EXPECT_NE(DecodeListMeta("<html>").status().message().find("malformed JSON"),
            std::string::npos);
}

TEST(WatchEventTest, ReadsTypeObjectAndVersion) {
  WatchEventDecoder decoder;
  absl::StatusOr<WatchEventJson> event = decoder.Decode(
      R"({"type":"MODIFIED","object":{"metadata":{"name":"a","resourceVersion":"7"}}})");
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->type, "MODIFIED");
  EXPECT_EQ(event->resource_version, "7");
  EXPECT_EQ(ObjectNameForLogs(event->object), "a");
}

TEST(WatchEventTest, AnErrorEventCarriesItsStatus) {
  WatchEventDecoder decoder;
  absl::StatusOr<WatchEventJson> event = decoder.Decode(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}})");
  ASSERT_TRUE(event.ok()) << event.status();
  EXPECT_EQ(event->error_code, 410);
  EXPECT_EQ(event->error_message, "too old");
}

TEST(WatchEventTest, MalformedEventsNameTheField) {
  WatchEventDecoder decoder;
  struct Case {
    std::string line;
    std::string message;
  } cases[] = {
      {R"({"object":{}})", "WatchEvent.type: missing"},
      {R"({"type":3,"object":{}})",
       "WatchEvent.type: expected string, got number"},
      {R"({"type":"ADDED"})", "WatchEvent.object: missing"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(decoder.Decode(c.line).status().message(), c.message);
  }
  EXPECT_FALSE(decoder.Decode("{\"type\":").ok());
}

TEST(StatusMessageTest, CausesFollowTheMessage) {
  absl::StatusOr<std::string> message = DecodeStatusMessage(
      R"({"kind":"Status","message":"Cannot evict pod",
          "details":{"causes":[{"message":"budget a"},{"message":""},
                               {"message":"budget b"}]}})");
  ASSERT_TRUE(message.ok()) << message.status();
  EXPECT_EQ(*message, "Cannot evict pod (budget a; budget b)");
  EXPECT_FALSE(DecodeStatusMessage("<html>bad gateway</html>").ok());
}

TEST(ListItemsTest, AnItemThatDoesNotDecodeIsSetAsideByName) {
  absl::StatusOr<DecodedList<Pod>> pods = DecodePodList(
      R"({"items":[{"metadata":{"name":"good","namespace":"a"}},
                   {"metadata":{"name":"bad","labels":[]}}]})");
  ASSERT_TRUE(pods.ok()) << pods.status();
  ASSERT_EQ(pods->items.size(), 1u);
  EXPECT_EQ(pods->items[0].meta.name, "good");
  ASSERT_EQ(pods->skipped.size(), 1u);
  EXPECT_EQ(pods->skipped[0].name, "bad");
  EXPECT_NE(pods->skipped[0].error.message().find("Pod.metadata.labels"),
            std::string::npos)
      << pods->skipped[0].error;
}

TEST(ListItemsTest, ItemsThatAreNotAListAreAnError) {
  EXPECT_EQ(DecodeNodeList(R"({"items":"n1"})").status().message(),
            "NodeList.items: expected array, got string");
  absl::StatusOr<DecodedList<Node>> none = DecodeNodeList(R"({"items":null})");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->items.empty());
}

TEST(ListItemsTest, PodGroupItemsWithoutApiVersionTakeTheList) {
  absl::StatusOr<DecodedList<PodGroup>> groups = DecodePodGroupList(
      R"({"items":[{"metadata":{"name":"g","namespace":"ml"},
                    "spec":{"minMember":2}}]})",
      "scheduling.volcano.sh/v1beta1");
  ASSERT_TRUE(groups.ok()) << groups.status();
  ASSERT_EQ(groups->items.size(), 1u) << groups->skipped.size();
  EXPECT_EQ(groups->items[0].flavor, PodGroup::Flavor::kVolcano);
  EXPECT_EQ(groups->items[0].min_member, 2);
}

}  // namespace
}  // namespace gpusched
