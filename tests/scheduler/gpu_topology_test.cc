#include "scheduler/gpu_topology.h"

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "api/codec/gpu_topology_annotation.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpusched {
namespace {

using ::testing::HasSubstr;

// A DGX H100 as `nvidia-smi topo -m` prints it (tab-separated): NVSwitch
// NV18 between all GPUs, GPU0-3 on socket 0, GPU4-7 on socket 1, one
// ConnectX NIC per GPU plus two storage NICs, the Legend blocks at the end.
constexpr std::string_view kDgxH100 =
    R"(	GPU0	GPU1	GPU2	GPU3	GPU4	GPU5	GPU6	GPU7	NIC0	NIC1	NIC2	NIC3	NIC4	NIC5	NIC6	NIC7	NIC8	NIC9	CPU Affinity	NUMA Affinity	GPU NUMA ID
GPU0	 X 	NV18	NV18	NV18	NV18	NV18	NV18	NV18	PIX	NODE	NODE	NODE	SYS	SYS	SYS	SYS	NODE	SYS	0-55,112-167	0		N/A
GPU1	NV18	 X 	NV18	NV18	NV18	NV18	NV18	NV18	NODE	PIX	NODE	NODE	SYS	SYS	SYS	SYS	NODE	SYS	0-55,112-167	0		N/A
GPU2	NV18	NV18	 X 	NV18	NV18	NV18	NV18	NV18	NODE	NODE	PIX	NODE	SYS	SYS	SYS	SYS	NODE	SYS	0-55,112-167	0		N/A
GPU3	NV18	NV18	NV18	 X 	NV18	NV18	NV18	NV18	NODE	NODE	NODE	PIX	SYS	SYS	SYS	SYS	NODE	SYS	0-55,112-167	0		N/A
GPU4	NV18	NV18	NV18	NV18	 X 	NV18	NV18	NV18	SYS	SYS	SYS	SYS	PIX	NODE	NODE	NODE	SYS	NODE	56-111,168-223	1		N/A
GPU5	NV18	NV18	NV18	NV18	NV18	 X 	NV18	NV18	SYS	SYS	SYS	SYS	NODE	PIX	NODE	NODE	SYS	NODE	56-111,168-223	1		N/A
GPU6	NV18	NV18	NV18	NV18	NV18	NV18	 X 	NV18	SYS	SYS	SYS	SYS	NODE	NODE	PIX	NODE	SYS	NODE	56-111,168-223	1		N/A
GPU7	NV18	NV18	NV18	NV18	NV18	NV18	NV18	 X 	SYS	SYS	SYS	SYS	NODE	NODE	NODE	PIX	SYS	NODE	56-111,168-223	1		N/A
NIC0	PIX	NODE	NODE	NODE	SYS	SYS	SYS	SYS	 X 	NODE	NODE	NODE	SYS	SYS	SYS	SYS	NODE	SYS
NIC1	NODE	PIX	NODE	NODE	SYS	SYS	SYS	SYS	NODE	 X 	NODE	NODE	SYS	SYS	SYS	SYS	NODE	SYS
NIC2	NODE	NODE	PIX	NODE	SYS	SYS	SYS	SYS	NODE	NODE	 X 	NODE	SYS	SYS	SYS	SYS	NODE	SYS
NIC3	NODE	NODE	NODE	PIX	SYS	SYS	SYS	SYS	NODE	NODE	NODE	 X 	SYS	SYS	SYS	SYS	NODE	SYS
NIC4	SYS	SYS	SYS	SYS	PIX	NODE	NODE	NODE	SYS	SYS	SYS	SYS	 X 	NODE	NODE	NODE	SYS	NODE
NIC5	SYS	SYS	SYS	SYS	NODE	PIX	NODE	NODE	SYS	SYS	SYS	SYS	NODE	 X 	NODE	NODE	SYS	NODE
NIC6	SYS	SYS	SYS	SYS	NODE	NODE	PIX	NODE	SYS	SYS	SYS	SYS	NODE	NODE	 X 	NODE	SYS	NODE
NIC7	SYS	SYS	SYS	SYS	NODE	NODE	NODE	PIX	SYS	SYS	SYS	SYS	NODE	NODE	NODE	 X 	SYS	NODE
NIC8	NODE	NODE	NODE	NODE	SYS	SYS	SYS	SYS	NODE	NODE	NODE	NODE	SYS	SYS	SYS	SYS	 X 	SYS
NIC9	SYS	SYS	SYS	SYS	NODE	NODE	NODE	NODE	SYS	SYS	SYS	SYS	NODE	NODE	NODE	NODE	SYS	 X 

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
  NIC2: mlx5_2
  NIC3: mlx5_3
  NIC4: mlx5_4
  NIC5: mlx5_5
  NIC6: mlx5_6
  NIC7: mlx5_7
  NIC8: mlx5_8
  NIC9: mlx5_9
)";

