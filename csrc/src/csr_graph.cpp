#include "conceptwalk/csr_graph.hpp"

#include <algorithm>
#include <limits>
#include <string>

namespace cw {

CSRGraph CSRGraph::build(node_t n, std::int64_t m, const std::int32_t* src, const std::int32_t* dst,
                         const std::int32_t* etype, std::int64_t* input_to_canonical) {
  if (n < 0) throw InvalidArgument("num_nodes must be >= 0, got " + std::to_string(n));
  if (m < 0) throw InvalidArgument("number of edges must be >= 0");
  if (m >= static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::max()) / 2)
    throw InvalidArgument("too many edges for int32 edge ids: " + std::to_string(m));
  std::int32_t max_type = -1;
  for (std::int64_t i = 0; i < m; ++i) {
    if (src[i] < 0 || src[i] >= n)
      throw InvalidArgument("edge " + std::to_string(i) + ": src index " + std::to_string(src[i]) +
                            " outside [0, " + std::to_string(n) + ")");
    if (dst[i] < 0 || dst[i] >= n)
      throw InvalidArgument("edge " + std::to_string(i) + ": dst index " + std::to_string(dst[i]) +
                            " outside [0, " + std::to_string(n) + ")");
    const std::int32_t t = etype ? etype[i] : 0;
    if (t < 0 || t >= (1 << 29))
      throw InvalidArgument("edge " + std::to_string(i) + ": edge type code " + std::to_string(t) +
                            " outside [0, 2^29)");
    max_type = std::max(max_type, t);
  }

  CSRGraph g;
  g.n_ = n;
  g.num_types_ = max_type + 1;

  // Counting sort of non-self-loop edges by (lo, hi): first by hi, then stably by lo.
  std::vector<std::int64_t> count(static_cast<std::size_t>(n) + 1, 0);
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    if (src[i] == dst[i]) continue;
    ++count[std::max(src[i], dst[i]) + 1];
    ++kept;
  }
  for (node_t v = 0; v < n; ++v) count[v + 1] += count[v];
  std::vector<std::int32_t> by_hi(static_cast<std::size_t>(kept));
  for (std::int64_t i = 0; i < m; ++i) {
    if (src[i] == dst[i]) continue;
    by_hi[count[std::max(src[i], dst[i])]++] = static_cast<std::int32_t>(i);
  }
  std::fill(count.begin(), count.end(), 0);
  for (std::int32_t i : by_hi) ++count[std::min(src[i], dst[i]) + 1];
  for (node_t v = 0; v < n; ++v) count[v + 1] += count[v];
  std::vector<std::int32_t> order(static_cast<std::size_t>(kept));
  for (std::int32_t i : by_hi) order[count[std::min(src[i], dst[i])]++] = i;
  std::vector<std::int32_t>().swap(by_hi);

  // Key within a (lo, hi) run: (type << 1) | direction.
  auto key = [&](std::int32_t i) {
    const std::int32_t t = etype ? etype[i] : 0;
    return (t << 1) | (src[i] > dst[i] ? 1 : 0);
  };
  if (input_to_canonical)
    for (std::int64_t i = 0; i < m; ++i) input_to_canonical[i] = -1;

  // Walk runs of equal (lo, hi): sort each run by (key, input index), collapse equal keys.
  std::vector<std::int32_t> pair_lo, pair_hi;
  g.pair_ptr_.reserve(static_cast<std::size_t>(kept) + 1);
  g.edge_typedir_.reserve(static_cast<std::size_t>(kept));
  std::vector<std::int64_t> deg(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> low_count(static_cast<std::size_t>(n), 0);  // neighbours below v
  std::int64_t s = 0;
  while (s < kept) {
    const node_t lo = std::min(src[order[s]], dst[order[s]]);
    const node_t hi = std::max(src[order[s]], dst[order[s]]);
    std::int64_t e = s + 1;
    while (e < kept && std::min(src[order[e]], dst[order[e]]) == lo &&
           std::max(src[order[e]], dst[order[e]]) == hi)
      ++e;
    if (e - s > 1)
      std::sort(order.begin() + s, order.begin() + e, [&](std::int32_t a, std::int32_t b) {
        const std::int32_t ka = key(a), kb = key(b);
        return ka != kb ? ka < kb : a < b;
      });
    g.pair_ptr_.push_back(static_cast<std::int32_t>(g.edge_typedir_.size()));
    std::int32_t prev = -1;
    for (std::int64_t j = s; j < e; ++j) {
      const std::int32_t k = key(order[j]);
      if (k != prev) {
        g.edge_typedir_.push_back(k);
        prev = k;
      }
      if (input_to_canonical)
        input_to_canonical[order[j]] = static_cast<std::int64_t>(g.edge_typedir_.size()) - 1;
    }
    pair_lo.push_back(lo);
    pair_hi.push_back(hi);
    ++deg[lo];
    ++deg[hi];
    ++low_count[hi];
    s = e;
  }
  g.pair_ptr_.push_back(static_cast<std::int32_t>(g.edge_typedir_.size()));
  std::vector<std::int32_t>().swap(order);

  const std::int64_t P = static_cast<std::int64_t>(pair_lo.size());
  g.indptr_.assign(static_cast<std::size_t>(n) + 1, 0);
  for (node_t v = 0; v < n; ++v) {
    g.indptr_[v + 1] = g.indptr_[v] + deg[v];
    g.max_degree_ = std::max<std::int32_t>(g.max_degree_, static_cast<std::int32_t>(deg[v]));
  }
  g.indices_.resize(static_cast<std::size_t>(2 * P));
  g.entry_pair_.resize(static_cast<std::size_t>(2 * P));
  // Two cursors per row: neighbours below v fill [indptr, indptr+low), above v fill the rest.
  // Pairs arrive sorted by (lo, hi), so both halves fill in ascending neighbour order.
  std::vector<std::int64_t>& below = deg;  // reuse
  std::vector<std::int64_t>& above = low_count;
  for (node_t v = 0; v < n; ++v) {
    const std::int64_t low = low_count[v];
    below[v] = g.indptr_[v];
    above[v] = g.indptr_[v] + low;
  }
  for (std::int64_t p = 0; p < P; ++p) {
    const node_t lo = pair_lo[p], hi = pair_hi[p];
    const std::int64_t a = above[lo]++;
    g.indices_[a] = hi;
    g.entry_pair_[a] = static_cast<std::int32_t>(p);
    const std::int64_t b = below[hi]++;
    g.indices_[b] = lo;
    g.entry_pair_[b] = static_cast<std::int32_t>(p);
  }
  return g;
}

