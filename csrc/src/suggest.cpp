#include "conceptwalk/suggest.hpp"

#include <algorithm>
#include <string>

#include "conceptwalk/check.hpp"
#include "conceptwalk/path.hpp"
#include "conceptwalk/workspace.hpp"

namespace cw {

namespace {

// Per-thread scratch of resource allocation, grown on demand and clean between queries (zeros):
// one flag byte per node (excluded: a or a neighbour of a; candidate), the score and the shared
// count in their own arrays. A query on a cold cache pays a miss per line it touches: a byte per
// node for the test every visited entry makes, 12 bytes for a candidate's tallies, instead of a
// 32-byte slot for both.
struct RAScratch {
  RawVector<std::uint8_t> flag;
  RawVector<double> score;
  RawVector<std::int32_t> count;
  std::vector<node_t> touched, listed;
  void ensure(std::size_t n) {
    if (flag.size() >= n) return;
    const std::size_t old = flag.size();
    flag.resize(n);
    score.resize(n);
    count.resize(n);
    for (std::size_t i = old; i < n; ++i) {
      flag[i] = 0;
      score[i] = 0.0;
      count[i] = 0;
    }
  }
};

RAScratch& ra_scratch(node_t n) {
  thread_local RAScratch ws;
  ws.ensure(static_cast<std::size_t>(n));
  return ws;
}

// resource_allocation over a live graph (base plus delta): the same counting over GraphRef's rows
// (each in key order), the mask through the delta's part, ties by order key; no prefetching.
RAResult resource_allocation_delta(const GraphRef& g, const Visibility& vis, node_t a, std::int64_t min_shared,
                                   std::int64_t k) {
  RAScratch& ws = ra_scratch(g.num_nodes());
  std::uint8_t* const flag = ws.flag.data();
  double* const score = ws.score.data();
  std::int32_t* const count = ws.count.data();
  std::vector<node_t>& touched = ws.touched;
  std::vector<node_t>& listed = ws.listed;
  touched.clear();
  listed.clear();
  constexpr std::uint8_t kCand = 1, kExcluded = 4;
  const node_t* ab;
  const node_t* ae;
  g.row(a, ab, ae);
  flag[a] = kExcluded;
  for (const node_t* p = ab; p != ae; ++p) flag[*p] = kExcluded;
  for (const node_t* p = ab; p != ae; ++p) {
    const node_t z = *p;
    if (!CSRGraph::visible(z, vis)) continue;
    const double w = 1.0 / static_cast<double>(g.degree(z, vis));
    const node_t* zb;
    const node_t* ze;
    g.row(z, zb, ze);
    for (; zb != ze; ++zb) {
      const node_t b = *zb;
      const std::uint8_t f = flag[b];
      if ((f & kExcluded) || !CSRGraph::visible(b, vis)) continue;
      if (!(f & kCand)) {
        flag[b] = kCand;
        touched.push_back(b);
      }
      const std::int32_t c = ++count[b];
      score[b] += w;
      if (c == min_shared) listed.push_back(b);
    }
  }
  struct Item {
    double p;
    node_t b;
  };
  std::vector<Item> cand;
  cand.reserve(listed.size());
  for (node_t b : listed) cand.push_back(Item{score[b], b});
  listed.clear();
  for (node_t b : touched) {
    flag[b] = 0;
    score[b] = 0.0;
    count[b] = 0;
  }
  RAResult res;
  res.candidates = static_cast<std::int64_t>(cand.size());
  auto cmp = [&g](const Item& x, const Item& y) { return x.p != y.p ? x.p > y.p : g.before(x.b, y.b); };
  if (k > 0 && static_cast<std::size_t>(k) < cand.size()) {
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), cmp);
    cand.resize(static_cast<std::size_t>(k));
  } else {
    std::sort(cand.begin(), cand.end(), cmp);
  }
  for (const Item& it : cand) {
    res.targets.push_back(it.b);
    res.scores.push_back(it.p);
  }
  res.shared_ptr.push_back(0);
  for (node_t b : res.targets) {
    const node_t* bb;
    const node_t* be;
    g.row(b, bb, be);
    for (; bb != be; ++bb)
      if ((flag[*bb] & kExcluded) && CSRGraph::visible(*bb, vis)) res.shared.push_back(*bb);
    res.shared_ptr.push_back(static_cast<std::int64_t>(res.shared.size()));
  }
  touched.clear();
  flag[a] = 0;
  for (const node_t* p = ab; p != ae; ++p) flag[*p] = 0;
  return res;
}

}  // namespace