// The Savio4 8-GPU PCIe node from gpu-facts.md §3.1, completed
// symmetrically (GPU4-7 mirror GPU0-3), space-separated.
constexpr std::string_view kSavio4 =
    R"(        GPU0    GPU1    GPU2    GPU3    GPU4    GPU5    GPU6    GPU7    CPU Affinity    NUMA Affinity
GPU0     X      PXB     PXB     PXB     SYS     SYS     SYS     SYS     0-15    0
GPU1    PXB      X      PXB     PXB     SYS     SYS     SYS     SYS     0-15    0
GPU2    PXB     PXB      X      PIX     SYS     SYS     SYS     SYS     0-15    0
GPU3    PXB     PXB     PIX      X      SYS     SYS     SYS     SYS     0-15    0
GPU4    SYS     SYS     SYS     SYS      X      PXB     PXB     PXB     16-31   1
GPU5    SYS     SYS     SYS     SYS     PXB      X      PXB     PXB     16-31   1
GPU6    SYS     SYS     SYS     SYS     PXB     PXB      X      PIX     16-31   1
GPU7    SYS     SYS     SYS     SYS     PXB     PXB     PIX      X      16-31   1

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
)";

constexpr GpuLink kSelf{.kind = LinkKind::kSelf};
constexpr GpuLink kNv18{.kind = LinkKind::kNvLink, .nvlinks = 18};
constexpr GpuLink kPix{.kind = LinkKind::kPix};
constexpr GpuLink kPxb{.kind = LinkKind::kPxb};
constexpr GpuLink kNode{.kind = LinkKind::kNode};
constexpr GpuLink kSys{.kind = LinkKind::kSys};

GpuTopology MustParse(std::string_view text) {
  absl::StatusOr<GpuTopology> topology = ParseGpuTopology(text);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return topology.ok() ? *topology : GpuTopology();
}

TEST(GpuTopologyParseTest, DgxH100IsNv18AllToAllWithTwoNumaHalves) {
  const GpuTopology topology = MustParse(kDgxH100);
  ASSERT_EQ(topology.gpu_count(), 8);  // the 10 NIC rows/columns are dropped
  for (int a = 0; a < 8; ++a) {
    EXPECT_EQ(topology.Numa(a), a < 4 ? 0 : 1) << "GPU" << a;
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(topology.Link(a, b), a == b ? kSelf : kNv18)
          << "GPU" << a << "/GPU" << b;
    }
  }
  EXPECT_EQ(topology.Summary(),
            "8 GPUs, NVLink all-to-all (NV18), 2 NUMA nodes");
}

TEST(GpuTopologyParseTest, DgxH100MatchesTheProductDefault) {
  EXPECT_EQ(MustParse(kDgxH100),
            GpuTopology::DefaultFor("NVIDIA-H100-80GB-HBM3", 8));
}

TEST(GpuTopologyParseTest, Savio4PcieMatrixKeepsEveryCell) {
  const GpuTopology topology = MustParse(kSavio4);
  ASSERT_EQ(topology.gpu_count(), 8);
  struct Case {
    int a, b;
    GpuLink want;
  };
  for (const Case& c : std::vector<Case>{{0, 0, kSelf},
                                         {0, 1, kPxb},
                                         {2, 3, kPix},
                                         {3, 2, kPix},
                                         {1, 3, kPxb},
                                         {0, 4, kSys},
                                         {7, 3, kSys},
                                         {6, 7, kPix},
                                         {4, 5, kPxb}}) {
    EXPECT_EQ(topology.Link(c.a, c.b), c.want) << c.a << "/" << c.b;
  }
  EXPECT_EQ(topology.Numa(3), 0);
  EXPECT_EQ(topology.Numa(4), 1);
  EXPECT_EQ(topology.Summary(), "8 GPUs, PCIe (PIX/PXB/SYS), 2 NUMA nodes");
}

