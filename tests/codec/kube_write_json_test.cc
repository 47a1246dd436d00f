// The bodies gpusched writes to the API server: evictions, Events and
// PodGroup status patches.
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "api/codec/event_json.h"
#include "api/codec/eviction_json.h"
#include "api/codec/podgroup_status_json.h"

namespace gpusched {
namespace {

using Json = nlohmann::json;

// A Warning about pod team-a/p (uid uid-p) with `note`.
EventRecord PodWarning(std::string note) {
  EventRecord event;
  event.regarding.namespace_name = "team-a";
  event.regarding.name = "p";
  event.regarding.uid = "uid-p";
  event.type = EventType::kWarning;
  event.reason = "R";
  event.note = std::move(note);
  return event;
}

TEST(EvictionJsonTest, IsAPolicyV1EvictionWithTheUidPrecondition) {
  EXPECT_EQ(EncodeEviction({.namespace_name = "ns", .name = "p", .uid = "u1"}),
            R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":)"
            R"({"name":"p","namespace":"ns"},"deleteOptions":)"
            R"({"preconditions":{"uid":"u1"}}})");
  EXPECT_EQ(EncodeEviction({.namespace_name = "ns", .name = "p"}),
            R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":)"
            R"({"name":"p","namespace":"ns"}})");
}

TEST(EventJsonTest, NoteIsCutToTheLimitOnACharacterBoundary) {
  std::string note = "a";
  for (int i = 0; i < 600; ++i) note += "\xC3\xA9";  // é, two bytes
  const Json event = Json::parse(
      EncodeEvent(PodWarning(note), "r1", std::chrono::system_clock::now()));
  // 1 + 2 * 511 = 1023 bytes: the 512th é would end at byte 1025.
  EXPECT_EQ(event["note"].get<std::string>().size(), 1023u);
}

TEST(EventJsonTest, EventTimeIsRfc3339WithMicroseconds) {
  const auto when = std::chrono::system_clock::time_point(
      std::chrono::microseconds(1700000000123456));
  const Json event = Json::parse(EncodeEvent(PodWarning("n"), "r1", when));
  EXPECT_EQ(event["eventTime"], "2023-11-14T22:13:20.123456Z");
  EXPECT_EQ(event["regarding"], Json({{"apiVersion", "v1"},
                                      {"kind", "Pod"},
                                      {"namespace", "team-a"},
                                      {"name", "p"},
                                      {"uid", "uid-p"}}));
}

TEST(PodGroupPatchTest, OptionalCoschedulingFieldsAreLeftOut) {
  EXPECT_EQ(EncodeCoschedulingStatusPatch(
                {.phase = CoschedulingPhase::kFinished, .succeeded = 4}),
            R"({"status":{"phase":"Finished","running":0,"succeeded":4,)"
            R"("failed":0}})");
}

TEST(EventJsonTest, ClusterScopedObjectsEventsLiveInDefault) {
  EXPECT_EQ(EventNamespace({.kind = "Node", .name = "dgx-1"}), "default");
  EXPECT_EQ(EventNamespace({.namespace_name = "ml", .name = "p"}), "ml");
}

}  // namespace
}  // namespace gpusched
