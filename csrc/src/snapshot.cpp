// CSRGraph::from_parts: a graph from saved arrays, validated (see csr_graph.hpp).
#include <algorithm>
#include <limits>
#include <string>

#include "conceptwalk/csr_graph.hpp"

namespace cw {

namespace {
[[noreturn]] void bad(const std::string& what) { throw InvalidArgument("saved graph arrays: " + what); }
}  // namespace

CSRGraph CSRGraph::from_parts(node_t n, std::int32_t num_types, const offset_t* indptr, std::int64_t num_entries,
                              const node_t* indices, const std::int32_t* pair_base, std::int64_t num_pairs,
                              const std::int32_t* pair_ptr, std::int64_t num_edges,
                              const std::int32_t* edge_typedir, std::shared_ptr<const void> keep) {
  if (n < 0) bad("num_nodes must be >= 0, got " + std::to_string(n));
  if (num_types < 0 || num_types > (1 << 29))
    bad("num_edge_types must be in [0, 2^29], got " + std::to_string(num_types));
  if (num_pairs < 0 || num_entries != 2 * num_pairs)
    bad("indices must hold 2 * num_pairs entries, got " + std::to_string(num_entries) + " for " +
        std::to_string(num_pairs) + " pairs");
  if (num_edges < num_pairs ||
      num_edges >= static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::max()) / 2)
    bad("num_edges " + std::to_string(num_edges) + " out of range for " + std::to_string(num_pairs) + " pairs");
  const std::size_t N = static_cast<std::size_t>(n);
  if (indptr[0] != 0 || indptr[N] != num_entries) bad("indptr must run from 0 to num_entries");
  if (pair_base[0] != 0 || pair_base[N] != num_pairs) bad("pair_base must run from 0 to num_pairs");
  std::int32_t maxdeg = 0;
  std::int64_t above_total = 0;
  for (std::size_t u = 0; u < N; ++u) {
    const offset_t b = indptr[u], e = indptr[u + 1];
    if (e < b || e > num_entries) bad("indptr is not non-decreasing at node " + std::to_string(u));
    if (e - b > std::numeric_limits<std::int32_t>::max()) bad("degree too large");
    maxdeg = std::max(maxdeg, static_cast<std::int32_t>(e - b));
    std::int64_t above = 0;
    node_t prev = -1;
    for (offset_t i = b; i < e; ++i) {
      const node_t v = indices[i];
      if (v < 0 || v >= n) bad("index " + std::to_string(v) + " outside [0, " + std::to_string(n) + ")");
      if (v <= prev) bad("row " + std::to_string(u) + " is not strictly ascending");
      if (static_cast<std::size_t>(v) == u) bad("row " + std::to_string(u) + " holds a self-loop");
      if (static_cast<std::size_t>(v) > u) ++above;
      prev = v;
    }
    if (pair_base[u + 1] < pair_base[u] || pair_base[u + 1] - pair_base[u] != above)
      bad("pair_base does not count the entries above node " + std::to_string(u));
    above_total += above;
  }
  if (above_total != num_pairs) bad("the pairs do not match the entries");
  // Symmetry in one pass: walking rows in ascending order, the entries above their row, (u, v)
  // with v > u, must meet row v's entries below it in order (those are ascending u), which a
  // cursor per row checks; at the end every row's below part must be used up. Together with as
  // many entries below as above, that makes the rows exactly symmetric.
  {
    std::vector<offset_t> cursor(indptr, indptr + N);
    for (std::size_t u = 0; u < N; ++u) {
      const offset_t a = indptr[u + 1] - (pair_base[u + 1] - pair_base[u]);
      for (offset_t e = a; e < indptr[u + 1]; ++e) {
        const node_t v = indices[e];
        const offset_t c = cursor[static_cast<std::size_t>(v)]++;
        const offset_t v_above = indptr[v + 1] - (pair_base[v + 1] - pair_base[v]);
        if (c >= v_above || indices[c] != static_cast<node_t>(u))
          bad("rows are not symmetric at (" + std::to_string(u) + ", " + std::to_string(v) + ")");
      }
    }
    for (std::size_t v = 0; v < N; ++v)
      if (cursor[v] != indptr[v + 1] - (pair_base[v + 1] - pair_base[v]))
        bad("rows are not symmetric at node " + std::to_string(v));
  }
  if (pair_ptr[0] != 0 || pair_ptr[num_pairs] != num_edges) bad("pair_ptr must run from 0 to num_edges");
  for (std::int64_t p = 0; p < num_pairs; ++p) {
    const std::int32_t a = pair_ptr[p], b = pair_ptr[p + 1];
    if (b <= a || b > num_edges) bad("pair_ptr is not increasing at pair " + std::to_string(p));
    for (std::int32_t e = a; e < b; ++e) {
      const std::int32_t td = edge_typedir[e];
      if (td < 0 || (td >> 1) >= num_types)
        bad("edge " + std::to_string(e) + ": type code outside [0, " + std::to_string(num_types) + ")");
      if (e > a && td <= edge_typedir[e - 1])
        bad("edges of pair " + std::to_string(p) + " are not in canonical order");
    }
  }
  CSRGraph g;
  g.n_ = n;
  g.num_types_ = num_types;
  g.max_degree_ = maxdeg;
  if (keep) {
    g.indptr_.borrow(indptr, N + 1, keep);
    g.indices_.borrow(indices, static_cast<std::size_t>(num_entries), keep);
    g.pair_base_.borrow(pair_base, N + 1, keep);
    g.pair_ptr_.borrow(pair_ptr, static_cast<std::size_t>(num_pairs) + 1, keep);
    g.edge_typedir_.borrow(edge_typedir, static_cast<std::size_t>(num_edges), keep);
    return g;
  }
  g.indptr_.assign(indptr, indptr + N + 1);
  g.indices_.assign(indices, indices + num_entries);
  g.pair_base_.assign(pair_base, pair_base + N + 1);
  g.pair_ptr_.assign(pair_ptr, pair_ptr + num_pairs + 1);
  g.edge_typedir_.assign(edge_typedir, edge_typedir + num_edges);
  return g;
}

}  // namespace cw
