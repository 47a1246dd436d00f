#include "scheduler/gpu_topology.h"

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/base/strings.h"

namespace gpusched {
namespace {

// Highest NV# count we accept; real parts bond at most 18 links per pair.
constexpr int kMaxNvLinks = 99;

// go-gpuallocator weights (besteffort_policy.go / device.go).
constexpr int kScorePerNvLink = 100;
constexpr int kSameNumaScore = 20;   // P2PLinkSameCPU
constexpr int kCrossNumaScore = 10;  // P2PLinkCrossCPU

int PcieScore(LinkKind kind) {
  switch (kind) {
    case LinkKind::kPix:
      return 50;
    case LinkKind::kPxb:
      return 40;
    case LinkKind::kPhb:
      return 30;
    case LinkKind::kNode:
      return 20;
    case LinkKind::kSys:
      return 10;
    case LinkKind::kSelf:
    case LinkKind::kNvLink:
      return 0;
  }
  return 0;
}

bool ContainsAny(std::string_view haystack,
                 std::initializer_list<std::string_view> needles) {
  return std::any_of(needles.begin(), needles.end(), [&](std::string_view n) {
    return haystack.find(n) != std::string_view::npos;
  });
}

// Matched in lower case. "pcie" wins over the NVSwitch markers so that e.g.
// "H200-PCIE" stays a PCIe part.
bool IsNvSwitchProduct(std::string_view lower) {
  if (lower.find("pcie") != std::string_view::npos) return false;
  return ContainsAny(lower, {"sxm", "hgx", "dgx", "h100-80gb-hbm3", "h200",
                             "a100-sxm4", "b200", "gb200"});
}

int DefaultNvLinks(std::string_view lower) {
  return ContainsAny(lower, {"h100", "h200"}) ? 18 : 12;
}

// Builds an all-pairs matrix: `same` within a NUMA half, `across` between.
GpuTopology HalvesTopology(int gpu_count, GpuLink same, GpuLink across) {
  std::vector<int> numa(gpu_count);
  for (int i = 0; i < gpu_count; ++i) numa[i] = (2 * i) / gpu_count;
  std::vector<std::vector<GpuLink>> links(gpu_count,
                                          std::vector<GpuLink>(gpu_count));
  for (int a = 0; a < gpu_count; ++a) {
    for (int b = 0; b < gpu_count; ++b) {
      if (a == b) {
        links[a][b] = GpuLink{.kind = LinkKind::kSelf};
      } else {
        links[a][b] = numa[a] == numa[b] ? same : across;
      }
    }
  }
  return GpuTopology::FromMatrix(std::move(links), std::move(numa));
}

const GpuLink& OutOfRangeLink() {
  static const GpuLink kLink{.kind = LinkKind::kSys};
  return kLink;
}

}  // namespace

std::string LinkName(const GpuLink& link) {
  switch (link.kind) {
    case LinkKind::kSelf:
      return "X";
    case LinkKind::kNvLink:
      return absl::StrCat("NV", link.nvlinks);
    case LinkKind::kPix:
      return "PIX";
    case LinkKind::kPxb:
      return "PXB";
    case LinkKind::kPhb:
      return "PHB";
    case LinkKind::kNode:
      return "NODE";
    case LinkKind::kSys:
      return "SYS";
  }
  return "SYS";
}

std::optional<GpuLink> ParseLinkName(std::string_view text) {
  if (text == "X") return GpuLink{.kind = LinkKind::kSelf};
  if (text == "PIX") return GpuLink{.kind = LinkKind::kPix};
  if (text == "PXB") return GpuLink{.kind = LinkKind::kPxb};
  if (text == "PHB") return GpuLink{.kind = LinkKind::kPhb};
  if (text == "NODE") return GpuLink{.kind = LinkKind::kNode};
  if (text == "SYS") return GpuLink{.kind = LinkKind::kSys};
  if (!text.starts_with("NV")) return std::nullopt;
  const std::optional<int> count =
      gpu_topology_internal::ParseDigits(text.substr(2));
  if (!count.has_value() || *count < 1 || *count > kMaxNvLinks) {
    return std::nullopt;
  }
  return GpuLink{.kind = LinkKind::kNvLink, .nvlinks = *count};
}

GpuTopology GpuTopology::DefaultFor(std::string_view product, int gpu_count) {
  if (gpu_count <= 0) return GpuTopology();
  if (gpu_count == 1) {
    return FromMatrix({{GpuLink{.kind = LinkKind::kSelf}}}, {0});
  }
  std::string lower(product);
  absl::AsciiStrToLower(&lower);
  if (IsNvSwitchProduct(lower)) {
    // NVSwitch: every pair has the same bonded link count, both sockets.
    const GpuLink nvlink{.kind = LinkKind::kNvLink,
                         .nvlinks = DefaultNvLinks(lower)};
    return HalvesTopology(gpu_count, nvlink, nvlink);
  }
  return HalvesTopology(gpu_count, GpuLink{.kind = LinkKind::kNode},
                        GpuLink{.kind = LinkKind::kSys});
}

GpuTopology GpuTopology::FromMatrix(std::vector<std::vector<GpuLink>> links,
                                    std::vector<int> numa) {
  GpuTopology topology;
  const size_t n = links.size();
  for (auto& row : links) row.resize(n, GpuLink{.kind = LinkKind::kSys});
  numa.resize(n, -1);
  topology.links_ = std::move(links);
  topology.numa_ = std::move(numa);
  return topology;
}

const GpuLink& GpuTopology::Link(int a, int b) const {
  const int n = gpu_count();
  if (a < 0 || b < 0 || a >= n || b >= n) return OutOfRangeLink();
  return links_[a][b];
}

int GpuTopology::Numa(int gpu) const {
  if (gpu < 0 || gpu >= gpu_count()) return -1;
  return numa_[gpu];
}

int GpuTopology::PairScore(int a, int b) const {
  if (a == b) return 0;
  const GpuLink& link = Link(a, b);
  if (link.kind != LinkKind::kNvLink) return PcieScore(link.kind);
  const int na = Numa(a);
  const bool same_numa = na >= 0 && na == Numa(b);
  return kScorePerNvLink * link.nvlinks +
         (same_numa ? kSameNumaScore : kCrossNumaScore);
}

int64_t GpuTopology::SetScore(std::span<const int> gpus) const {
  int64_t total = 0;
  for (size_t i = 0; i < gpus.size(); ++i) {
    for (size_t j = i + 1; j < gpus.size(); ++j) {
      total += PairScore(gpus[i], gpus[j]);
    }
  }
  return total;
}

std::vector<std::vector<int>> GpuTopology::NvLinkIslands() const {
  const int n = gpu_count();
  // Flood fill from the lowest unvisited GPU, so islands come out ordered
  // by their first index without a sort over the islands.
  std::vector<int> island_of(n, -1);
  std::vector<std::vector<int>> islands;
  for (int start = 0; start < n; ++start) {
    if (island_of[start] >= 0) continue;
    const int id = static_cast<int>(islands.size());
    std::vector<int> members = {start};
    island_of[start] = id;
    for (size_t next = 0; next < members.size(); ++next) {
      for (int peer = 0; peer < n; ++peer) {
        if (island_of[peer] < 0 &&
            Link(members[next], peer).kind == LinkKind::kNvLink) {
          island_of[peer] = id;
          members.push_back(peer);
        }
      }
    }
    std::sort(members.begin(), members.end());
    islands.push_back(std::move(members));
  }
  return islands;
}

namespace {

// "NV18" or "NV4-NV12" for the range of bonded link counts.
std::string NvRange(int lo, int hi) {
  if (lo == hi) return absl::StrCat("NV", lo);
  return absl::StrCat("NV", lo, "-NV", hi);
}

struct LinkStats {
  int pairs = 0;
  int nv_pairs = 0;
  int nv_min = 0;
  int nv_max = 0;
  std::set<LinkKind> pcie_kinds;  // ordered closest first by the enum
};

LinkStats CollectLinkStats(const GpuTopology& t) {
  LinkStats stats;
  for (int a = 0; a < t.gpu_count(); ++a) {
    for (int b = a + 1; b < t.gpu_count(); ++b) {
      const GpuLink& link = t.Link(a, b);
      ++stats.pairs;
      if (link.kind != LinkKind::kNvLink) {
        stats.pcie_kinds.insert(link.kind);
        continue;
      }
      stats.nv_min = stats.nv_pairs == 0 ? link.nvlinks
                                         : std::min(stats.nv_min, link.nvlinks);
      stats.nv_max = std::max(stats.nv_max, link.nvlinks);
      ++stats.nv_pairs;
    }
  }
  return stats;
}

std::string PcieText(const std::set<LinkKind>& kinds) {
  std::vector<std::string> names;
  for (LinkKind kind : kinds) names.push_back(LinkName(GpuLink{.kind = kind}));
  return absl::StrCat("PCIe (", absl::StrJoin(names, "/"), ")");
}

std::string LinksText(const GpuTopology& t) {
  const LinkStats stats = CollectLinkStats(t);
  const std::string nv = NvRange(stats.nv_min, stats.nv_max);
  if (stats.nv_pairs == 0) return PcieText(stats.pcie_kinds);
  if (stats.nv_pairs == stats.pairs) {
    return absl::StrCat("NVLink all-to-all (", nv, ")");
  }
  std::vector<int> sizes;
  for (const auto& island : t.NvLinkIslands()) sizes.push_back(island.size());
  return absl::StrCat("NVLink partial (islands ", absl::StrJoin(sizes, "+"),
                      ", ", nv, "), ", PcieText(stats.pcie_kinds));
}

std::string NumaText(const GpuTopology& t) {
  std::set<int> nodes;
  for (int g = 0; g < t.gpu_count(); ++g) {
    if (t.Numa(g) >= 0) nodes.insert(t.Numa(g));
  }
  if (nodes.empty()) return "NUMA unknown";
  return absl::StrCat(nodes.size(),
                      nodes.size() == 1 ? " NUMA node" : " NUMA nodes");
}

}  // namespace

std::string GpuTopology::Summary() const {
  const int n = gpu_count();
  std::string text = absl::StrCat(n, n == 1 ? " GPU" : " GPUs");
  if (n == 0) return text;
  if (n > 1) absl::StrAppend(&text, ", ", LinksText(*this));
  absl::StrAppend(&text, ", ", NumaText(*this));
  return text;
}

namespace gpu_topology_internal {

std::optional<int> ParseDigits(std::string_view text) {
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), absl::ascii_isdigit)) {
    return std::nullopt;
  }
  int value = 0;
  for (char c : text) value = value * 10 + (c - '0');
  return value;
}

