#include "scheduler/gpu_set_allocator.h"

#include <numeric>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_split.h"
#include "api/codec/gpu_topology_annotation.h"
#include "gtest/gtest.h"
#include "scheduler/gpu_topology.h"

namespace gpusched {
namespace {

// Builds a topology from rows of link names, e.g. {"X PIX", "PIX X"}.
GpuTopology FromRows(const std::vector<std::string_view>& rows,
                     std::vector<int> numa) {
  std::vector<std::vector<GpuLink>> links;
  for (std::string_view row : rows) {
    links.emplace_back();
    for (absl::string_view cell :
         absl::StrSplit(absl::string_view(row.data(), row.size()), ' ',
                        absl::SkipEmpty())) {
      const std::optional<GpuLink> link =
          ParseLinkName(std::string_view(cell.data(), cell.size()));
      EXPECT_TRUE(link.has_value()) << cell;
      links.back().push_back(link.value_or(GpuLink{}));
    }
  }
  return GpuTopology::FromMatrix(std::move(links), std::move(numa));
}

// The Savio4 PCIe node of gpu-facts.md §3.1, completed symmetrically: PXB
// within each socket except the PIX pairs {2,3} and {6,7}, SYS across.
GpuTopology Savio4() {
  return FromRows(
      {"X   PXB PXB PXB SYS SYS SYS SYS", "PXB X   PXB PXB SYS SYS SYS SYS",
       "PXB PXB X   PIX SYS SYS SYS SYS", "PXB PXB PIX X   SYS SYS SYS SYS",
       "SYS SYS SYS SYS X   PXB PXB PXB", "SYS SYS SYS SYS PXB X   PXB PXB",
       "SYS SYS SYS SYS PXB PXB X   PIX", "SYS SYS SYS SYS PXB PXB PIX X"},
      {0, 0, 0, 0, 1, 1, 1, 1});
}

// `islands` NVSwitch islands of `size` GPUs (NV18 inside, SYS between);
// two islands per NUMA node.
GpuTopology Islands(int islands, int size) {
  const int n = islands * size;
  std::vector<std::vector<GpuLink>> links(n, std::vector<GpuLink>(n));
  std::vector<int> numa(n);
  for (int a = 0; a < n; ++a) {
    numa[a] = a / size / 2;
    for (int b = 0; b < n; ++b) {
      links[a][b] = a == b                 ? GpuLink{.kind = LinkKind::kSelf}
                    : a / size == b / size ? GpuLink{LinkKind::kNvLink, 18}
                                           : GpuLink{.kind = LinkKind::kSys};
    }
  }
  return GpuTopology::FromMatrix(std::move(links), std::move(numa));
}

std::vector<int> Range(int from, int to) {  // [from, to)
  std::vector<int> out(to - from);
  std::iota(out.begin(), out.end(), from);
  return out;
}

struct ChooseCase {
  std::string name;
  GpuTopology topology;
  std::vector<int> free;
  int count;
  std::optional<std::vector<int>> want;
  // gtest prints this instead of the bytes of the struct.
  friend void PrintTo(const ChooseCase& c, std::ostream* os) { *os << c.name; }
};

class ChooseGpuSetTest : public ::testing::TestWithParam<ChooseCase> {};

TEST_P(ChooseGpuSetTest, PicksTheBestConnectedSet) {
  const ChooseCase& c = GetParam();
  EXPECT_EQ(ChooseGpuSet(c.topology, c.free, c.count), c.want);
}

GpuTopology H100() {
  return GpuTopology::DefaultFor("NVIDIA-H100-80GB-HBM3", 8);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ChooseGpuSetTest,
    ::testing::ValuesIn(std::vector<ChooseCase>{
        // PIX 50 beats PXB 40; {6,7} ties and leaves the same leftover, so
        // the smaller list wins.
        {"PciePairTakesThePixPair", Savio4(), Range(0, 8), 2,
         std::vector<int>{2, 3}},
        // One socket: 5 PXB + 1 PIX = 250; any cross-socket set has SYS.
        {"PcieFourTakesOneNumaSide", Savio4(), Range(0, 8), 4,
         std::vector<int>{0, 1, 2, 3}},
        {"PcieFourTakesTheWholeFreeSide", Savio4(), Range(1, 8), 4,
         std::vector<int>{4, 5, 6, 7}},
        {"NvSwitchSameNumaWins", H100(), std::vector<int>{0, 1, 2, 4, 5, 6, 7},
         4, std::vector<int>{4, 5, 6, 7}},
        {"NvSwitchPairStaysInOneNuma", H100(), std::vector<int>{3, 4, 5}, 2,
         std::vector<int>{4, 5}},
        // Every single GPU scores 0; taking GPU4 leaves the PXB/PIX island
        // {0,1,2,3} intact (leftover 250) where taking GPU0 would leave
        // {1,2,3,4} (40 + 40 + 50 + 3 * SYS 10 = 160).
        {"SingleGpuLeavesTheIslandIntact", Savio4(), Range(0, 5), 1,
         std::vector<int>{4}},
        {"UnsortedDuplicatesAreTolerated", Savio4(), std::vector<int>{3, 2, 3},
         2, std::vector<int>{2, 3}},
        {"CountAboveFreeIsNullopt", Savio4(), Range(0, 3), 4, std::nullopt},
        {"ZeroCountIsNullopt", Savio4(), Range(0, 8), 0, std::nullopt},
        {"NegativeCountIsNullopt", Savio4(), Range(0, 8), -1, std::nullopt},
        // C(16, 8) = 12870: the largest exhaustive search.
        {"SixteenGpusExhaustive", Islands(2, 8), Range(0, 16), 8, Range(0, 8)},
        // C(32, 8) > 12870: greedy fallback.
        {"GreedyThirtyTwoTakesAnIsland", Islands(4, 8), Range(0, 32), 8,
         Range(0, 8)},
        // Greedy restarts from every seed: seeding at GPU3 would end in
        // {3..10} (island 0 only has 5 free), seeding at GPU8 finds the
        // full island {8..15}.
        {"GreedySkipsAPartialIsland", Islands(4, 8), Range(3, 32), 8,
         Range(8, 16)},
    }),
    [](const ::testing::TestParamInfo<ChooseCase>& info) {
      return info.param.name;
    });

TEST(ChooseGpuSetTieTest, AllEqualLinksTakeLowestIndices) {
  const GpuTopology topology =
      *ParseGpuTopology(R"({"gpus": 8, "all": "NV18"})");
  EXPECT_EQ(ChooseGpuSet(topology, Range(0, 8), 3),
            (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ChooseGpuSet(topology, std::vector<int>{2, 5, 6, 7}, 2),
            (std::vector<int>{2, 5}));
}

TEST(ChooseGpuSetTieTest, EqualSetsPreferTheBetterLeftover) {
  // Three NV4 pairs {0,1} {2,3} {4,5}, each scoring 400 + 20 = 420. GPUs
  // 0,1,4,5 share NUMA 0 (NODE between pairs), 2,3 are alone on NUMA 1
  // (SYS to the rest). Taking {2,3} leaves {0,1,4,5} with NODE links
  // (420 + 420 + 4 * 20 = 920); taking {0,1} would leave SYS (880).
  const GpuTopology topology = FromRows(
      {"X    NV4  SYS  SYS  NODE NODE", "NV4  X    SYS  SYS  NODE NODE",
       "SYS  SYS  X    NV4  SYS  SYS", "SYS  SYS  NV4  X    SYS  SYS",
       "NODE NODE SYS  SYS  X    NV4", "NODE NODE SYS  SYS  NV4  X"},
      {0, 0, 1, 1, 0, 0});
  EXPECT_EQ(ChooseGpuSet(topology, Range(0, 6), 2), (std::vector<int>{2, 3}));
}

TEST(GpuSetBestScoreTest, ReturnsTheWinningSetScore) {
  EXPECT_EQ(BestSetScore(Savio4(), Range(0, 8), 2), 50);   // PIX
  EXPECT_EQ(BestSetScore(Savio4(), Range(0, 8), 4), 250);  // 5 * 40 + 50
  EXPECT_EQ(BestSetScore(Savio4(), Range(0, 8), 1), 0);
  EXPECT_EQ(BestSetScore(Savio4(), Range(0, 8), 9), std::nullopt);
  // Greedy path: one full island, 28 pairs * (1800 + same NUMA 20).
  EXPECT_EQ(BestSetScore(Islands(4, 8), Range(3, 32), 8), 28 * 1820);
}

TEST(GpuSetMaxPairScoreTest, IsTheBestPairOfTheNode) {
  EXPECT_EQ(MaxPairScore(Savio4()), 50);
  EXPECT_EQ(MaxPairScore(H100()), 1820);
  EXPECT_EQ(MaxPairScore(GpuTopology::DefaultFor("NVIDIA-L4", 1)), 0);
}

struct NormalizedCase {
  std::string name;
  GpuTopology topology;
  std::vector<int> gpus;
  int want;
  // gtest prints this instead of the bytes of the struct.
  friend void PrintTo(const NormalizedCase& c, std::ostream* os) {
    *os << c.name;
  }
};

class GpuSetNormalizedScoreTest
    : public ::testing::TestWithParam<NormalizedCase> {};

TEST_P(GpuSetNormalizedScoreTest, ScalesToPercentOfTheBestPairs) {
  const NormalizedCase& c = GetParam();
  EXPECT_EQ(NormalizedSetScore(c.topology, c.gpus), c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuSetNormalizedScoreTest,
    ::testing::ValuesIn(std::vector<NormalizedCase>{
        {"BestPair", Savio4(), {2, 3}, 100},
        {"CrossSocketPair", Savio4(), {0, 4}, 20},        // 10 * 100 / 50
        {"PxbTriple", Savio4(), {0, 1, 2}, 80},           // 120*100/(3*50)
        {"NvSwitchCrossNuma", H100(), {0, 4}, 99},        // 181000 / 1820
        {"NvSwitchTriple", H100(), {0, 1, 4}, 99},        // 544000 / 5460
        {"NvSwitchSameNuma", H100(), {0, 1, 2, 3}, 100},  // all 1820
        {"SingleGpu", Savio4(), {5}, 100},
        {"EmptySet", Savio4(), {}, 100},
    }),
    [](const ::testing::TestParamInfo<NormalizedCase>& info) {
      return info.param.name;
    });

}  // namespace
}  // namespace gpusched
