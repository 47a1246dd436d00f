#ifndef GPUSCHED_SCHEDULER_GPU_TOPOLOGY_H_
#define GPUSCHED_SCHEDULER_GPU_TOPOLOGY_H_

// Intra-node GPU topology: how each pair of GPUs on one node is connected
// (NVLink or a PCIe path), which NUMA node each GPU hangs off, and the
// go-gpuallocator pair weights used to rank GPU sets.
//
// A node describes itself with the annotation `gpusched.io/gpu-topology`,
// which api/codec reads (gpu_topology_annotation.h: the domain reads no wire
// format); without it, GpuTopology::DefaultFor() guesses from the GPU
// product name.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace gpusched {

// The most GPUs one node is modelled with. Real nodes have at most tens;
// the bound keeps a typo or a hostile annotation ("gpus": 1e9) from
// allocating a huge device list or link matrix (a 1024-GPU matrix is a
// million links, about a second and 40 MB in a sanitizer build).
inline constexpr int kMaxGpusPerNode = 1024;

// How two GPUs are connected, as `nvidia-smi topo -m` names it. The PCIe
// kinds run from the closest (kPix) to the farthest (kSys).
enum class LinkKind { kSelf, kNvLink, kPix, kPxb, kPhb, kNode, kSys };

struct GpuLink {
  LinkKind kind = LinkKind::kSys;
  // For kNvLink: number of bonded links, NV18 -> 18. Zero otherwise.
  int nvlinks = 0;

  friend bool operator==(const GpuLink&, const GpuLink&) = default;
};

// The cell text nvidia-smi prints for `link`: "X", "NV18", "PIX", "PXB",
// "PHB", "NODE" or "SYS".
std::string LinkName(const GpuLink& link);

// Inverse of LinkName(). Exact, upper-case match; NV<n> needs 1 <= n <= 99.
// nullopt for anything else.
std::optional<GpuLink> ParseLinkName(std::string_view text);

// Immutable value: an N x N link matrix plus one NUMA node per GPU.
// Invariant (when built by the annotation reader or DefaultFor): the matrix is
// symmetric, the diagonal is kSelf and nothing else is.
class GpuTopology {
 public:
  // Zero GPUs.
  GpuTopology() = default;

  // The documented default for a node without the annotation:
  //  - gpu_count <= 0: zero GPUs; 1: the GPU alone on NUMA node 0.
  //  - Product names (case-insensitive) containing "SXM", "HGX", "DGX",
  //    "H100-80GB-HBM3", "H200", "A100-SXM4", "B200" or "GB200", and not
  //    "PCIE": NVSwitch all-to-all, NV18 for H100/H200, NV12 otherwise
  //    (A100 and the rest).
  //  - Everything else (L4, T4, L40S, A10, "...-PCIE-..."): PCIe only,
  //    NODE between GPUs of the same NUMA node, SYS across.
  // GPUs are split into two NUMA halves: GPU i is on node (2 * i) / count,
  // so the first half is on NUMA 0 and the second on NUMA 1.
  static GpuTopology DefaultFor(std::string_view product, int gpu_count);

  // Takes the matrix as given; only sizes are made consistent: every row is
  // cut or padded (with SYS) to links.size() cells, and numa is cut or
  // padded (with -1) to links.size() entries.
  static GpuTopology FromMatrix(std::vector<std::vector<GpuLink>> links,
                                std::vector<int> numa);

  int gpu_count() const { return static_cast<int>(links_.size()); }

  // Out-of-range indices yield a SYS link rather than undefined behaviour.
  const GpuLink& Link(int a, int b) const;

  // NUMA node of `gpu`; -1 when unknown or out of range.
  int Numa(int gpu) const;

  // go-gpuallocator pair weight: 100 per NVLink plus a PCIe term (SYS 10,
  // NODE 20, PHB 30, PXB 40, PIX 50). The matrix only says NV# for NVLinked
  // pairs, so their PCIe term comes from NUMA: 20 when both GPUs are on the
  // same known node, 10 otherwise. 0 for a == b.
  int PairScore(int a, int b) const;

  // Sum of PairScore over the unordered pairs of `gpus`.
  int64_t SetScore(std::span<const int> gpus) const;

  // Connected components over NV# links, each sorted ascending, ordered by
  // first index. A GPU without NVLinks is an island of one.
  std::vector<std::vector<int>> NvLinkIslands() const;

  // Short human text for /v1/nodes, e.g.
  // "8 GPUs, NVLink all-to-all (NV18), 2 NUMA nodes" or
  // "4 GPUs, PCIe (PIX/SYS), 2 NUMA nodes".
  std::string Summary() const;

  friend bool operator==(const GpuTopology&, const GpuTopology&) = default;

 private:
  std::vector<std::vector<GpuLink>> links_;
  std::vector<int> numa_;
};

// Shared by the annotation readers (api/codec/gpu_topology_*.cc); not part
// of the public API.
namespace gpu_topology_internal {

struct TextPos {
  int line = 1;
  int column = 1;
};

// "42" -> 42: 1 to 9 ASCII digits, nothing else; nullopt otherwise.
std::optional<int> ParseDigits(std::string_view text);

// InvalidArgument "line L, column C: <what>".
absl::Status ErrorAt(TextPos pos, std::string_view what);

// The unknown-link message, naming the accepted cells.
absl::Status UnknownLinkAt(TextPos pos, std::string_view text);

// Checks a square matrix: X exactly on the diagonal, links[i][j] ==
// links[j][i]. `where[i][j]` is the source position of cell (i, j).
absl::Status ValidateLinkMatrix(const std::vector<std::vector<GpuLink>>& links,
                                const std::vector<std::vector<TextPos>>& where);

}  // namespace gpu_topology_internal
}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_GPU_TOPOLOGY_H_
