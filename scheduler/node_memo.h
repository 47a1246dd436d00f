#ifndef GPUSCHED_SCHEDULER_NODE_MEMO_H_
#define GPUSCHED_SCHEDULER_NODE_MEMO_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "scheduler/base/strings.h"
#include "scheduler/node_state.h"

namespace gpusched {

// Values computed from one node's state (a filter verdict, a score),
// remembered per key (a pod's FitSignature, say) and node, and valid while
// the node's generation() is unchanged: a bind, a pod removed or completed,
// or a new Node object gives the node a new generation, and the next Get
// recomputes. kube-scheduler asks about the same pod shapes over the same
// nodes again and again, and most nodes do not change between two calls.
//
// Not thread-safe: one memo per thread, so that lookups take no lock.
// Bounded: Lookup forgets everything once more than `max_entries` values
// are remembered.
template <typename Value>
class NodeMemo {
 public:
  // The values of one key.
  class Table {
   public:
    // The remembered value for `node`, or `compute()`, remembered, when
    // there is none for its current generation.
    template <typename Compute>
    const Value& Get(const NodeState& node, Compute&& compute) {
      auto [it, inserted] = by_node_.try_emplace(&node);
      Entry& entry = it->second;
      if (!inserted && entry.generation == node.generation()) {
        return entry.value;
      }
      if (inserted) ++*total_entries_;
      entry = Entry{.generation = node.generation(), .value = compute()};
      return entry.value;
    }
    size_t size() const { return by_node_.size(); }
    // Starts loading what Get(node) will read, so that a caller walking
    // many nodes overlaps their cache misses.
    void Prefetch(const NodeState& node) const { by_node_.prefetch(&node); }

   private:
    friend class NodeMemo;
    struct Entry {
      uint64_t generation = 0;
      Value value{};
    };
    explicit Table(size_t* total_entries) : total_entries_(total_entries) {}

    // Keyed by address; the generation check makes a reused address (a
    // removed node's) harmless, since generations are never reused.
    absl::flat_hash_map<const NodeState*, Entry> by_node_;
    size_t* total_entries_;
  };

  explicit NodeMemo(size_t max_entries) : max_entries_(max_entries) {}

  // The table for `key`, after forgetting everything if more than
  // max_entries - `held_elsewhere` values are remembered (a caller's own
  // storage that grows with the entries counts against the same bound).
  // Earlier tables die then.
  Table& Lookup(std::string_view key, size_t held_elsewhere = 0) {
    if (total_entries_ + held_elsewhere > max_entries_) Clear();
    auto it = tables_.find(key);
    if (it == tables_.end()) {
      it = tables_
               .emplace(std::string(key),
                        std::unique_ptr<Table>(new Table(&total_entries_)))
               .first;
    }
    return *it->second;
  }
  void Clear() {
    tables_.clear();
    total_entries_ = 0;
  }
  size_t entries() const { return total_entries_; }

 private:
  size_t max_entries_;
  size_t total_entries_ = 0;
  StringKeyMap<std::unique_ptr<Table>> tables_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_NODE_MEMO_H_
