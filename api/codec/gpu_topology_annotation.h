#ifndef GPUSCHED_API_CODEC_GPU_TOPOLOGY_ANNOTATION_H_
#define GPUSCHED_API_CODEC_GPU_TOPOLOGY_ANNOTATION_H_

// The node annotation `gpusched.io/gpu-topology` into the domain's
// GpuTopology (scheduler/gpu_topology.h). The compact JSON form is read with
// simdjson like the codec's other decoders (gpu_topology_json.cc); the
// `nvidia-smi topo -m` text form by gpu_topology_text.cc.

#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/gpu_topology.h"
#include "scheduler/k8s_objects.h"

namespace gpusched {

// Parses the node annotation `gpusched.io/gpu-topology`. The first
// non-blank character picks the form: '{' means compact JSON, anything else
// means `nvidia-smi topo -m` text.
//
// (1) nvidia-smi text, as `nvidia-smi topo -m` prints it:
//   - a header row of column names: GPU0..GPUn-1 in order, optionally NIC
//     columns (NIC0.., mlx5_0..), then the labels "CPU Affinity",
//     "NUMA Affinity", "GPU NUMA ID" (each optional; "CPU"/"NUMA" alone are
//     accepted too);
//   - one row per GPU (in any order) with one cell per device column: X,
//     NV<n>, PIX, PXB, PHB, NODE or SYS; then the affinity values, e.g.
//     "0-51,104-155", "0" or "N/A". Only NUMA Affinity is used: a single
//     number is the node, anything else ("N/A", "0-1") means unknown;
//   - rows for other devices (NICs) are ignored, and so is everything from
//     the line starting "Legend:" on. Cells are separated by tabs or spaces;
//     terminal escape sequences and '\r' are ignored.
//
// (2) compact JSON, an object with these keys:
//     {"links": [["X","NV18",...], ...], "numa": [0,0,1,1]}
//   or the all-to-all shorthand
//     {"gpus": 8, "all": "NV18", "numa": [0,0,0,0,1,1,1,1]}
//   "links" is a square matrix of link names; "gpus" (1..kMaxGpusPerNode)
//   with "all" (any link name but X) gives every pair the same link. "numa" is
//   optional (unknown when absent) and has one entry per GPU. Numbers must
//   be non-negative integers. Unknown or repeated keys are errors.
//
// Errors are InvalidArgument with "line L, column C: what" (1-based; the
// column counts bytes, a tab is one): empty input, unknown link, ragged or
// non-square rows, GPU row count mismatch, a diagonal cell that is not X,
// an X off the diagonal, an asymmetric matrix, malformed JSON (with the
// line and column of the first byte that breaks the syntax).
absl::StatusOr<GpuTopology> ParseGpuTopology(std::string_view annotation);

// The two forms separately; ParseGpuTopology dispatches to them.
absl::StatusOr<GpuTopology> ParseNvidiaSmiTopology(std::string_view text);
absl::StatusOr<GpuTopology> ParseCompactGpuTopology(std::string_view json);

// Sets node.gpu_topology from the node's annotation: the topology or why it
// was rejected; unset when the node has no such annotation. Every decoder
// of a Node calls it, so the domain never reads the annotation's text.
void ReadGpuTopologyAnnotation(Node& node);

}  // namespace gpusched

#endif  // GPUSCHED_API_CODEC_GPU_TOPOLOGY_ANNOTATION_H_
