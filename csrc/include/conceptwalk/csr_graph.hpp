// Immutable CSR graph of the undirected projection of a typed directed edge list.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "conceptwalk/common.hpp"

namespace cw {

// Large blocks (>= 2 MiB) on Linux: 2 MiB-aligned and advised as transparent huge pages, so
// building a big graph takes hundreds instead of hundreds of thousands of page faults, and random
// reads of its arrays miss the TLB less. Elsewhere, or for small blocks, operator new.
void* alloc_large(std::size_t bytes);
void free_large(void* p, std::size_t bytes) noexcept;
constexpr std::size_t kLargeBlock = std::size_t{1} << 21;

// An allocator whose resize() leaves new elements of trivial types uninitialised (the build
// writes every element itself, so zero-filling hundreds of megabytes first is wasted work),
// with large blocks from alloc_large.
template <class T>
struct NoInitAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kLargeBlock) return static_cast<T*>(alloc_large(bytes));
    return std::allocator<T>::allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    const std::size_t bytes = n * sizeof(T);
    if (bytes >= kLargeBlock) return free_large(p, bytes);
    std::allocator<T>::deallocate(p, n);
  }
  template <class U>
  bool operator==(const NoInitAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const NoInitAllocator<U>&) const noexcept {
    return false;
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using RawVector = std::vector<T, NoInitAllocator<T>>;

// An array a graph either owns (a RawVector, what a build writes) or borrows read-only from
// memory another object keeps alive (a memory-mapped snapshot file: no copy, and processes that
// map the same file share its pages). Writes (resize, non-const access) are for owned arrays only.
template <class T>
class Buffer {
 public:
  Buffer() = default;
  Buffer(const Buffer& o) : own_(o.own_), ptr_(o.keep_ ? o.ptr_ : own_.data()), size_(o.size_), keep_(o.keep_) {}
  Buffer(Buffer&& o) noexcept
      : own_(std::move(o.own_)), ptr_(o.keep_ ? o.ptr_ : own_.data()), size_(o.size_), keep_(std::move(o.keep_)) {
    o.ptr_ = nullptr;
    o.size_ = 0;
  }
  Buffer& operator=(Buffer o) noexcept {
    const bool borrowed = static_cast<bool>(o.keep_);
    own_.swap(o.own_);
    keep_.swap(o.keep_);
    size_ = o.size_;
    ptr_ = borrowed ? o.ptr_ : own_.data();
    return *this;
  }
  void resize(std::size_t n) {
    keep_.reset();
    own_.resize(n);
    ptr_ = own_.data();
    size_ = n;
  }
  void assign(const T* b, const T* e) {
    keep_.reset();
    own_.assign(b, e);
    ptr_ = own_.data();
    size_ = own_.size();
  }
  // Borrow n elements at p; `keep` owns them (its deleter releases them).
  void borrow(const T* p, std::size_t n, std::shared_ptr<const void> keep) {
    RawVector<T>().swap(own_);
    ptr_ = p;
    size_ = n;
    keep_ = std::move(keep);
  }
  void shrink_to_fit() {
    own_.shrink_to_fit();
    ptr_ = own_.data();
  }
  std::size_t capacity() const { return own_.capacity(); }
  std::size_t size() const { return size_; }
  bool borrowed() const { return static_cast<bool>(keep_); }
  const T* data() const { return ptr_; }
  T* data() { return own_.data(); }  // owned arrays only
  const T& operator[](std::size_t i) const { return ptr_[i]; }
  T& operator[](std::size_t i) { return own_[i]; }  // owned arrays only
  const T* begin() const { return ptr_; }
  const T* end() const { return ptr_ + size_; }

 private:
  RawVector<T> own_;
  const T* ptr_ = nullptr;
  std::size_t size_ = 0;
  std::shared_ptr<const void> keep_;
};

// Visibility of nodes for one caller: a byte mask (nonzero = visible) and the visible degree of
// every node (the number of visible neighbours). Both arrays are owned by the caller of the core
// (numpy arrays in the Python layer) and must outlive the computation. mask == nullptr means all
// nodes are visible and the plain degrees apply.
// A caller's visibility of a live graph's delta (live_graph.hpp): the new slots' mask and visible
// degrees, and the visible degrees of the base nodes whose row the delta grew (`over`, ascending:
// the delta's own list). The base's mask and visible degrees stay in Visibility::mask / vdeg.
struct DeltaVisibility {
  node_t base_n = 0;
  const std::uint8_t* slot_mask = nullptr;  // n - base_n
  const std::int32_t* slot_vdeg = nullptr;  // n - base_n
  const node_t* over = nullptr;             // ascending
  const std::int32_t* over_vdeg = nullptr;  // aligned with over
  std::int64_t num_over = 0;

  bool visible(const std::uint8_t* base_mask, node_t u) const {
    return u < base_n ? base_mask[u] != 0 : slot_mask[u - base_n] != 0;
  }
  std::int32_t vdeg(const std::int32_t* base_vdeg, node_t u) const {
    if (u >= base_n) return slot_vdeg[u - base_n];
    const node_t* e = over + num_over;
    const node_t* it = std::lower_bound(over, e, u);
    return (it != e && *it == u) ? over_vdeg[it - over] : base_vdeg[u];
  }
};

struct Visibility {
  const std::uint8_t* mask = nullptr;
  const std::int32_t* vdeg = nullptr;
  // Optional (may be null with a mask): the rows of the visible subgraph, i.e. for every node
  // its visible neighbours in ascending order (empty rows for hidden nodes), so a push reads
  // only visible entries. Built once per caller by CSRGraph::visible_rows.
  const offset_t* vindptr = nullptr;
  const node_t* vindices = nullptr;
  // With a live graph's delta (and a mask): the delta's part of the mask and degrees; vindptr
  // is then null (the push reads full rows and the mask).
  const DeltaVisibility* delta = nullptr;
};

// Per-edge outputs of CSRGraph::patched, each of capacity old.num_edges() + m_add (the result
// has at most that many canonical edges): the source, target and type code each canonical edge
// was given as, and the old canonical edge it is (-1 for an added one).
struct PatchedEdges {
  std::int32_t* src;
  std::int32_t* dst;
  std::int32_t* type;
  std::int32_t* new_to_old;
};

class CSRGraph {
 public:
  // Builds the graph from m directed typed edges over nodes [0, n). Self-loops are dropped from
  // the projection; duplicate (src, dst, type) edges collapse to one canonical edge; both
  // directions of a pair collapse to one undirected neighbour. Canonical edge order is
  // (lo, hi, type, direction) where lo = min(src, dst), direction = 0 when src == lo.
  // input_to_canonical (size m) receives, for every input edge, its canonical edge id or -1 for a
  // self-loop. Runs in O(n + m) (two counting-sort passes). Throws InvalidArgument on bad input.
  static CSRGraph build(node_t n, std::int64_t m, const std::int32_t* src, const std::int32_t* dst,
                        const std::int32_t* etype, std::int64_t* input_to_canonical);

  // Rebuilds a graph from the arrays another build produced (a saved snapshot), copying them
  // after checking every invariant the algorithms rely on (row order, symmetry, pair
  // structure, edge type codes), so arrays from a damaged file are refused, never read out of
  // bounds. O(n + entries). With `keep`, the arrays are borrowed instead (no copy; `keep` must
  // keep them alive and unchanged for the graph's lifetime). Defined in snapshot.cpp. Throws
  // InvalidArgument.
  static CSRGraph from_parts(node_t n, std::int32_t num_types, const offset_t* indptr, std::int64_t num_entries,
                             const node_t* indices, const std::int32_t* pair_base, std::int64_t num_pairs,
                             const std::int32_t* pair_ptr, std::int64_t num_edges,
                             const std::int32_t* edge_typedir, std::shared_ptr<const void> keep = nullptr);

  // The graph a fresh build() gives after a change of the node set and a few edges, computed from
  // `old` in one pass over its pairs (no sort of its edges): `remap` (old.num_nodes() entries)
  // maps each old node to its new index, or -1 when deleted, strictly increasing over the kept
  // nodes (so the canonical order of kept edges does not change); `type_lut` (num_old_types >=
  // old.num_edge_types() entries) maps each old edge type code to the new one, strictly
  // increasing over the codes it does not map to -1 (a kept edge must not have such a type);
  // `drop` (num_drop ascending old canonical edge ids) are removed; the m_add edges
  // add_src/add_dst/add_type (new indices and codes) are added. The result equals build() over
  // the kept edges (as each was given) followed by the added ones. add_to_canonical (m_add)
  // receives the new id of each added edge or -1 for a self-loop, `edges` the result's per-edge
  // columns (see PatchedEdges). An added edge
  // equal to a kept one or to another added one (a duplicate, which build() would collapse and a
  // caller must resolve) throws InvalidArgument, as does any out-of-range or unordered input.
  // num_edge_types() = max(1 + the largest type code of an edge, min_num_types) (build() counts
  // the types of self-loops too, which only the caller knows of).
  // O(n + entries + m_add log m_add).
  static CSRGraph patched(const CSRGraph& old, node_t n, const std::int32_t* remap, std::int32_t num_old_types,
                          const std::int32_t* type_lut, std::int64_t num_drop, const std::int64_t* drop,
                          std::int64_t m_add, const std::int32_t* add_src, const std::int32_t* add_dst,
                          const std::int32_t* add_type, std::int32_t min_num_types, std::int64_t* add_to_canonical,
                          const PatchedEdges& edges);

  node_t num_nodes() const { return n_; }
  std::int64_t num_entries() const { return static_cast<std::int64_t>(indices_.size()); }
  std::int64_t num_pairs() const { return static_cast<std::int64_t>(pair_ptr_.size()) - 1; }
  std::int64_t num_edges() const { return static_cast<std::int64_t>(edge_typedir_.size()); }
  std::int32_t num_edge_types() const { return num_types_; }
  std::int32_t max_degree() const { return max_degree_; }

  std::int32_t degree(node_t u) const { return static_cast<std::int32_t>(indptr_[u + 1] - indptr_[u]); }
  std::int32_t degree(node_t u, const Visibility& vis) const { return vis.mask ? vis.vdeg[u] : degree(u); }
  static bool visible(node_t u, const Visibility& vis) {
    return !vis.mask || (vis.delta ? vis.delta->visible(vis.mask, u) : vis.mask[u] != 0);
  }

  const offset_t* indptr() const { return indptr_.data(); }
  const node_t* indices() const { return indices_.data(); }
  // Pair (undirected neighbour pair, index into pair_ptr) behind adjacency entry e of row u.
  // Pairs are numbered in (lo, hi) order, so the entries of row u above u are pairs
  // pair_base[u] .. pair_base[u + 1] - 1 in order (O(1)); an entry below u is found in the
  // neighbour's row (O(log deg)). Not stored per entry: that would cost 4 bytes per entry.
  std::int32_t pair_of_entry(node_t u, offset_t e) const {
    const node_t v = indices_[e];
    if (v > u) return pair_base_[u] + static_cast<std::int32_t>(e - above_start(u));
    // u > v: u is among the neighbours of v above v, the tail of v's row (sorted ascending)
    const node_t* row = indices_.data();
    const offset_t lo = above_start(v);
    const node_t* at = std::lower_bound(row + lo, row + indptr_[v + 1], u);
    return pair_base_[v] + static_cast<std::int32_t>(at - (row + lo));
  }
  // Pair of adjacent nodes u and v, or -1 when not adjacent. O(log deg).
  std::int32_t pair_of(node_t u, node_t v) const {
    const node_t lo = u < v ? u : v, hi = u < v ? v : u;
    const offset_t e = find_entry(lo, hi);
    return e < 0 ? -1 : pair_base_[lo] + static_cast<std::int32_t>(e - above_start(lo));
  }
  // First pair with lo = v, for v in [0, n]; pair_base()[n] = num_pairs().
  const std::int32_t* pair_base() const { return pair_base_.data(); }
  // The pair of every adjacency entry (size num_entries), computed in O(entries).
  void entry_pairs(std::int32_t* out) const;
  // Per canonical edge (size num_edges each) the source, target and type code it was given as,
  // in one pass over the pairs (O(n + edges), no temporaries).
  void edge_columns(std::int32_t* src, std::int32_t* dst, std::int32_t* type) const;
  const std::int32_t* pair_ptr() const { return pair_ptr_.data(); }
  // Per canonical edge: (type << 1) | direction, direction 0 = lo -> hi, 1 = hi -> lo.
  const std::int32_t* edge_typedir() const { return edge_typedir_.data(); }

  // Adjacency entry index of v in u's row, or -1. O(log deg(u)).
  offset_t find_entry(node_t u, node_t v) const;
  // First entry of row u whose neighbour lies above u.
  offset_t above_start(node_t u) const { return indptr_[u + 1] - (pair_base_[u + 1] - pair_base_[u]); }

  // Fills vdeg (size n) with the number of visible neighbours of each node (0 for hidden nodes).
  void visible_degrees(const std::uint8_t* mask, std::int32_t* vdeg) const;

  // Fills vdeg (size n) as visible_degrees does, and the rows of the visible subgraph:
  // vindptr (size n + 1) and vindices (size vindptr[n]), neighbours in ascending order.
  void visible_rows(const std::uint8_t* mask, std::int32_t* vdeg, std::vector<offset_t>& vindptr,
                    RawVector<node_t>& vindices) const;

  // Bytes held by the core arrays (owned or borrowed).
  std::int64_t memory_bytes() const;
  // True when the arrays are borrowed (mapped from a snapshot file), not owned.
  bool borrowed() const { return indices_.borrowed(); }

 private:
  void finish_rows(const std::uint32_t* pair_begin, const node_t* pair_hi);

  node_t n_ = 0;
  std::int32_t num_types_ = 0;
  std::int32_t max_degree_ = 0;
  Buffer<offset_t> indptr_;
  Buffer<node_t> indices_;
  Buffer<std::int32_t> pair_base_;  // n + 1
  Buffer<std::int32_t> pair_ptr_;
  Buffer<std::int32_t> edge_typedir_;
};

}  // namespace cw
