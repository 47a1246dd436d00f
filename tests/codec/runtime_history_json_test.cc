#include "api/codec/runtime_history_json.h"

#include "api/codec/configmap_data_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

TEST(RuntimeHistoryJsonTest, RoundTrips) {
  const std::vector<RuntimeLog::Entry> entries = {
      {.cluster_queue = "team-a",
       .shape = "2x nvidia.com/gpu=8",
       .runs_ms = {3'600'000, 3'550'000},
       .last_ms = 1'795'000'000'000},
      {.cluster_queue = "team \"b\"", .shape = "1x", .runs_ms = {}}};
  absl::StatusOr<std::vector<RuntimeLog::Entry>> decoded =
      DecodeRuntimeHistory(EncodeRuntimeHistory(entries));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, entries);
}

TEST(RuntimeHistoryJsonTest, ErrorsNameTheField) {
  EXPECT_THAT(std::string(DecodeRuntimeHistory(
                              R"({"entries":[{"clusterQueue":"a","shape":"s",
                                  "runsMs":[1,"2"]}]})")
                              .status()
                              .message()),
              HasSubstr("entries[0].runsMs[1]: expected integer"));
  EXPECT_THAT(std::string(DecodeRuntimeHistory(R"({"entries":[{"shape":"s"}]})")
                              .status()
                              .message()),
              HasSubstr("entries[0].clusterQueue"));
  EXPECT_THAT(std::string(DecodeRuntimeHistory(
                              R"({"entries":[{"clusterQueue":"a","shape":"s",
                          "runsMs":[-1]}]})")
                              .status()
                              .message()),
              HasSubstr("cannot be negative"));
  EXPECT_FALSE(DecodeRuntimeHistory("{\"entries\":").ok());
  EXPECT_FALSE(DecodeRuntimeHistory("[]").ok());
}

TEST(RuntimeHistoryJsonTest, ConfigMapCarriesTheHistoryAsAString) {
  const std::string history = EncodeRuntimeHistory(
      {{.cluster_queue = "a", .shape = "1x", .runs_ms = {5}, .last_ms = 5}});
  const std::string config_map =
      EncodeConfigMapWithData("gpusched-system", "gpusched-runtime-history",
                              kRuntimeHistoryKey, history);
  absl::StatusOr<std::optional<std::string>> read =
      ConfigMapDataOf(config_map, kRuntimeHistoryKey);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, history);
  EXPECT_THAT(config_map, HasSubstr(R"("name":"gpusched-runtime-history")"));

  read =
      ConfigMapDataOf(R"({"kind":"ConfigMap","data":{}})", kRuntimeHistoryKey);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, std::nullopt);
  EXPECT_THAT(std::string(ConfigMapDataOf(R"({"data":{"runtimes.json":7}})",
                                          kRuntimeHistoryKey)
                              .status()
                              .message()),
              HasSubstr("ConfigMap.data.runtimes.json"));
  EXPECT_THAT(EncodeConfigMapDataPatch(kRuntimeHistoryKey, history),
              HasSubstr(R"({"data":{"runtimes.json":")"));
}

}  // namespace
}  // namespace gpusched
