#include "conceptwalk/csr_graph.hpp"

#include <algorithm>
#include <limits>
#include <string>

#if defined(__linux__)
#include <sys/mman.h>
#endif
#include <cstdlib>
#include <new>

namespace cw {

void* alloc_large(std::size_t bytes) {
#if defined(__linux__)
  const std::size_t size = (bytes + kLargeBlock - 1) & ~(kLargeBlock - 1);
  void* p = std::aligned_alloc(kLargeBlock, size);
  if (!p) throw std::bad_alloc();
  madvise(p, size, MADV_HUGEPAGE);  // advice only: failure leaves ordinary pages
  return p;
#else
  return ::operator new(bytes);
#endif
}

void free_large(void* p, std::size_t bytes) noexcept {
#if defined(__linux__)
  (void)bytes;
  std::free(p);
#else
  ::operator delete(p, bytes);
#endif
}

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
  const std::size_t N = static_cast<std::size_t>(n);

  // Sort the non-self-loop edges by (lo, hi, key), key = (type << 1) | direction, as 16-byte
  // records. Two levels keep the random writes cache-friendly: a counting scatter by lo >> 10
  // (a few thousand write streams), then, per block of 1024 lo values (a few thousand records,
  // in L2), a counting sort by lo and a sort of each lo's records by (hi, key).
  struct Rec {
    std::uint64_t hk;  // hi << 32 | key
    std::uint32_t lo;
    std::uint32_t idx;  // input position (m < 2^30)
  };
  constexpr int kShift = 10;
  constexpr std::size_t kBlock = std::size_t{1} << kShift;
  const std::size_t NB = (N >> kShift) + 1;
  std::vector<std::uint32_t> bstart(NB + 1, 0);
  // input_to_canonical is written in input order at the end from (input, canonical) records
  // grouped by input >> kInShift, so that those writes stay within a small window too.
  constexpr int kInShift = 12;
  const std::size_t NI = (static_cast<std::size_t>(m) >> kInShift) + 1;
  std::vector<std::uint32_t> istart(NI + 1, 0);
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    const node_t a = src[i], b = dst[i];
    if (a == b) continue;
    ++bstart[(static_cast<std::size_t>(std::min(a, b)) >> kShift) + 1];
    ++istart[(static_cast<std::size_t>(i) >> kInShift) + 1];
    ++kept;
  }
  for (std::size_t c = 0; c < NI; ++c) istart[c + 1] += istart[c];
  for (std::size_t c = 0; c < NB; ++c) bstart[c + 1] += bstart[c];
  RawVector<Rec> rec(static_cast<std::size_t>(kept));
  {
    std::vector<std::uint32_t> cur(bstart.begin(), bstart.end() - 1);
    Rec* out = rec.data();
    for (std::int64_t i = 0; i < m; ++i) {
      const node_t a = src[i], b = dst[i];
      if (a == b) {
        if (input_to_canonical) input_to_canonical[i] = -1;
        continue;
      }
      const std::uint32_t t = etype ? static_cast<std::uint32_t>(etype[i]) : 0u;
      const node_t lo = a < b ? a : b, hi = a < b ? b : a;
      const std::uint32_t key = (t << 1) | (a > b ? 1u : 0u);
      out[cur[static_cast<std::size_t>(lo) >> kShift]++] =
          Rec{(static_cast<std::uint64_t>(hi) << 32) | key, static_cast<std::uint32_t>(lo),
              static_cast<std::uint32_t>(i)};
    }
  }

  // Walk lo in order: collapse equal (hi, key) into one canonical edge, equal hi into one pair.
  g.pair_ptr_.resize(static_cast<std::size_t>(kept) + 1);
  g.edge_typedir_.resize(static_cast<std::size_t>(kept));
  std::int32_t* pp = g.pair_ptr_.data();
  std::int32_t* td = g.edge_typedir_.data();
  RawVector<node_t> pair_hi(static_cast<std::size_t>(kept));
  node_t* ph = pair_hi.data();
  std::vector<std::uint32_t> hi_block(NB + 1, 0);  // pairs per block of hi (hi >> kShift)
  std::uint32_t* hb = hi_block.data();
  std::vector<std::uint32_t> pair_begin(N + 1, 0);  // first pair of each lo
  RawVector<Rec> tmp;
  std::uint32_t lcount[kBlock + 1];
  struct Canon {
    std::uint32_t idx;
    std::int32_t e;
  };
  RawVector<Canon> canon(input_to_canonical ? static_cast<std::size_t>(kept) : 0);
  std::vector<std::uint32_t> icur(istart.begin(), istart.end() - 1);
  std::int32_t E = 0;
  std::uint32_t P32 = 0;
  for (std::size_t c = 0; c < NB; ++c) {
    const std::size_t lo0 = c << kShift, lo1 = std::min(N, lo0 + kBlock);
    const std::uint32_t cb = bstart[c], ce = bstart[c + 1];
    // Counting sort of the block by lo.
    std::fill(lcount, lcount + kBlock + 1, 0u);
    for (std::uint32_t i = cb; i < ce; ++i) ++lcount[(rec[i].lo & (kBlock - 1)) + 1];
    for (std::size_t j = 0; j < kBlock; ++j) lcount[j + 1] += lcount[j];
    tmp.resize(ce - cb);
    {
      std::uint32_t cur[kBlock];
      std::copy(lcount, lcount + kBlock, cur);
      for (std::uint32_t i = cb; i < ce; ++i) tmp[cur[rec[i].lo & (kBlock - 1)]++] = rec[i];
    }
    for (std::size_t lo = lo0; lo < lo1; ++lo) {
      pair_begin[lo] = P32;
      const std::uint32_t b = lcount[lo - lo0], e = lcount[lo - lo0 + 1];
      if (b == e) continue;
      Rec* r = tmp.data() + b;
      const std::uint32_t len = e - b;
      // Most lo values have a handful of records: sorting networks of branch-free
      // compare-exchanges (records with equal hk are interchangeable) avoid the mispredicted
      // branches of an insertion sort.
      auto cx = [](Rec& x, Rec& y) {
        const bool sw = y.hk < x.hk;
        const Rec a = sw ? y : x, b2 = sw ? x : y;
        x = a;
        y = b2;
      };
      if (len == 2) {
        cx(r[0], r[1]);
      } else if (len == 3) {
        cx(r[0], r[1]);
        cx(r[1], r[2]);
        cx(r[0], r[1]);
      } else if (len == 4) {
        cx(r[0], r[1]);
        cx(r[2], r[3]);
        cx(r[0], r[2]);
        cx(r[1], r[3]);
        cx(r[1], r[2]);
      } else if (len <= 16) {
        for (std::uint32_t i = 1; i < len; ++i) {
          const Rec x = r[i];
          std::uint32_t j = i;
          while (j > 0 && r[j - 1].hk > x.hk) {
            r[j] = r[j - 1];
            --j;
          }
          r[j] = x;
        }
      } else {
        std::sort(r, r + len, [](const Rec& x, const Rec& y) { return x.hk < y.hk; });
      }
      std::uint64_t prev_hk = ~std::uint64_t{0};
      std::uint32_t prev_hi = ~0u;
      for (std::uint32_t i = 0; i < len; ++i) {
        const std::uint64_t hk = r[i].hk;
        if (hk != prev_hk) {
          const std::uint32_t hi = static_cast<std::uint32_t>(hk >> 32);
          if (hi != prev_hi) {
            pp[P32] = E;
            ph[P32] = static_cast<node_t>(hi);
            ++P32;
            ++hb[(hi >> kShift) + 1];
            prev_hi = hi;
          }
          td[E++] = static_cast<std::int32_t>(hk & 0xffffffffu);
          prev_hk = hk;
        }
        if (input_to_canonical) {
          const std::uint32_t idx = r[i].idx;
          canon[icur[idx >> kInShift]++] = Canon{idx, E - 1};
        }
      }
    }
  }
  pair_begin[N] = P32;
  pp[P32] = E;
  RawVector<Rec>().swap(rec);
  RawVector<Rec>().swap(tmp);
  for (const Canon& c : canon) input_to_canonical[c.idx] = c.e;
  RawVector<Canon>().swap(canon);
  auto fit = [](auto& v, std::size_t size) {
    v.resize(size);
    if (v.capacity() - size > size / 16) v.shrink_to_fit();
  };
  fit(g.pair_ptr_, static_cast<std::size_t>(P32) + 1);
  fit(g.edge_typedir_, static_cast<std::size_t>(E));
  pair_hi.resize(P32);

  const std::int64_t P = static_cast<std::int64_t>(P32);
  // Rows. Row v holds its neighbours below v (pairs with hi = v, ascending lo) and then those
  // above (pairs with lo = v, ascending hi, i.e. pair order). The below side is a transpose:
  // scatter (lo, pair) records by hi >> kShift (stable, a few thousand write streams), then
  // fill the rows block by block, every write landing in the block's own range of entries.
  struct Below {
    std::uint32_t hi, lo;
  };
  for (std::size_t c = 0; c < NB; ++c) hb[c + 1] += hb[c];
  RawVector<Below> bel(static_cast<std::size_t>(P));
  {
    std::vector<std::uint32_t> cur(hi_block.begin(), hi_block.end() - 1);
    Below* out = bel.data();
    for (std::size_t lo = 0; lo < N; ++lo)
      for (std::uint32_t q = pair_begin[lo]; q < pair_begin[lo + 1]; ++q) {
        const std::uint32_t hi = static_cast<std::uint32_t>(ph[q]);
        out[cur[hi >> kShift]++] = Below{hi, static_cast<std::uint32_t>(lo)};
      }
  }
  g.indptr_.resize(N + 1);
  g.indptr_[0] = 0;
  g.indices_.resize(static_cast<std::size_t>(2 * P));
  node_t* ind = g.indices_.data();
  offset_t* ip = g.indptr_.data();
  std::int32_t maxdeg = 0;
  for (std::size_t c = 0; c < NB; ++c) {
    const std::size_t v0 = c << kShift, v1 = std::min(N, v0 + kBlock);
    const std::uint32_t cb = hb[c], ce = hb[c + 1];
    std::fill(lcount, lcount + kBlock + 1, 0u);
    for (std::uint32_t i = cb; i < ce; ++i) ++lcount[bel[i].hi - v0];
    std::uint32_t cur[kBlock];
    for (std::size_t v = v0; v < v1; ++v) {
      const std::uint32_t low = lcount[v - v0];
      const std::int64_t d = static_cast<std::int64_t>(low) + (pair_begin[v + 1] - pair_begin[v]);
      ip[v + 1] = ip[v] + d;
      maxdeg = std::max<std::int32_t>(maxdeg, static_cast<std::int32_t>(d));
      cur[v - v0] = static_cast<std::uint32_t>(ip[v]);
      std::int64_t a = ip[v] + low;  // the above part
      for (std::uint32_t q = pair_begin[v]; q < pair_begin[v + 1]; ++q, ++a) {
        ind[a] = ph[q];
      }
    }
    for (std::uint32_t i = cb; i < ce; ++i) {
      const Below& x = bel[i];
      const std::uint32_t pos = cur[x.hi - v0]++;
      ind[pos] = static_cast<node_t>(x.lo);
    }
  }
  g.max_degree_ = maxdeg;
  g.pair_base_.resize(N + 1);
  for (std::size_t v = 0; v <= N; ++v) g.pair_base_[v] = static_cast<std::int32_t>(pair_begin[v]);
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
                            std::vector<offset_t>& vindptr, RawVector<node_t>& vindices) const {
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

void CSRGraph::entry_pairs(std::int32_t* out) const {
  // Above entries: pairs in order, row by row. Below entries of row v: the pairs (lo, v) in
  // ascending lo, i.e. in pair order, so one cursor per row fills them.
  std::vector<offset_t> below(indptr_.begin(), indptr_.end() - 1);
  for (node_t u = 0; u < n_; ++u) {
    std::int32_t p = pair_base_[u];
    for (offset_t e = above_start(u); e < indptr_[u + 1]; ++e, ++p) {
      out[e] = p;
      out[below[indices_[e]]++] = p;
    }
  }
}

std::int64_t CSRGraph::memory_bytes() const {
  return static_cast<std::int64_t>(indptr_.size() * sizeof(offset_t) +
                                   indices_.size() * sizeof(node_t) +
                                   pair_base_.size() * sizeof(std::int32_t) +
                                   pair_ptr_.size() * sizeof(std::int32_t) +
                                   edge_typedir_.size() * sizeof(std::int32_t));
}

}  // namespace cw