RAResult resource_allocation(const GraphRef& g, const Visibility& vis, node_t a, std::int64_t min_shared,
                             std::int64_t k) {
  check_node(g, vis, a, "node");
  check_min_shared(min_shared);
  if (g.delta() && (vis.vindptr || (vis.mask && !vis.delta)))
    throw InvalidArgument("a graph with a delta reads a mask with its delta's part (a LiveVisibility)");
  if (g.delta()) return resource_allocation_delta(g, vis, a, min_shared, k);

  RAScratch& ws = ra_scratch(g.num_nodes());
  const offset_t* indptr = g.base().indptr();
  const node_t* indices = g.base().indices();
  std::uint8_t* const flag = ws.flag.data();
  double* const score = ws.score.data();
  std::int32_t* const count = ws.count.data();
  std::vector<node_t>& touched = ws.touched;
  std::vector<node_t>& listed = ws.listed;
  touched.clear();
  listed.clear();
  // flag bit 2 = a or a neighbour of a (excluded), bit 0 = candidate (score and count valid).
  constexpr std::uint8_t kCand = 1, kExcluded = 4;
  flag[a] = kExcluded;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) flag[indices[j]] = kExcluded;
  const std::uint8_t* mask = vis.mask;
  const offset_t a0 = indptr[a], a1 = indptr[a + 1];
  // A hub's neighbours' rows are scattered: fetch row offsets 8 neighbours ahead, the row
  // itself 4 ahead and the tallies of its entries 2 ahead (prefetches do not change results).
  const bool far = a1 - a0 > 64;
  for (offset_t j = a0; j < a1; ++j) {
    if (far) {
      if (j + 8 < a1) CW_PREFETCH(&indptr[indices[j + 8]]);
      if (j + 4 < a1) CW_PREFETCH(&indices[indptr[indices[j + 4]]]);
      if (j + 2 < a1) {
        const node_t z2 = indices[j + 2];
        for (offset_t t = indptr[z2], te = indptr[z2 + 1]; t < te; ++t) CW_PREFETCH(&score[indices[t]]);
      }
    }
    const node_t z = indices[j];
    if (!CSRGraph::visible(z, vis)) continue;
    const double w = 1.0 / static_cast<double>(g.base().degree(z, vis));
    for (offset_t t = indptr[z], te = indptr[z + 1]; t < te; ++t) {
      const node_t b = indices[t];
      const std::uint8_t f = flag[b];
      if ((f & kExcluded) || (mask && !mask[b])) continue;
      if (!(f & kCand)) {
        flag[b] = kCand;
        touched.push_back(b);
      }
      const std::int32_t c = ++count[b];
      score[b] += w;
      if (c == min_shared) listed.push_back(b);  // becomes a candidate
    }
  }
  RAResult res;
  struct Item {
    double p;
    node_t b;
  };
  // Candidates were listed when their shared count reached min_shared (in another order than
  // touched; the sort below is a total order, so the result is the same). Copy their scores
  // out, then clean every touched slot with stores only (no load to wait for).
  std::vector<Item> cand;
  cand.reserve(listed.size());
  for (node_t b : listed) cand.push_back(Item{score[b], b});
  listed.clear();
  for (node_t b : touched) {
    flag[b] = 0;
    score[b] = 0.0;
    count[b] = 0;
  }
  res.candidates = static_cast<std::int64_t>(cand.size());
  auto cmp = [](const Item& x, const Item& y) { return x.p != y.p ? x.p > y.p : x.b < y.b; };
  if (k > 0 && static_cast<std::size_t>(k) < cand.size()) {
    std::partial_sort(cand.begin(), cand.begin() + k, cand.end(), cmp);
    cand.resize(static_cast<std::size_t>(k));
  } else {
    std::sort(cand.begin(), cand.end(), cmp);
  }
  res.targets.reserve(cand.size());
  res.scores.reserve(cand.size());
  for (const Item& it : cand) {
    res.targets.push_back(it.b);
    res.scores.push_back(it.p);
  }
  res.shared_ptr.reserve(cand.size() + 1);
  res.shared_ptr.push_back(0);
  for (node_t b : res.targets) {
    // Shared neighbours: b's row (ascending) filtered by the "neighbour of a" flag, which is
    // still set; O(deg(b)) instead of merging with a's whole row. b is not adjacent to a, so a
    // itself (also flagged) never appears in b's row.
    for (offset_t j = indptr[b]; j < indptr[b + 1]; ++j) {
      const node_t x = indices[j];
      if ((flag[x] & kExcluded) && CSRGraph::visible(x, vis)) res.shared.push_back(x);
    }
    res.shared_ptr.push_back(static_cast<std::int64_t>(res.shared.size()));
  }
  // Clean the workspace (candidate slots were cleaned when collected).
  touched.clear();
  flag[a] = 0;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) flag[indices[j]] = 0;
  return res;
}

