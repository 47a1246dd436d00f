#include "scheduler/gpu_set_allocator.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace gpusched {
namespace {

// C(16, 8): the largest search done exhaustively (~1 ms worst case).
constexpr int64_t kExhaustiveLimit = 12870;

// Pair scores among the free GPUs, indexed by position in the sorted free
// list, so the search never touches the topology again.
class PairTable {
 public:
  PairTable(const GpuTopology& topology, std::vector<int> gpus)
      : gpus_(std::move(gpus)),
        n_(static_cast<int>(gpus_.size())),
        scores_(n_ * n_, 0),
        row_sums_(n_, 0) {
    for (int i = 0; i < n_; ++i) {
      for (int j = 0; j < n_; ++j) {
        scores_[i * n_ + j] = topology.PairScore(gpus_[i], gpus_[j]);
        row_sums_[i] += scores_[i * n_ + j];
      }
      total_ += row_sums_[i];
    }
    total_ /= 2;  // each unordered pair was counted from both ends
  }

  int size() const { return n_; }
  int gpu(int i) const { return gpus_[i]; }
  int At(int i, int j) const { return scores_[i * n_ + j]; }
  int64_t RowSum(int i) const { return row_sums_[i]; }
  int64_t Total() const { return total_; }

 private:
  std::vector<int> gpus_;
  int n_;
  std::vector<int> scores_;
  std::vector<int64_t> row_sums_;
  int64_t total_ = 0;
};

// A candidate set as positions into the PairTable, ascending.
struct Pick {
  std::vector<int> positions;
  int64_t score = -1;
  int64_t leftover = -1;
};

// C(n, k), saturating just above `cap` so it cannot overflow.
int64_t BinomialCapped(int n, int k, int64_t cap) {
  k = std::min(k, n - k);
  int64_t result = 1;
  for (int i = 1; i <= k; ++i) {
    result = result * (n - k + i) / i;  // exact: C(n-k+i, i) is an integer
    if (result > cap) return cap + 1;
  }
  return result;
}

// Exhaustive search over combinations in lexicographic order. Only a
// strictly better (score, leftover) replaces the best, so among full ties
// the first, i.e. lexicographically smallest, combination wins.
class ExhaustiveSearch {
 public:
  ExhaustiveSearch(const PairTable& table, int count)
      : table_(table), count_(count) {}

  Pick Run() {
    Visit(0, 0, 0);
    return best_;
  }

 private:
  // `score` is the set score of current_; `row_sum` the sum of its rows.
  void Visit(int next, int64_t score, int64_t row_sum) {
    const int chosen = static_cast<int>(current_.size());
    if (chosen == count_) {
      Offer(score, row_sum);
      return;
    }
    for (int i = next; i <= table_.size() - (count_ - chosen); ++i) {
      int64_t gain = 0;
      for (int c : current_) gain += table_.At(c, i);
      current_.push_back(i);
      Visit(i + 1, score + gain, row_sum + table_.RowSum(i));
      current_.pop_back();
    }
  }

  void Offer(int64_t score, int64_t row_sum) {
    // Pairs among the leftover = all pairs - pairs touching the set:
    // Total - (row_sum - 2 * score) - score.
    const int64_t leftover = table_.Total() - row_sum + score;
    if (score > best_.score ||
        (score == best_.score && leftover > best_.leftover)) {
      best_ = Pick{.positions = current_, .score = score, .leftover = leftover};
    }
  }

  const PairTable& table_;
  const int count_;
  std::vector<int> current_;
  Pick best_;
};

// Greedy growth from one seed: add the position with the highest score sum
// to the chosen set; ties go to the lowest position.
Pick GrowFrom(const PairTable& table, int seed, int count) {
  const int n = table.size();
  std::vector<int64_t> gain(n, 0);  // score sum of each position to the set
  std::vector<bool> taken(n, false);
  Pick pick{.positions = {}, .score = 0};
  for (int add = seed; static_cast<int>(pick.positions.size()) < count;) {
    taken[add] = true;
    pick.positions.push_back(add);
    pick.score += gain[add];
    int next = -1;
    for (int i = 0; i < n; ++i) {
      gain[i] += table.At(add, i);
      if (!taken[i] && (next < 0 || gain[i] > gain[next])) next = i;
    }
    add = next;
  }
  std::sort(pick.positions.begin(), pick.positions.end());
  return pick;
}

// Every free GPU as seed; the best score wins, ties the smallest list.
Pick GreedySearch(const PairTable& table, int count) {
  Pick best;
  for (int seed = 0; seed < table.size(); ++seed) {
    Pick pick = GrowFrom(table, seed, count);
    if (pick.score > best.score ||
        (pick.score == best.score && pick.positions < best.positions)) {
      best = std::move(pick);
    }
  }
  return best;
}

std::vector<int> SortedUnique(std::span<const int> gpus) {
  std::vector<int> out(gpus.begin(), gpus.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The shared search behind ChooseGpuSet and BestSetScore.
std::optional<std::vector<int>> Choose(const GpuTopology& topology,
                                       std::span<const int> free_gpus,
                                       int count, int64_t* score) {
  std::vector<int> free = SortedUnique(free_gpus);
  const int n = static_cast<int>(free.size());
  if (count <= 0 || count > n) return std::nullopt;
  const PairTable table(topology, std::move(free));
  const Pick pick =
      BinomialCapped(n, count, kExhaustiveLimit) <= kExhaustiveLimit
          ? ExhaustiveSearch(table, count).Run()
          : GreedySearch(table, count);
  std::vector<int> gpus;
  for (int p : pick.positions) gpus.push_back(table.gpu(p));
  *score = pick.score;
  return gpus;
}

}  // namespace

std::optional<std::vector<int>> ChooseGpuSet(const GpuTopology& topology,
                                             std::span<const int> free_gpus,
                                             int count) {
  int64_t score = 0;
  return Choose(topology, free_gpus, count, &score);
}

std::optional<int64_t> BestSetScore(const GpuTopology& topology,
                                    std::span<const int> free_gpus, int count) {
  int64_t score = 0;
  if (!Choose(topology, free_gpus, count, &score).has_value()) {
    return std::nullopt;
  }
  return score;
}

int MaxPairScore(const GpuTopology& topology) {
  int best = 0;
  for (int a = 0; a < topology.gpu_count(); ++a) {
    for (int b = a + 1; b < topology.gpu_count(); ++b) {
      best = std::max(best, topology.PairScore(a, b));
    }
  }
  return best;
}

int NormalizedSetScore(const GpuTopology& topology, std::span<const int> gpus) {
  const int64_t size = static_cast<int64_t>(gpus.size());
  const int64_t max_pair = MaxPairScore(topology);
  if (size < 2 || max_pair <= 0) return 100;
  const int64_t pairs = size * (size - 1) / 2;
  const int64_t normalized = topology.SetScore(gpus) * 100 / (pairs * max_pair);
  return static_cast<int>(std::clamp<int64_t>(normalized, 0, 100));
}

}  // namespace gpusched