offset_t CSRGraph::find_entry(node_t u, node_t v) const {
  const node_t* b = indices_.data() + indptr_[u];
  const node_t* e = indices_.data() + indptr_[u + 1];
  const node_t* it = std::lower_bound(b, e, v);
  if (it == e || *it != v) return -1;
  return static_cast<offset_t>(it - indices_.data());
}

void CSRGraph::visible_degrees(const std::uint8_t* mask, std::int32_t* vdeg) const {
  for (node_t u = 0; u < n_; ++u) {
    std::int32_t d = 0;
    if (mask[u])
      for (offset_t e = indptr_[u]; e < indptr_[u + 1]; ++e) d += mask[indices_[e]] ? 1 : 0;
    vdeg[u] = d;
  }
}

void CSRGraph::visible_rows(const std::uint8_t* mask, std::int32_t* vdeg,
                            std::vector<offset_t>& vindptr, std::vector<node_t>& vindices) const {
  visible_degrees(mask, vdeg);
  vindptr.assign(static_cast<std::size_t>(n_) + 1, 0);
  for (node_t u = 0; u < n_; ++u) vindptr[u + 1] = vindptr[u] + vdeg[u];
  vindices.resize(static_cast<std::size_t>(vindptr[n_]));
  node_t* out = vindices.data();
  for (node_t u = 0; u < n_; ++u) {
    if (!mask[u]) continue;
    for (offset_t e = indptr_[u]; e < indptr_[u + 1]; ++e) {
      const node_t v = indices_[e];
      if (mask[v]) *out++ = v;
    }
  }
}

std::int64_t CSRGraph::memory_bytes() const {
  return static_cast<std::int64_t>(indptr_.size() * sizeof(offset_t) +
                                   indices_.size() * sizeof(node_t) +
                                   entry_pair_.size() * sizeof(std::int32_t) +
                                   pair_ptr_.size() * sizeof(std::int32_t) +
                                   edge_typedir_.size() * sizeof(std::int32_t));
}

}  // namespace cw