TEST(GpuTopologyParseTest, NumaNotApplicableIsUnknown) {
  const GpuTopology topology = MustParse(
      "\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\n"
      "GPU0\t X \tPHB\t0-7\tN/A\n"
      "GPU1\tPHB\t X \t0-7\tN/A\n");
  EXPECT_EQ(topology.Link(0, 1), GpuLink{.kind = LinkKind::kPhb});
  EXPECT_EQ(topology.Numa(0), -1);
  EXPECT_EQ(topology.Summary(), "2 GPUs, PCIe (PHB), NUMA unknown");
}

TEST(GpuTopologyParseTest, CompactLinksFormReadsMatrixAndNuma) {
  const GpuTopology topology = MustParse(R"({
    "numa": [0, 0, 1],
    "links": [["X",    "NV4", "SYS"],
              ["NV4",  "X",   "SYS"],
              ["SYS",  "SYS", "X"]]
  })");
  const GpuTopology want =
      GpuTopology::FromMatrix({{kSelf, {LinkKind::kNvLink, 4}, kSys},
                               {{LinkKind::kNvLink, 4}, kSelf, kSys},
                               {kSys, kSys, kSelf}},
                              {0, 0, 1});
  EXPECT_EQ(topology, want);
  EXPECT_EQ(topology.Summary(),
            "3 GPUs, NVLink partial (islands 2+1, NV4), PCIe (SYS), 2 NUMA "
            "nodes");
}

TEST(GpuTopologyParseTest, CompactShorthandEqualsTheDgxH100Default) {
  EXPECT_EQ(MustParse(R"({"gpus":8,"all":"NV18","numa":[0,0,0,0,1,1,1,1]})"),
            GpuTopology::DefaultFor("NVIDIA-H100-80GB-HBM3", 8));
}

TEST(GpuTopologyParseTest, CompactShorthandTakesAsManyGpusAsANodeMayHave) {
  const GpuTopology topology = MustParse(
      absl::StrCat(R"({"gpus": )", kMaxGpusPerNode, R"(, "all": "NV4"})"));
  EXPECT_EQ(topology.gpu_count(), kMaxGpusPerNode);
  EXPECT_EQ(topology.Link(kMaxGpusPerNode - 1, 0),
            (GpuLink{.kind = LinkKind::kNvLink, .nvlinks = 4}));
}

TEST(GpuTopologyParseTest, CompactShorthandWithoutNumaLeavesItUnknown) {
  const GpuTopology topology = MustParse(R"({"all": "PIX", "gpus": 2})");
  EXPECT_EQ(topology.Link(1, 0), kPix);
  EXPECT_EQ(topology.Numa(1), -1);
}

struct ErrorCase {
  std::string name;
  std::string input;
  std::string want;  // the exact message
  // gtest prints this instead of the bytes of the struct.
  friend void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }
};

class GpuTopologyParseErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(GpuTopologyParseErrorTest, NamesLineColumnAndProblem) {
  const absl::StatusOr<GpuTopology> topology =
      ParseGpuTopology(GetParam().input);
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(topology.status().message(), GetParam().want);
}

