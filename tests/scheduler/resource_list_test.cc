#include "scheduler/resource_list.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ResourceList, MissingResourceReadsAsZero) {
  ResourceList list{{"cpu", 500}};
  EXPECT_EQ(list.Get("memory"), 0);
  EXPECT_FALSE(list.Has("memory"));
  EXPECT_TRUE(list.Has("cpu"));
}

TEST(ResourceList, KeepsEntriesSortedByNameWhateverTheInsertionOrder) {
  ResourceList list;
  list.Set("nvidia.com/gpu", 2);
  list.Set("cpu", 4000);
  list.Set("memory", 1024);
  EXPECT_THAT(list.entries(),
              ElementsAre(Pair("cpu", 4000), Pair("memory", 1024),
                          Pair("nvidia.com/gpu", 2)));
}

TEST(ResourceList, SetReplacesAnExistingAmount) {
  ResourceList list{{"cpu", 500}};
  list.Set("cpu", 700);
  EXPECT_THAT(list.entries(), ElementsAre(Pair("cpu", 700)));
}

TEST(ResourceList, AddAccumulatesPerResource) {
  ResourceList list{{"cpu", 500}, {"memory", 100}};
  list.Add(ResourceList{{"cpu", 250}, {"pods", 1}});
  EXPECT_THAT(list.entries(),
              ElementsAre(Pair("cpu", 750),  // 500 + 250
                          Pair("memory", 100), Pair("pods", 1)));
}

TEST(ResourceList, SubtractUndoesAdd) {
  ResourceList list{{"cpu", 500}, {"memory", 100}};
  const ResourceList other{{"cpu", 250}, {"memory", 40}};
  list.Add(other);
  list.Subtract(other);
  EXPECT_EQ(list, (ResourceList{{"cpu", 500}, {"memory", 100}}));
}

TEST(ResourceList, MaxWithTakesTheLargerAmountPerResource) {
  ResourceList list{{"cpu", 500}, {"memory", 100}};
  list.MaxWith(ResourceList{{"cpu", 200}, {"memory", 300}, {"pods", 1}});
  EXPECT_THAT(list.entries(), ElementsAre(Pair("cpu", 500), Pair("memory", 300),
                                          Pair("pods", 1)));
}

TEST(ResourceList, ParseAmountUsesMilliForCpuAndBaseUnitsElsewhere) {
  EXPECT_EQ(ResourceList::ParseAmount("cpu", "1.5").value_or(-1),
            1500);  // 1.5 * 1000 milli-CPU
  EXPECT_EQ(ResourceList::ParseAmount("memory", "1Gi").value_or(-1),
            1073741824);  // 2^30 bytes
  EXPECT_EQ(ResourceList::ParseAmount("nvidia.com/gpu", "2").value_or(-1), 2);
  EXPECT_FALSE(ResourceList::ParseAmount("cpu", "lots").ok());
}

TEST(ResourceList, FormatAmountPrintsEachResourceInItsUnits) {
  const struct {
    std::string_view name;
    int64_t amount;
    std::string_view want;
  } kCases[] = {
      {"cpu", 500, "500m"},
      {"cpu", 4000, "4"},
      {"memory", int64_t{64} << 30, "64Gi"},
      {"memory", int64_t{2} << 40, "2Ti"},
      {"memory", int64_t{3} << 29, "1536Mi"},       // exact beats short
      {"memory", (int64_t{3} << 29) + 1, "1.5Gi"},  // 1.5 * 2^30 + 1 byte
      {"memory", 512, "512"},
      {"ephemeral-storage", int64_t{10} << 20, "10Mi"},
      {"nvidia.com/gpu", 3, "3"},
      {"pods", 110, "110"},
  };
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(ResourceList::FormatAmount(c.name, c.amount), c.want);
  }
}

}  // namespace
}  // namespace gpusched
