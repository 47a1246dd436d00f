#ifndef GPUSCHED_SCHEDULER_DRA_SELECTOR_MEMO_H_
#define GPUSCHED_SCHEDULER_DRA_SELECTOR_MEMO_H_

// Which of one node's published devices a request's alternative can take
// (free, taints tolerated, its selectors matched), kept with those devices
// (DraNodeDevices::memo).
//
// Why: the filter asks the same request of every candidate node, and a
// pod's request with selectors of its own cannot be judged from counts,
// so each node evaluates its CEL on each device. A node's devices are an
// immutable value until its slices or claims change, and the selectors of
// a workload's pods are the same text, so the answer is computed once per
// node and selector set, then read (5,000 nodes: bench/dra_filter_bench).
//
// Not part of the devices' value: two memos are always equal, and a copy
// starts empty, so equality and copies of DraNodeDevices ignore it.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace gpusched {

// kMatches: the alternative can take the device. kNoMatch: held, spent,
// tainted or not selected. kError: free, and a selector failed on it (CEL
// runtime error, as kube-scheduler would fail).
enum class SelectorVerdict : uint8_t { kMatches, kNoMatch, kError };

// By device index. Inline up to 32 devices, so the verdicts share one
// allocation (and cache line) with their shared_ptr's control block: the
// filter reads them once per candidate node.
using SelectorVerdicts = absl::InlinedVector<SelectorVerdict, 32>;

// A memo key: the text, and its hash computed once where the key is built,
// so a lookup compares hashes and reads a stored key's text only on a hash
// match (one cache miss fewer per node).
struct DraMemoKey {
  DraMemoKey() = default;
  explicit DraMemoKey(std::string key_text)
      : text(std::move(key_text)), hash(std::hash<std::string>{}(text)) {}

  std::string text;
  size_t hash = 0;
};

class DraSelectorMemo {
 public:
  // A node sees few distinct keys; past this many the oldest is
  // forgotten, so a stream of one-off selectors cannot grow it.
  static constexpr size_t kMaxSets = 16;

  DraSelectorMemo() = default;
  DraSelectorMemo(const DraSelectorMemo&) {}
  DraSelectorMemo& operator=(const DraSelectorMemo&) { return *this; }
  friend bool operator==(const DraSelectorMemo&, const DraSelectorMemo&) {
    return true;
  }

  // The verdicts for the alternatives named `key` (their selectors and
  // tolerations, as DraAlternativeDemand::match_key spells them), computing
  // them with `compute` the first time. Thread-safe; `compute` runs unlocked,
  // so two callers may both compute a new set (the same answer) and one is
  // kept.
  std::shared_ptr<const SelectorVerdicts> VerdictsFor(
      const DraMemoKey& key,
      const std::function<SelectorVerdicts()>& compute) const;

 private:
  struct Entry {
    DraMemoKey key;
    std::shared_ptr<const SelectorVerdicts> verdicts;
  };
  mutable std::mutex mu_;
  mutable std::vector<Entry> entries_;  // guarded by mu_; newest last
};

}  // namespace gpusched

#endif  // GPUSCHED_SCHEDULER_DRA_SELECTOR_MEMO_H_
