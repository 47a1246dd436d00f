// Tables and cells as kubectl prints them (cli_tables.h).
#include "api/cli/cli_tables.h"

#include <gtest/gtest.h>

namespace gpusched::cli {
namespace {

TEST(TextTableTest, ColumnsAreTheWidestCellPlusThreeSpacesAtLeastSix) {
  TextTable table({"Name", "Id", "Note"});
  table.AddRow({"a-long-name", "7", "last column unpadded"});
  table.AddRow({"b", "", "x"});
  // NAME: 11 + 3 = 14; ID: max(2 + 3, 6) = 6, "<none>" is 6 + 3 = 9.
  EXPECT_EQ(table.Render(), R"(
NAME          ID       NOTE
a-long-name   7        last column unpadded
b             <none>   x
)" + 1);
}

TEST(TextTableTest, HeadersAloneWhenThereAreNoRowsAndIndentApplies) {
  TextTable table({"Verdict", "Nodes"});
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.Render(2), "  VERDICT   NODES\n");
}

TEST(CellTextTest, StartIsRelativeToNow) {
  EXPECT_EQ(StartText(1000 + 720, 1000), "in 12m");
  EXPECT_EQ(StartText(1000 + 90, 1000), "in 90s");
  EXPECT_EQ(StartText(1000, 1000), "now");
  EXPECT_EQ(StartText(900, 1000), "now");  // due: the forecast ran late
  EXPECT_EQ(StartText(std::nullopt, 1000), "unknown");
}

TEST(CellTextTest, AgeIsKubectls) {
  EXPECT_EQ(AgeText(1000 - 200, 1000), "3m20s");
  EXPECT_EQ(AgeText(std::nullopt, 1000), "<unknown>");
}

TEST(CellTextTest, QuantitiesInTheirResourcesUnits) {
  struct Case {
    std::string_view resource;
    int64_t value;
    std::string_view text;
  } cases[] = {
      {"cpu", 500, "500m"},
      {"cpu", 4000, "4"},
      {"memory", int64_t{64} << 30, "64Gi"},
      {"memory", 1536, "1536"},  // 1.5Ki: not a whole unit
      {"memory", 0, "0"},
      {"ephemeral-storage", int64_t{3} << 40, "3Ti"},
      {"nvidia.com/gpu", 8, "8"},
      {"nvidia.com/gpu", 1024, "1024"},  // only bytes take binary units
  };
  for (const Case& c : cases) {
    EXPECT_EQ(QuantityText(c.resource, c.value), c.text)
        << c.resource << " " << c.value;
  }
}

TEST(CellTextTest, TimesAreRfc3339InUtc) {
  EXPECT_EQ(TimeText(1795831200), "2026-11-28T02:00:00Z");
}

}  // namespace
}  // namespace gpusched::cli
