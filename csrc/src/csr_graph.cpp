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

  g.finish_rows(pair_begin.data(), pair_hi.data());
  return g;
}

// Rows, pair_base and max_degree from the pairs (pair_ptr_ and edge_typedir_ already filled):
// pair_begin (n + 1) = first pair of each lo, pair_hi (num_pairs) = the hi of each pair.
void CSRGraph::finish_rows(const std::uint32_t* pair_begin, const node_t* ph) {
  constexpr int kShift = 10;
  constexpr std::size_t kBlock = std::size_t{1} << kShift;
  const std::size_t N = static_cast<std::size_t>(n_);
  const std::size_t NB = (N >> kShift) + 1;
  const std::int64_t P = static_cast<std::int64_t>(pair_begin[N]);
  std::vector<std::uint32_t> hi_block(NB + 1, 0);  // pairs per block of hi (hi >> kShift)
  std::uint32_t* hb = hi_block.data();
  for (std::int64_t q = 0; q < P; ++q) ++hb[(static_cast<std::size_t>(ph[q]) >> kShift) + 1];
  std::uint32_t lcount[kBlock + 1];
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
  indptr_.resize(N + 1);
  indptr_[0] = 0;
  indices_.resize(static_cast<std::size_t>(2 * P));
  node_t* ind = indices_.data();
  offset_t* ip = indptr_.data();
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
  max_degree_ = maxdeg;
  pair_base_.resize(N + 1);
  for (std::size_t v = 0; v <= N; ++v) pair_base_[v] = static_cast<std::int32_t>(pair_begin[v]);
}