namespace {

// Per-thread marks of rooted PageRank suggestion, grown on demand and clean between queries
// (zeros): bit 0 = the query node or one of its visible neighbours (excluded, and at two hops the
// shared neighbours), bit 1 = a target with no shared neighbour (farther than two hops).
struct PPRScratch {
  RawVector<std::uint8_t> flag;
  std::vector<node_t> excl, far;
  void ensure(std::size_t n) {
    if (flag.size() >= n) return;
    const std::size_t old = flag.size();
    flag.resize(n);
    for (std::size_t i = old; i < n; ++i) flag[i] = 0;
  }
};

PPRScratch& ppr_scratch(node_t n) {
  thread_local PPRScratch ws;
  ws.ensure(static_cast<std::size_t>(n));
  return ws;
}

}  // namespace

RAResult ppr_suggest(const CSRGraph& g, const Visibility& vis, node_t a, const PPRParams& params, std::int64_t k) {
  check_node(g, vis, a, "node");
  const offset_t* indptr = g.indptr();
  const node_t* indices = g.indices();
  PPRScratch& ws = ppr_scratch(g.num_nodes());
  std::uint8_t* const flag = ws.flag.data();
  constexpr std::uint8_t kExcluded = 1, kFar = 2;
  // Excluded: a and its visible neighbours, ascending (a's row is ascending and has no a).
  std::vector<node_t>& excl = ws.excl;
  excl.clear();
  bool placed = false;
  for (offset_t j = indptr[a]; j < indptr[a + 1]; ++j) {
    const node_t z = indices[j];
    if (!CSRGraph::visible(z, vis)) continue;
    if (!placed && a < z) {
      excl.push_back(a);
      placed = true;
    }
    excl.push_back(z);
  }
  if (!placed) excl.push_back(a);
  FillTarget target;
  target.k = k > 0 ? k : 1;
  target.exclude = excl.data();
  target.num_exclude = static_cast<std::int64_t>(excl.size());
  const double one = 1.0;
  // The top k + |excl| PPR nodes hold the top k candidates (k <= 0: rank all).
  const std::int64_t k_rank = k > 0 ? k + static_cast<std::int64_t>(excl.size()) : 0;
  PPRResult r = personalized_pagerank_fill(g, vis, 1, &a, &one, params, k_rank, target);
  // Marked after the push (which validated the parameters); cleaned however this returns.
  std::vector<node_t>& far = ws.far;
  far.clear();
  struct Clean {
    std::uint8_t* flag;
    const std::vector<node_t>& a;
    const std::vector<node_t>& b;
    ~Clean() {
      for (node_t v : a) flag[v] = 0;
      for (node_t v : b) flag[v] = 0;
    }
  } clean{flag, excl, far};
  for (node_t z : excl) flag[z] = kExcluded;
  RAResult res;
  res.eps = r.eps;
  res.fill_spent = r.fill_spent;
  res.truncated = r.truncated;
  res.candidates = r.results;
  const std::size_t want = k > 0 ? static_cast<std::size_t>(k) : r.nodes.size();
  res.targets.reserve(std::min(want, r.nodes.size()));
  res.scores.reserve(std::min(want, r.nodes.size()));
  for (std::size_t j = 0; j < r.nodes.size() && res.targets.size() < want; ++j) {
    const node_t v = r.nodes[j];
    if (flag[v] & kExcluded) continue;
    res.targets.push_back(v);
    res.scores.push_back(r.scores[j]);
  }
  const std::size_t m = res.targets.size();
  res.hops.resize(m);
  res.shared_ptr.reserve(m + 1);
  res.shared_ptr.push_back(0);
  // Two hops exactly when b's row holds a visible neighbour of a (then those are the shared
  // neighbours, ascending; a itself is not in the row: b is no neighbour of a). Flagged nodes
  // are visible.
  for (std::size_t j = 0; j < m; ++j) {
    const node_t b = res.targets[j];
    const std::size_t s0 = res.shared.size();
    for (offset_t t = indptr[b]; t < indptr[b + 1]; ++t) {
      const node_t x = indices[t];
      if ((flag[x] & kExcluded) && x != a) res.shared.push_back(x);
    }
    if (res.shared.size() == s0) {
      far.push_back(b);
      flag[b] |= kFar;
    }
    res.shared_ptr.push_back(static_cast<std::int64_t>(res.shared.size()));
  }
  // The chains of the farther targets (p > 0 only within a's component, so each has one): one
  // BFS from a for all of them, within the push's own work (its row visits); a target it does
  // not reach within that budget (a hub's row on the way) gets shortest_path's bidirectional
  // BFS. Both give shortest_path's chain.
  ChainsResult chains;
  if (!far.empty())
    chains = shortest_paths_from(g, vis, a, static_cast<std::int64_t>(far.size()), far.data(),
                                 std::max<std::int64_t>(r.edge_visits, 64));
  res.path_ptr.reserve(m + 1);
  res.path_ptr.push_back(0);
  res.path.reserve(3 * m);
  std::size_t f = 0;
  for (std::size_t j = 0; j < m; ++j) {
    const node_t b = res.targets[j];
    if (!(flag[b] & kFar)) {
      res.hops[j] = 2;
      res.path.insert(res.path.end(), {a, res.shared[static_cast<std::size_t>(res.shared_ptr[j])], b});
    } else {
      const auto c0 = static_cast<std::size_t>(chains.ptr[f]), c1 = static_cast<std::size_t>(chains.ptr[f + 1]);
      ++f;
      if (c1 > c0) {
        res.hops[j] = static_cast<std::int32_t>(c1 - c0) - 1;
        res.path.insert(res.path.end(), chains.path.begin() + static_cast<std::ptrdiff_t>(c0),
                        chains.path.begin() + static_cast<std::ptrdiff_t>(c1));
      } else {
        const PathResult p = shortest_path(g, vis, a, b);
        res.hops[j] = static_cast<std::int32_t>(p.path.size()) - 1;
        res.path.insert(res.path.end(), p.path.begin(), p.path.end());
      }
    }
    res.path_ptr.push_back(static_cast<std::int64_t>(res.path.size()));
  }
  return res;
}

}  // namespace cw
