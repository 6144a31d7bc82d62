// The bounded top-k every ranked search keeps (BM25, the dense and the sparse vector scans): a
// min-heap of at most k (score, index) pairs under one order -- higher score first, then lower
// index -- so ties break the same way in every search.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cw {

struct ScoredIndex {
  double score;
  std::int32_t index;
};

// a ranks before b: higher score, then lower index.
inline bool ranks_before(const ScoredIndex& a, const ScoredIndex& b) {
  return a.score > b.score || (a.score == b.score && a.index < b.index);
}

class TopK {
 public:
  explicit TopK(std::size_t k) : k_(k) { heap_.reserve(k + 1); }

  bool full() const { return heap_.size() >= k_; }
  // The score a candidate must beat once full (the k-th best so far).
  double worst() const { return heap_.front().score; }
  // Whether `h` would be kept (not full, or it ranks before the current k-th).
  bool admits(const ScoredIndex& h) const { return !full() || ranks_before(h, heap_.front()); }

  void offer(const ScoredIndex& h) {
    if (heap_.size() < k_) {
      heap_.push_back(h);
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    } else if (k_ > 0 && ranks_before(h, heap_.front())) {
      std::pop_heap(heap_.begin(), heap_.end(), ranks_before);
      heap_.back() = h;
      std::push_heap(heap_.begin(), heap_.end(), ranks_before);
    }
  }

  // The kept pairs, best first.
  std::vector<ScoredIndex> sorted() && {
    std::sort(heap_.begin(), heap_.end(), ranks_before);
    return std::move(heap_);
  }

 private:
  std::size_t k_;
  std::vector<ScoredIndex> heap_;
};

}  // namespace cw