CSRGraph CSRGraph::patched(const CSRGraph& old, node_t n, const std::int32_t* remap, std::int32_t num_old_types,
                           const std::int32_t* type_lut, std::int64_t num_drop, const std::int64_t* drop,
                           std::int64_t m_add, const std::int32_t* add_src, const std::int32_t* add_dst,
                           const std::int32_t* add_type, std::int32_t min_num_types,
                           std::int64_t* add_to_canonical, const PatchedEdges& edges) {
  const node_t n_old = old.n_;
  const std::int64_t E_old = old.num_edges();
  if (n < 0) throw InvalidArgument("num_nodes must be >= 0, got " + std::to_string(n));
  if (num_old_types < old.num_types_)
    throw InvalidArgument("type_lut must cover the old graph's " + std::to_string(old.num_types_) +
                          " edge type codes, got " + std::to_string(num_old_types));
  if (num_drop < 0 || m_add < 0) throw InvalidArgument("negative array length");
  if (min_num_types < 0 || min_num_types > (1 << 29))
    throw InvalidArgument("min_num_types must be in [0, 2^29], got " + std::to_string(min_num_types));
  if (E_old + m_add >= static_cast<std::int64_t>(std::numeric_limits<std::int32_t>::max()) / 2)
    throw InvalidArgument("too many edges for int32 edge ids");
  {
    std::int32_t prev = -1;
    for (node_t u = 0; u < n_old; ++u) {
      const std::int32_t r = remap[u];
      if (r < -1 || r >= n)
        throw InvalidArgument("remap[" + std::to_string(u) + "] = " + std::to_string(r) + " outside [-1, " +
                              std::to_string(n) + ")");
      if (r >= 0) {
        if (r <= prev) throw InvalidArgument("remap must be strictly increasing over kept nodes");
        prev = r;
      }
    }
    prev = -1;
    for (std::int32_t t = 0; t < num_old_types; ++t) {
      const std::int32_t r = type_lut[t];
      if (r < -1 || r >= (1 << 29))
        throw InvalidArgument("type_lut[" + std::to_string(t) + "] = " + std::to_string(r) +
                              " outside [-1, 2^29)");
      if (r >= 0) {
        if (r <= prev) throw InvalidArgument("type_lut must be strictly increasing over kept codes");
        prev = r;
      }
    }
    for (std::int64_t i = 0; i < num_drop; ++i)
      if (drop[i] < 0 || drop[i] >= E_old || (i && drop[i] <= drop[i - 1]))
        throw InvalidArgument("drop must hold ascending canonical edge ids in [0, " + std::to_string(E_old) + ")");
    for (std::int64_t i = 0; i < m_add; ++i) {
      if (add_src[i] < 0 || add_src[i] >= n || add_dst[i] < 0 || add_dst[i] >= n)
        throw InvalidArgument("added edge " + std::to_string(i) + ": a node index outside [0, " +
                              std::to_string(n) + ")");
      if (add_type[i] < 0 || add_type[i] >= (1 << 29))
        throw InvalidArgument("added edge " + std::to_string(i) + ": edge type code " +
                              std::to_string(add_type[i]) + " outside [0, 2^29)");
    }
  }
  // The added edges as (lo, hi << 32 | key, input position), sorted.
  struct Add {
    std::uint32_t lo;
    std::uint64_t hk;
    std::int64_t idx;
  };
  std::vector<Add> adds;
  adds.reserve(static_cast<std::size_t>(m_add));
  for (std::int64_t i = 0; i < m_add; ++i) {
    const node_t a = add_src[i], b = add_dst[i];
    add_to_canonical[i] = -1;
    if (a == b) continue;
    const node_t lo = a < b ? a : b, hi = a < b ? b : a;
    const std::uint32_t key = (static_cast<std::uint32_t>(add_type[i]) << 1) | (a > b ? 1u : 0u);
    adds.push_back(Add{static_cast<std::uint32_t>(lo), (static_cast<std::uint64_t>(hi) << 32) | key, i});
  }
  std::sort(adds.begin(), adds.end(),
            [](const Add& x, const Add& y) { return x.lo != y.lo ? x.lo < y.lo : x.hk < y.hk; });
  for (std::size_t i = 1; i < adds.size(); ++i)
    if (adds[i].lo == adds[i - 1].lo && adds[i].hk == adds[i - 1].hk)
      throw InvalidArgument("added edges " + std::to_string(adds[i - 1].idx) + " and " +
                            std::to_string(adds[i].idx) + " are the same edge");

  const std::size_t N = static_cast<std::size_t>(n);
  std::vector<std::int32_t> inv(N, -1);  // new node -> old node
  for (node_t u = 0; u < n_old; ++u)
    if (remap[u] >= 0) inv[static_cast<std::size_t>(remap[u])] = u;
  // remap as a few runs of constant shift (a write inserts or deletes a few nodes): looked up
  // by a branch-free count over the run starts, which stay in L1, instead of a random read of
  // an n-entry array per edge.
  constexpr int kMaxRuns = 16;
  constexpr std::int32_t kGone = std::numeric_limits<std::int32_t>::min();
  node_t run_start[kMaxRuns];
  std::int32_t run_shift[kMaxRuns];
  int runs = 0;
  for (node_t u = 0; u < n_old && runs <= kMaxRuns; ++u) {
    const std::int32_t sh = remap[u] < 0 ? kGone : remap[u] - u;
    if (runs == 0 || sh != run_shift[runs - 1]) {
      if (runs == kMaxRuns) {
        runs = kMaxRuns + 1;
        break;
      }
      run_start[runs] = u;
      run_shift[runs] = sh;
      ++runs;
    }
  }
  const bool by_runs = runs <= kMaxRuns;
  auto renumber = [&](node_t x) -> std::int32_t {
    if (!by_runs) return remap[x];
    int k = 0;
    for (int i = 1; i < runs; ++i) k += x >= run_start[i] ? 1 : 0;
    const std::int32_t sh = run_shift[k];
    return sh == kGone ? -1 : x + sh;
  };

  CSRGraph g;
  g.n_ = n;
  const std::size_t cap_pairs = static_cast<std::size_t>(old.num_pairs()) + adds.size();
  const std::size_t cap_edges = static_cast<std::size_t>(E_old) + adds.size();
  g.pair_ptr_.resize(cap_pairs + 1);
  g.edge_typedir_.resize(cap_edges);
  RawVector<node_t> pair_hi(cap_pairs);
  std::vector<std::uint32_t> pair_begin(N + 1, 0);
  std::int32_t* pp = g.pair_ptr_.data();
  std::int32_t* td = g.edge_typedir_.data();
  node_t* ph = pair_hi.data();
  std::uint32_t P = 0;
  std::int32_t E = 0;
  std::int32_t max_type = -1;
  std::int64_t di = 0;  // next entry of drop
  std::size_t ai = 0;   // next added edge
  bool same_types = true;
  for (std::int32_t t = 0; t < num_old_types; ++t) same_types = same_types && type_lut[t] == t;
  bool none_deleted = true;
  for (node_t u = 0; u < n_old; ++u) none_deleted = none_deleted && remap[u] >= 0;
  // Pairs that appear (only added edges) and pairs that disappear (every edge dropped, both
  // endpoints kept), as (hi, lo): the rows are the old rows with these merged in / left out.
  struct HiLo {
    std::uint32_t hi, lo;
    bool operator<(const HiLo& o) const { return hi != o.hi ? hi < o.hi : lo < o.lo; }
  };
  std::vector<HiLo> born, dead;
  for (std::size_t v = 0; v < N; ++v) {
    pair_begin[v] = P;
    std::uint32_t cur_hi = ~0u;
    bool cur_old = true;
    auto emit = [&](std::uint64_t hk, bool from_old) {
      const std::uint32_t hi = static_cast<std::uint32_t>(hk >> 32);
      if (hi != cur_hi) {
        if (!cur_old) born.push_back(HiLo{cur_hi, static_cast<std::uint32_t>(v)});
        pp[P] = E;
        ph[P] = static_cast<node_t>(hi);
        ++P;
        cur_hi = hi;
        cur_old = false;
      }
      cur_old = cur_old || from_old;
      const std::int32_t key = static_cast<std::int32_t>(hk & 0xffffffffu);
      max_type = std::max(max_type, key >> 1);
      td[E] = key;
      const bool rev = (key & 1) != 0;
      edges.src[E] = rev ? static_cast<std::int32_t>(hi) : static_cast<std::int32_t>(v);
      edges.dst[E] = rev ? static_cast<std::int32_t>(v) : static_cast<std::int32_t>(hi);
      edges.type[E] = key >> 1;
      return E++;
    };
    const std::int32_t u = inv[v];
    if (u >= 0 && same_types && none_deleted) {
      // Fast path: a lo whose edges all stay and that gains none is its old block renumbered.
      const std::int32_t q0 = old.pair_base_[static_cast<std::size_t>(u)];
      const std::int32_t q1 = old.pair_base_[static_cast<std::size_t>(u) + 1];
      const std::int32_t e0 = old.pair_ptr_[static_cast<std::size_t>(q0)];
      const std::int32_t e1 = old.pair_ptr_[static_cast<std::size_t>(q1)];
      while (di < num_drop && drop[di] < e0) ++di;
      const bool no_drop = di >= num_drop || drop[di] >= e1;
      const bool no_add = ai >= adds.size() || adds[ai].lo != v;
      if (no_drop && no_add) {
        if (q1 > q0) {
          // Index arithmetic only: a pointer shifted by -q0 or -e0 could point before its
          // array, which C++ leaves undefined even when never dereferenced there.
          const offset_t a0 = old.above_start(u);
          const std::int32_t delta = E - e0;
          const std::int32_t* __restrict opp = old.pair_ptr_.data();
          const node_t* __restrict oind = old.indices_.data() + a0;  // the above part of row u
          const std::int32_t* __restrict otd = old.edge_typedir_.data() + e0;
          std::int32_t* __restrict npp = pp + P;
          node_t* __restrict nph = ph + P;
          const std::int32_t np = q1 - q0, ne = e1 - e0;
          for (std::int32_t j = 0; j < np; ++j) {
            npp[j] = opp[q0 + j] + delta;
            nph[j] = renumber(oind[j]);
          }
          std::int32_t* __restrict ntd = td + E;
          for (std::int32_t j = 0; j < ne; ++j) {
            ntd[j] = otd[j];
            max_type = std::max(max_type, otd[j] >> 1);
          }
          {
            std::int32_t* __restrict es = edges.src + E;
            std::int32_t* __restrict ed = edges.dst + E;
            std::int32_t* __restrict et = edges.type + E;
            std::int32_t* __restrict en = edges.new_to_old + E;
            const std::int32_t lo = static_cast<std::int32_t>(v);
            for (std::int32_t j = 0; j < np; ++j) {
              const std::int32_t hi = nph[j];
              for (std::int32_t e = opp[q0 + j]; e < opp[q0 + j + 1]; ++e) {
                const std::int32_t key = otd[e - e0];
                const bool rev = (key & 1) != 0;
                es[e - e0] = rev ? hi : lo;
                ed[e - e0] = rev ? lo : hi;
                et[e - e0] = key >> 1;
                en[e - e0] = e;
              }
            }
          }
          P += static_cast<std::uint32_t>(q1 - q0);
          E += e1 - e0;
        }
        continue;
      }
    }
    if (u >= 0) {
      const std::int32_t q0 = old.pair_base_[static_cast<std::size_t>(u)];
      const std::int32_t q1 = old.pair_base_[static_cast<std::size_t>(u) + 1];
      const offset_t a0 = old.above_start(u);
      for (std::int32_t q = q0; q < q1; ++q) {
        const node_t hi_old = old.indices_[static_cast<std::size_t>(a0 + (q - q0))];
        const std::int32_t hi_new = renumber(hi_old);
        const std::int32_t e0 = old.pair_ptr_[static_cast<std::size_t>(q)];
        const std::int32_t e1 = old.pair_ptr_[static_cast<std::size_t>(q) + 1];
        bool any = false;
        for (std::int32_t e = e0; e < e1; ++e) {
          while (di < num_drop && drop[di] < e) ++di;
          if (di < num_drop && drop[di] == e) continue;
          if (hi_new < 0) continue;
          const std::int32_t key_old = old.edge_typedir_[static_cast<std::size_t>(e)];
          const std::int32_t t_new = type_lut[key_old >> 1];
          if (t_new < 0)
            throw InvalidArgument("type_lut maps the type of kept edge " + std::to_string(e) + " to -1");
          const std::uint64_t hk = (static_cast<std::uint64_t>(hi_new) << 32) |
                                   ((static_cast<std::uint32_t>(t_new) << 1) | (key_old & 1));
          // added edges of this lo that come first
          while (ai < adds.size() && adds[ai].lo == v && adds[ai].hk < hk) {
            const std::int32_t c = emit(adds[ai].hk, false);
            add_to_canonical[adds[ai].idx] = c;
            edges.new_to_old[c] = -1;
            ++ai;
          }
          if (ai < adds.size() && adds[ai].lo == v && adds[ai].hk == hk)
            throw InvalidArgument("added edge " + std::to_string(adds[ai].idx) + " equals kept edge " +
                                  std::to_string(e));
          const std::int32_t c = emit(hk, true);
          edges.new_to_old[c] = e;
          any = true;
        }
        if (!any && hi_new >= 0)
          dead.push_back(HiLo{static_cast<std::uint32_t>(hi_old), static_cast<std::uint32_t>(u)});
      }
    }
    while (ai < adds.size() && adds[ai].lo == v) {
      const std::int32_t c = emit(adds[ai].hk, false);
      add_to_canonical[adds[ai].idx] = c;
      edges.new_to_old[c] = -1;
      ++ai;
    }
    if (!cur_old) born.push_back(HiLo{cur_hi, static_cast<std::uint32_t>(v)});
  }
  pair_begin[N] = P;
  pp[P] = E;
  g.num_types_ = std::max(max_type + 1, min_num_types);
  auto fit = [](auto& vec, std::size_t size) {
    vec.resize(size);
    if (vec.capacity() - size > size / 16) vec.shrink_to_fit();
  };
  fit(g.pair_ptr_, static_cast<std::size_t>(P) + 1);
  fit(g.edge_typedir_, static_cast<std::size_t>(E));
  // Rows: row v = its old row's neighbours below it (renumbered; deleted nodes and dead pairs
  // left out) merged with the born pairs' lows, then its pairs' highs (the above part).
  std::sort(born.begin(), born.end());
  std::sort(dead.begin(), dead.end());
  g.indptr_.resize(N + 1);
  g.indices_.resize(2 * static_cast<std::size_t>(P));
  offset_t* ip = g.indptr_.data();
  node_t* ind = g.indices_.data();
  const offset_t total = 2 * static_cast<offset_t>(P);
  ip[0] = 0;
  offset_t w_at = 0;
  std::size_t bi = 0, dj = 0;
  std::int32_t maxdeg = 0;
  auto put = [&](node_t x) {
    if (w_at >= total) throw InvalidArgument("patched: inconsistent old graph (rows overflow)");
    ind[w_at++] = x;
  };
  for (std::size_t v = 0; v < N; ++v) {
    const std::int32_t u = inv[v];
    const bool born_here = bi < born.size() && born[bi].hi == v;
    const bool dead_here = dj < dead.size() && dead[dj].hi == static_cast<std::uint32_t>(u);
    if (u >= 0 && none_deleted && !born_here && !dead_here) {
      // Fast path: the row's below part is its old one renumbered.
      const offset_t b0 = old.indptr_[static_cast<std::size_t>(u)], b1 = old.above_start(u);
      const std::uint32_t q0 = pair_begin[v], q1 = pair_begin[v + 1];
      if (w_at + (b1 - b0) + (q1 - q0) > total)
        throw InvalidArgument("patched: inconsistent old graph (rows overflow)");
      const node_t* __restrict oind = old.indices_.data() + b0;
      node_t* __restrict out = ind + w_at;
      const offset_t len = b1 - b0;
      for (offset_t j = 0; j < len; ++j) out[j] = renumber(oind[j]);
      w_at += len;
      for (std::uint32_t q = q0; q < q1; ++q) ind[w_at++] = ph[q];
      ip[v + 1] = w_at;
      maxdeg = std::max<std::int32_t>(maxdeg, static_cast<std::int32_t>(w_at - ip[v]));
      continue;
    }
    if (u >= 0) {
      const offset_t b0 = old.indptr_[static_cast<std::size_t>(u)], b1 = old.above_start(u);
      for (offset_t e = b0; e < b1; ++e) {
        const node_t w_old = old.indices_[static_cast<std::size_t>(e)];
        const std::int32_t w = renumber(w_old);
        if (w < 0) continue;
        const HiLo key{static_cast<std::uint32_t>(u), static_cast<std::uint32_t>(w_old)};
        while (dj < dead.size() && dead[dj] < key) ++dj;
        if (dj < dead.size() && dead[dj].hi == key.hi && dead[dj].lo == key.lo) {
          ++dj;
          continue;
        }
        while (bi < born.size() && born[bi].hi == v && born[bi].lo < static_cast<std::uint32_t>(w))
          put(static_cast<node_t>(born[bi++].lo));
        put(w);
      }
    }
    while (bi < born.size() && born[bi].hi == v) put(static_cast<node_t>(born[bi++].lo));
    for (std::uint32_t q = pair_begin[v]; q < pair_begin[v + 1]; ++q) put(ph[q]);
    ip[v + 1] = w_at;
    maxdeg = std::max<std::int32_t>(maxdeg, static_cast<std::int32_t>(w_at - ip[v]));
  }
  if (w_at != total || bi != born.size())
    throw InvalidArgument("patched: inconsistent old graph (row entries do not match its pairs)");
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

void CSRGraph::visible_rows(const std::uint8_t* mask, std::int32_t* vdeg, std::vector<offset_t>& vindptr,
                            RawVector<node_t>& vindices) const {
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

void CSRGraph::edge_columns(std::int32_t* src, std::int32_t* dst, std::int32_t* type) const {
  for (node_t u = 0; u < n_; ++u) {
    const std::int32_t q0 = pair_base_[static_cast<std::size_t>(u)];
    const std::int32_t q1 = pair_base_[static_cast<std::size_t>(u) + 1];
    const node_t* above = indices_.data() + above_start(u);
    for (std::int32_t q = q0; q < q1; ++q) {
      const node_t hi = above[q - q0];
      for (std::int32_t e = pair_ptr_[static_cast<std::size_t>(q)]; e < pair_ptr_[static_cast<std::size_t>(q) + 1];
           ++e) {
        const std::int32_t key = edge_typedir_[static_cast<std::size_t>(e)];
        const bool rev = (key & 1) != 0;
        src[e] = rev ? hi : u;
        dst[e] = rev ? u : hi;
        type[e] = key >> 1;
      }
    }
  }
}

std::int64_t CSRGraph::memory_bytes() const {
  return static_cast<std::int64_t>(indptr_.size() * sizeof(offset_t) + indices_.size() * sizeof(node_t) +
                                   pair_base_.size() * sizeof(std::int32_t) +
                                   pair_ptr_.size() * sizeof(std::int32_t) +
                                   edge_typedir_.size() * sizeof(std::int32_t));
}

}  // namespace cw