absl::Status ErrorAt(TextPos pos, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", pos.line, ", column ", pos.column, ": ", Sv(what)));
}

absl::Status UnknownLinkAt(TextPos pos, std::string_view text) {
  return ErrorAt(pos, absl::StrCat("unknown link \"", Sv(text),
                                   "\" (expected X, NV<n>, PIX, PXB, PHB, "
                                   "NODE or SYS)"));
}

// Square shape is the caller's job; this checks the diagonal and symmetry.
// Rows are checked top to bottom, so the first error is the first one a
// reader meets in the text.
absl::Status ValidateLinkMatrix(
    const std::vector<std::vector<GpuLink>>& links,
    const std::vector<std::vector<TextPos>>& where) {
  const int n = static_cast<int>(links.size());
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const GpuLink& link = links[i][j];
      const bool self = link.kind == LinkKind::kSelf;
      if (i == j && !self) {
        return ErrorAt(where[i][j],
                       absl::StrCat("diagonal cell GPU", i, "/GPU", j,
                                    " must be X, found ", LinkName(link)));
      }
      if (i != j && self) {
        return ErrorAt(where[i][j],
                       absl::StrCat("X is only allowed on the diagonal, found "
                                    "at GPU",
                                    i, "/GPU", j));
      }
      if (j < i && link != links[j][i]) {
        return ErrorAt(where[i][j],
                       absl::StrCat("asymmetric matrix: GPU", i, "/GPU", j,
                                    " is ", LinkName(link), " but GPU", j,
                                    "/GPU", i, " is ", LinkName(links[j][i])));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace gpu_topology_internal
}  // namespace gpusched