// Columns are 1-based byte offsets; the header row is line 1.
constexpr std::string_view kHeader4 =
    "        GPU0  GPU1  GPU2  GPU3  CPU Affinity  NUMA Affinity\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, GpuTopologyParseErrorTest,
    ::testing::ValuesIn(std::vector<ErrorCase>{
        {"Empty", "", "line 1, column 1: empty input"},
        {"OnlyWhitespace", " \n\t\n", "line 1, column 1: empty input"},
        {"UnknownLinkToken",
         std::string(kHeader4) +
             "GPU0     X    NV4   PIX   SYS   0-15          0\n"
             "GPU1    NV4    X    NV    SYS   0-15          0\n",
         // "GPU1" 1-4, spaces 5-8, "NV4" 9-11, spaces 12-15, "X" 16, then
         // spaces 17-20 and "NV" at 21.
         "line 3, column 21: unknown link \"NV\" (expected X, NV<n>, PIX, "
         "PXB, PHB, NODE or SYS)"},
        {"AsymmetricMatrix",
         "        GPU0  GPU1\n"
         "GPU0     X    PXB\n"
         "GPU1    PIX    X\n",
         "line 3, column 9: asymmetric matrix: GPU1/GPU0 is PIX but "
         "GPU0/GPU1 is PXB"},
        {"DiagonalNotX",
         "        GPU0  GPU1\n"
         "GPU0     X    SYS\n"
         "GPU1    SYS   SYS\n",
         "line 3, column 15: diagonal cell GPU1/GPU1 must be X, found SYS"},
        {"XOffTheDiagonal",
         "        GPU0  GPU1\n"
         "GPU0     X     X\n"
         "GPU1     X     X\n",
         "line 2, column 16: X is only allowed on the diagonal, found at "
         "GPU0/GPU1"},
        {"RaggedRowMissingCell",
         "        GPU0  GPU1  GPU2  CPU Affinity  NUMA Affinity\n"
         "GPU0     X    SYS   SYS   0-15          0\n"
         "GPU1    SYS    X    0-15  0\n",
         // The first affinity value sits where GPU2's cell should be.
         "line 3, column 21: row GPU1 has 2 link cells, expected 3 (one per "
         "device column of the header)"},
        {"RaggedRowExtraCell",
         "        GPU0  GPU1\n"
         "GPU0     X    SYS   SYS\n"
         "GPU1    SYS    X\n",
         "line 2, column 21: row GPU0 has 3 link cells, expected 2 (one per "
         "device column of the header)"},
        {"MissingGpuRow",
         "        GPU0  GPU1\n"
         "GPU0     X    SYS\n",
         "line 1, column 15: no row for GPU1 (row count mismatch: header "
         "names 2 GPUs, found 1 GPU rows)"},
        {"RowOutsideHeader",
         "        GPU0  GPU1\n"
         "GPU0     X    SYS\n"
         "GPU2    SYS    X\n",
         "line 3, column 1: row GPU2 has no column in the header (2 GPUs)"},
        {"HeaderColumnsOutOfOrder", "        GPU1  GPU0\n",
         "line 1, column 9: expected header column GPU0, found \"GPU1\" (GPU "
         "columns come first, in order)"},
        {"UnexpectedRowLabel",
         "        GPU0\n"
         "GPU0     X\n"
         "mlx5_0  PIX\n",
         "line 3, column 1: unexpected row \"mlx5_0\" (expected GPU0..GPU0 or "
         "a device named in the header)"},
        {"JsonMissingComma",
         "{\"links\": [[\"X\", \"NV18\"],\n"
         "           [\"NV18\" \"X\"]]}",
         // The syntax checker names the last byte of the offending token.
         "line 2, column 22: malformed JSON: syntax error while parsing array "
         "- unexpected string literal; expected ']'"},
        {"JsonUnknownLink", "{\"gpus\": 4,\n \"all\": \"NVLINK\"}",
         "line 2, column 9: unknown link \"NVLINK\" (expected X, NV<n>, PIX, "
         "PXB, PHB, NODE or SYS)"},
        {"JsonNonSquare", R"({"links": [["X", "SYS"], ["SYS"]]})",
         "line 1, column 26: links row 1 has 1 cells, expected 2 (the matrix "
         "must be square)"},
        {"JsonAsymmetric", R"({"links": [["X", "PIX"], ["SYS", "X"]]})",
         "line 1, column 27: asymmetric matrix: GPU1/GPU0 is SYS but "
         "GPU0/GPU1 is PIX"},
        {"JsonUnknownKey", R"({"gpus": 2, "all": "SYS", "nuam": [0, 1]})",
         "line 1, column 27: unknown key \"nuam\" (expected links, gpus, all "
         "or numa)"},
        {"JsonNegativeNuma", R"({"gpus": 2, "all": "SYS", "numa": [0, -1]})",
         "line 1, column 39: negative numbers are not allowed"},
        {"JsonNumaLength", R"({"gpus": 2, "all": "SYS", "numa": [0]})",
         "line 1, column 35: numa has 1 entries, expected one per GPU (2)"},
        {"JsonTrailingText", R"({"gpus": 2, "all": "SYS"} x)",
         "line 1, column 27: malformed JSON: syntax error while parsing value "
         "- invalid literal"},
        {"JsonUnterminated", R"({"gpus": 2,)",
         "line 1, column 12: malformed JSON: syntax error while parsing object "
         "key - unexpected end of input; expected string literal"},
        // Found by topology fuzzing: 4096 GPUs took seconds under ASan.
        {"JsonTooManyGpus", R"({"gpus": 1025, "all": "NV18"})",
         "line 1, column 10: gpus must be between 1 and 1024, found 1025"},
    }),
    [](const ::testing::TestParamInfo<ErrorCase>& info) {
      return info.param.name;
    });

