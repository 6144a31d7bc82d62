// A live store's graph: an immutable base CSRGraph plus a small delta (issue 31, the design in
// docs/live_store.md). New nodes take the slots after the base's (never renumbered); every node
// has an order key whose order is the id order (a base node u: (u << 32) | 0xFFFFFFFF; a new node
// in gap g, i.e. with g base ids below its id, and of rank s among the new ids: (g << 32) | s), and
// every row is kept in key order, so a traversal visits nodes, breaks ties and sums in exactly the
// order a fresh build of the same graph (index = rank of the id) does. Pure C++17, no Python.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "conceptwalk/csr_graph.hpp"

namespace cw {

// The order key of base node u (and of every node of a graph without a delta).
inline std::uint64_t base_order_key(node_t u) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(u)) << 32) | 0xFFFFFFFFull;
}

// Where the rows of a chain of deltas live: chunks that never move (a delta keeps raw pointers
// into them), appended to by each delta made from the last, shared by all of them.
class RowArena {
 public:
  // Room for len entries (a row), valid as long as the arena lives. Thread-safe.
  node_t* alloc(std::size_t len);
  std::int64_t entries() const { return entries_; }

 private:
  static constexpr std::size_t kChunk = std::size_t{1} << 16;
  std::mutex m_;
  std::vector<std::unique_ptr<node_t[]>> chunks_;
  std::size_t used_ = 0, cap_ = 0;
  std::int64_t entries_ = 0;
};

// A row of a delta: its neighbours in key order, in a RowArena.
struct DeltaRow {
  const node_t* p = nullptr;
  std::int32_t len = 0;
};

// The rows that differ from the base's: those of the new slots [base_n, n) and of the base nodes
// whose neighbour set grew (`over`, ascending), each in key order; immutable once made. A delta
// made from another shares its arena and copies only its row index (O(delta rows)): the rows a
// write did not touch are not copied.
struct GraphDelta {
  static constexpr int kFilterBits = 1 << 16;  // a base node u may be in `over` only if bit u % 2^16 is set

  node_t base_n = 0;
  node_t n = 0;
  std::vector<std::uint64_t> keys;  // n - base_n: the new slots' order keys
  std::vector<node_t> by_key;       // the new slots (as offsets from base_n) in key order
  std::vector<node_t> over;         // base nodes with a row here, ascending
  std::vector<DeltaRow> rows;       // the new slots' rows (slot order), then over's
  std::array<std::uint64_t, kFilterBits / 64> filter{};
  std::int32_t max_degree = 0;  // the largest degree of any node of base plus delta
  std::int64_t entries = 0;     // entries of the rows above
  std::shared_ptr<RowArena> arena;

  // The delta row of node u (in [0, n)), or -1: u's row is the base's.
  std::int64_t row_of(node_t u) const {
    if (u >= base_n) return static_cast<std::int64_t>(u) - base_n;
    const std::uint32_t bit = static_cast<std::uint32_t>(u) & (kFilterBits - 1);
    if (!((filter[bit >> 6] >> (bit & 63)) & 1u)) return -1;
    const auto it = std::lower_bound(over.begin(), over.end(), u);
    if (it == over.end() || *it != u) return -1;
    return static_cast<std::int64_t>(n - base_n) + (it - over.begin());
  }
  std::int64_t num_entries() const { return entries; }
};

// What the traversals read: a CSRGraph's own rows, or a base graph's with a GraphDelta over them.
// Converts implicitly from a CSRGraph (no delta), so an algorithm taking a GraphRef serves both.
class GraphRef {
 public:
  GraphRef(const CSRGraph& g) : g_(&g) {}  // NOLINT(google-explicit-constructor)
  GraphRef(const CSRGraph& base, const GraphDelta* delta) : g_(&base), d_(delta) {}

  const CSRGraph& base() const { return *g_; }
  const GraphDelta* delta() const { return d_; }
  node_t num_nodes() const { return d_ ? d_->n : g_->num_nodes(); }
  std::int32_t max_degree() const { return d_ ? d_->max_degree : g_->max_degree(); }

  // Row u's neighbours [b, e), in key order.
  void row(node_t u, const node_t*& b, const node_t*& e) const {
    if (d_) {
      const std::int64_t r = d_->row_of(u);
      if (r >= 0) {
        const DeltaRow& dr = d_->rows[static_cast<std::size_t>(r)];
        b = dr.p;
        e = dr.p + dr.len;
        return;
      }
    }
    const offset_t* ip = g_->indptr();
    b = g_->indices() + ip[u];
    e = g_->indices() + ip[u + 1];
  }
  std::int32_t degree(node_t u) const {
    if (d_) {
      const std::int64_t r = d_->row_of(u);
      if (r >= 0) return d_->rows[static_cast<std::size_t>(r)].len;
    }
    return g_->degree(u);
  }
  std::int32_t degree(node_t u, const Visibility& vis) const {
    if (!vis.mask) return degree(u);
    return vis.delta ? vis.delta->vdeg(vis.vdeg, u) : vis.vdeg[u];
  }
  std::uint64_t order(node_t u) const {
    return (d_ && u >= d_->base_n) ? d_->keys[static_cast<std::size_t>(u - d_->base_n)] : base_order_key(u);
  }
  // a before b in key order (the id order)
  bool before(node_t a, node_t b) const { return d_ ? order(a) < order(b) : a < b; }

 private:
  const CSRGraph* g_;
  const GraphDelta* d_ = nullptr;
};

// The delta of base plus `prev` (nullable: none yet) plus these changes: the new slots' order keys
// (`keys`: every slot past the base, prev's slots first with their keys re-ranked, then the new
// ones; their relative order must not change and each must be a valid key: gap <= base_n,
// rank < 0xFFFFFFFF, distinct) and the undirected neighbour pairs to add (`a[i]`, `b[i]` in
// [0, n), a pair already adjacent, or a == b, adds nothing). Only the rows the pairs touch are
// written (into prev's arena); prev's others are shared. O(delta rows + the touched rows' degrees).
// Throws InvalidArgument on bad input.
std::shared_ptr<const GraphDelta> grow_delta(const CSRGraph& base, const GraphDelta* prev, std::int64_t num_keys,
                                             const std::uint64_t* keys, std::int64_t num_pairs, const node_t* a,
                                             const node_t* b);

// A caller's DeltaVisibility data over `delta`: from the base's mask (base_n entries) and the
// new slots' mask (n - base_n entries), the visible degree of every new slot and of every base
// node the delta grew (0 for a hidden node), counted over their delta rows. O(delta entries).
void delta_visible_degrees(const GraphDelta& delta, const std::uint8_t* base_mask, const std::uint8_t* slot_mask,
                           std::int32_t* slot_vdeg, std::int32_t* over_vdeg);

}  // namespace cw
