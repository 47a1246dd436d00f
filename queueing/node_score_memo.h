#ifndef GPUSCHED_QUEUEING_NODE_SCORE_MEMO_H_
#define GPUSCHED_QUEUEING_NODE_SCORE_MEMO_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "scheduler/gpu_inventory.h"
#include "scheduler/node_state.h"

namespace gpusched {

// What placing one pod shape on one node came to: the fit verdict, the
// devices and the score. Valid while the node's generation is unchanged
// (NodeState::generation() changes with every pod added or removed and
// every new Node object, and is never reused).
struct NodeScore {
  uint64_t generation = 0;
  // The cheap necessary check failed (see the gang placer's BestNode).
  bool quick_fail = false;
  bool fits = false;
  int64_t score = 0;
  GpuAssignment assignment;
  std::string reason;  // why not, when it does not fit
};

// Node scores per pod shape (MemberSignature) for a caller that places
// many pods of few shapes against a cluster that changes a few nodes at a
// time: the queueing engine searches the same 2,000 nodes for every
// admission and preemption trial, and most nodes did not change since.
// Scores must come from one set of weights whose task-shape model does
// not change; the owner clears the memo when it does.
class NodeScoreMemo {
 public:
  // The scores of one pod shape, by node.
  class Shape {
   public:
    // The remembered score on `node`, or nullptr when there is none for
    // the node's current generation.
    const NodeScore* Find(const NodeState& node) const;
    const NodeScore& Put(const NodeState& node, NodeScore score);

   private:
    friend class NodeScoreMemo;
    explicit Shape(NodeScoreMemo* memo) : memo_(memo) {}
    NodeScoreMemo* memo_;
    absl::flat_hash_map<const NodeState*, NodeScore> by_node_;
  };

  // The scores of `shape` (a MemberSignature); valid until Clear().
  Shape* ForShape(const std::string& shape);
  void Clear();
  size_t size() const { return entries_; }

 private:
  // Bounds memory when pod shapes never repeat (unique annotations): the
  // oldest shapes are not tracked, everything goes at once.
  static constexpr size_t kMaxEntries = 1 << 20;

  absl::flat_hash_map<std::string, std::unique_ptr<Shape>> by_shape_;
  size_t entries_ = 0;
};

}  // namespace gpusched

#endif  // GPUSCHED_QUEUEING_NODE_SCORE_MEMO_H_