struct DefaultCase {
  std::string product;
  int gpus;
  std::string summary;
  GpuLink link01;  // GPU0/GPU1, or (gpus == 1) GPU0/GPU0
  // gtest prints this instead of the bytes of the struct.
  friend void PrintTo(const DefaultCase& c, std::ostream* os) {
    *os << c.product;
  }
};

class GpuTopologyDefaultTest : public ::testing::TestWithParam<DefaultCase> {};

TEST_P(GpuTopologyDefaultTest, FollowsTheProductName) {
  const DefaultCase& c = GetParam();
  const GpuTopology topology = GpuTopology::DefaultFor(c.product, c.gpus);
  EXPECT_EQ(topology.gpu_count(), c.gpus);
  EXPECT_EQ(topology.Summary(), c.summary);
  EXPECT_EQ(topology.Link(0, c.gpus == 1 ? 0 : 1), c.link01);
}

INSTANTIATE_TEST_SUITE_P(
    Products, GpuTopologyDefaultTest,
    ::testing::ValuesIn(std::vector<DefaultCase>{
        {"NVIDIA-H100-80GB-HBM3", 8,
         "8 GPUs, NVLink all-to-all (NV18), 2 NUMA nodes", kNv18},
        {"NVIDIA-H200", 8, "8 GPUs, NVLink all-to-all (NV18), 2 NUMA nodes",
         kNv18},
        {"NVIDIA-A100-SXM4-80GB",
         8,
         "8 GPUs, NVLink all-to-all (NV12), 2 NUMA nodes",
         {LinkKind::kNvLink, 12}},
        {"nvidia-b200",
         8,
         "8 GPUs, NVLink all-to-all (NV12), 2 NUMA nodes",
         {LinkKind::kNvLink, 12}},
        {"NVIDIA-DGX-Something",
         4,
         "4 GPUs, NVLink all-to-all (NV12), 2 NUMA nodes",
         {LinkKind::kNvLink, 12}},
        {"NVIDIA-L40S", 8, "8 GPUs, PCIe (NODE/SYS), 2 NUMA nodes", kNode},
        {"Tesla-T4", 4, "4 GPUs, PCIe (NODE/SYS), 2 NUMA nodes", kNode},
        {"NVIDIA-H100-PCIe", 2, "2 GPUs, PCIe (SYS), 2 NUMA nodes", kSys},
        {"NVIDIA-H200-PCIE", 4, "4 GPUs, PCIe (NODE/SYS), 2 NUMA nodes", kNode},
        {"NVIDIA-L4", 1, "1 GPU, 1 NUMA node", kSelf},
    }),
    [](const ::testing::TestParamInfo<DefaultCase>& info) {
      return std::to_string(info.index);
    });

TEST(GpuTopologyDefaultHalvesTest, SplitsNumaInHalves) {
  const GpuTopology topology = GpuTopology::DefaultFor("NVIDIA-L4", 4);
  EXPECT_EQ(topology.Numa(1), 0);
  EXPECT_EQ(topology.Numa(2), 1);
  EXPECT_EQ(topology.Link(1, 2), kSys);  // across the halves
}

