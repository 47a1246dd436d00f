#ifndef GPUSCHED_SCHEDULER_VERDICT_CACHE_H_
#define GPUSCHED_SCHEDULER_VERDICT_CACHE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/container/node_hash_set.h"
#include "scheduler/fit_verdict.h"
#include "scheduler/node_memo.h"
#include "scheduler/node_state.h"

namespace gpusched {

// Filter verdicts remembered per pod fit signature (FitSignature) and node
// while the node is unchanged (NodeMemo), with their failure reasons
// interned: a shape fails most nodes for a handful of reasons ("needs 8
// nvidia.com/gpu; 0 free" and the like), so entries point at one copy.
// One cache per thread; bounded (reasons count against the bound too).
class VerdictCache {
 public:
  struct Verdict {
    FitVerdict::Code code = FitVerdict::Code::kFits;
    // Empty when it fits. Valid until the next Lookup on this cache.
    std::string_view reason;
  };

 private:
  struct Stored {
    FitVerdict::Code code = FitVerdict::Code::kFits;
    const std::string* reason = nullptr;  // into reasons_
  };

 public:
  // The verdicts of one signature; a handle, valid until the next Lookup.
  class Shape {
   public:
    // The remembered verdict of `node`, or `check()` (a FitVerdict),
    // remembered, when there is none for its current generation.
    template <typename Check>
    Verdict Get(const NodeState& node, Check&& check) {
      const Stored& stored = table_->Get(node, [&] {
        const FitVerdict verdict = check();
        return Stored{verdict.code(), cache_->Intern(verdict.reason())};
      });
      return {stored.code, *stored.reason};
    }
    size_t size() const { return table_->size(); }
    void Prefetch(const NodeState& node) const { table_->Prefetch(node); }

   private:
    friend class VerdictCache;
    Shape(NodeMemo<Stored>::Table* table, VerdictCache* cache)
        : table_(table), cache_(cache) {}
    NodeMemo<Stored>::Table* table_;
    VerdictCache* cache_;
  };

  explicit VerdictCache(size_t max_entries = 200000) : memo_(max_entries) {}

  // The verdicts for `signature`, after forgetting everything if the cache
  // has grown past its bound.
  Shape Lookup(std::string_view signature) {
    NodeMemo<Stored>::Table& table = memo_.Lookup(signature, reasons_.size());
    if (memo_.entries() == 0) reasons_.clear();  // forgotten with the entries
    return Shape(&table, this);
  }
  size_t entries() const { return memo_.entries(); }

 private:
  const std::string* Intern(const std::string& reason) {
    return &*reasons_.insert(reason).first;
  }

  NodeMemo<Stored> memo_;
  absl::node_hash_set<std::string> reasons_;
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_VERDICT_CACHE_H_