TEST(GpuTopologyDefaultHalvesTest, ZeroGpusIsEmpty) {
  EXPECT_EQ(GpuTopology::DefaultFor("NVIDIA-L4", 0).Summary(), "0 GPUs");
}

struct PairCase {
  GpuLink link;
  int numa_a, numa_b;
  int want;
};

class GpuTopologyPairScoreTest : public ::testing::TestWithParam<PairCase> {};

TEST_P(GpuTopologyPairScoreTest, UsesGoGpuAllocatorWeights) {
  const PairCase& c = GetParam();
  const GpuTopology topology = GpuTopology::FromMatrix(
      {{kSelf, c.link}, {c.link, kSelf}}, {c.numa_a, c.numa_b});
  EXPECT_EQ(topology.PairScore(0, 1), c.want);
  EXPECT_EQ(topology.PairScore(1, 0), c.want);
  EXPECT_EQ(topology.PairScore(0, 0), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Weights, GpuTopologyPairScoreTest,
    ::testing::ValuesIn(std::vector<PairCase>{
        {kNv18, 0, 0, 1820},                    // 18 * 100 + same NUMA 20
        {kNv18, 0, 1, 1810},                    // 18 * 100 + cross NUMA 10
        {{LinkKind::kNvLink, 1}, -1, -1, 110},  // unknown NUMA: not "same"
        {kPix, 0, 0, 50},
        {kPxb, 0, 0, 40},
        {{LinkKind::kPhb}, 0, 0, 30},
        {kNode, 0, 0, 20},
        {kSys, 0, 1, 10},
    }));

TEST(GpuTopologyTest, SetScoreSumsUnorderedPairs) {
  const GpuTopology topology = MustParse(kSavio4);
  const std::vector<int> gpus = {1, 2, 3};
  EXPECT_EQ(topology.SetScore(gpus), 130);  // PXB 40 + PXB 40 + PIX 50
  EXPECT_EQ(topology.SetScore(std::vector<int>{5}), 0);
}

TEST(GpuTopologyTest, NvLinkIslandsAreConnectedComponents) {
  // NV links 0-2, 2-4 and 1-3; GPU5 has none.
  const GpuLink nv{LinkKind::kNvLink, 2};
  std::vector<std::vector<GpuLink>> links(6, std::vector<GpuLink>(6, kSys));
  for (int i = 0; i < 6; ++i) links[i][i] = kSelf;
  for (auto [a, b] : std::vector<std::pair<int, int>>{{0, 2}, {2, 4}, {1, 3}}) {
    links[a][b] = links[b][a] = nv;
  }
  const GpuTopology topology = GpuTopology::FromMatrix(links, {});
  EXPECT_EQ(topology.NvLinkIslands(),
            (std::vector<std::vector<int>>{{0, 2, 4}, {1, 3}, {5}}));
  EXPECT_EQ(topology.Summary(),
            "6 GPUs, NVLink partial (islands 3+2+1, NV2), PCIe (SYS), NUMA "
            "unknown");
}

TEST(GpuTopologyTest, FromMatrixPadsShortRowsAndNuma) {
  const GpuTopology topology =
      GpuTopology::FromMatrix({{kSelf}, {kPix, kSelf}}, {3});
  EXPECT_EQ(topology.Link(0, 1), kSys);  // padded
  EXPECT_EQ(topology.Numa(1), -1);       // padded
  EXPECT_EQ(topology.Link(0, 9), kSys);  // out of range
}

TEST(GpuTopologyTest, LinkNamesRoundTrip) {
  for (std::string_view name :
       {"X", "NV1", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS"}) {
    const std::optional<GpuLink> link = ParseLinkName(name);
    ASSERT_TRUE(link.has_value()) << name;
    EXPECT_EQ(LinkName(*link), name);
  }
  for (std::string_view bad : {"NV", "NV0", "NV100", "nv4", "SOC", ""}) {
    EXPECT_FALSE(ParseLinkName(bad).has_value()) << bad;
  }
}

}  // namespace
}  // namespace gpusched
