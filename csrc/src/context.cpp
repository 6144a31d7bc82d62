#include "conceptwalk/context.hpp"

#include <algorithm>
#include <array>
#include <string>

#include "conceptwalk/batch.hpp"
#include "conceptwalk/check.hpp"
#include "conceptwalk/path.hpp"
#include "conceptwalk/workspace.hpp"

namespace cw {

namespace {

// Coverage pass: a depth-bounded BFS (max_hops layers over the visible graph) from each seed in
// ascending order, its budget spent level by level across all seeds: the pass completes radius r
// only if the BFS from every seed to depth r reads at most `max_visits` visible adjacency entries
// in total (level d reads the rows of the nodes at depth d - 1). The visits are counted per level
// over the seeds done so far; once the levels up to the current radius R would exceed the budget,
// R drops to the last level that fits and every later seed is searched to depth R only (R never
// grows back, so a seed searched deeper earlier only had its deeper pairs dropped). The result is
// the exact coverage at radius R (`radius`, == max_hops unless truncated): what a level-by-level
// pass (every seed's first hop before any seed's second) gets when it stops at the first level it
// cannot finish. The work is at most (max_hops + 1) * max_visits entries: the levels dropped at
// each of the at most max_hops drops were within the budget when read.
// Per candidate (a visible non-seed node within R of some seed) its count of seeds goes into
// ws.ia (clean -1) and each (candidate, seed) pair into `pairs`, in seed order, with the seed's
// distance in `pdist`; `near` counts each candidate's seeds at 1 and at 2 hops. ws.ib (clean -1)
// holds the current seed's distances, then the candidates' positions. Every entry touched is
// reset at the end: no O(n) clearing.
struct CoverPass {
  std::vector<node_t> cand;                       // ascending
  std::vector<std::int32_t> cov;                  // aligned with cand
  std::vector<std::pair<node_t, node_t>> pairs;   // (candidate, seed), seeds ascending
  std::vector<std::int32_t> pdist;                // aligned with pairs: hops from the seed
  std::vector<std::array<std::int32_t, 2>> near;  // aligned with cand: seeds at 1 hop, at 2 hops
  bool truncated = false;
  std::int32_t radius = 0;  // the radius the coverage is exact for
  std::int64_t visits = 0;  // adjacency entries read (dropped levels included)
};

// The seeds (ascending in g's order) hold v.
inline bool is_seed(const GraphRef& g, std::int64_t ns, const node_t* qs, node_t v) {
  if (!g.delta()) return std::binary_search(qs, qs + ns, v);
  return std::binary_search(qs, qs + ns, v, [&](node_t x, node_t y) { return g.before(x, y); });
}

CoverPass coverage_pass(const GraphRef& g, const Visibility& vis, std::int64_t ns, const node_t* qs,
                        const RankParams& rp) {
  Workspace& ws = thread_workspace(g.num_nodes(), Workspace::kWorkspaceMarks);
  std::int32_t* cnt = ws.ia.data();
  std::int32_t* dist = ws.ib.data();
  const offset_t* rptr = (vis.mask && vis.vindptr) ? vis.vindptr : g.base().indptr();
  const node_t* idx = (vis.mask && vis.vindptr) ? vis.vindices : g.base().indices();
  const std::uint8_t* mask = (vis.mask && !vis.vindptr) ? vis.mask : nullptr;
  const bool delta = g.delta() != nullptr;
  CoverPass out;
  std::vector<node_t>& seen = ws.tmp;
  std::vector<node_t>& frontier = ws.queue;
  std::vector<node_t>& next = ws.next;
  std::int32_t R = rp.max_hops;
  std::array<std::int64_t, kMaxCoverageHops + 1> level{};  // visits per level, seeds so far
  std::int64_t used = 0;                                   // level[1] + ... + level[R]
  std::vector<std::pair<node_t, node_t>> raw;              // (candidate, seed) at any depth
  std::vector<std::int32_t> rdist;
  for (std::int64_t i = 0; i < ns && R > 0; ++i) {
    const node_t s = qs[i];
    seen.clear();
    frontier.clear();
    dist[s] = 0;
    seen.push_back(s);
    frontier.push_back(s);
    bool cut = false;
    for (std::int32_t d = 1; d <= R && !frontier.empty() && !cut; ++d) {
      next.clear();
      for (const node_t u : frontier) {
        const node_t* jb;
        const node_t* je;
        if (delta) {
          g.row(u, jb, je);
        } else {
          jb = idx + rptr[u];
          je = idx + rptr[u + 1];
        }
        for (; jb != je; ++jb) {
          const node_t v = *jb;
          if (mask && (delta ? !CSRGraph::visible(v, vis) : !mask[v])) continue;
          if (used >= rp.max_visits) {
            // This entry (level d) does not fit with levels 1..R: drop the deepest levels until
            // it does. If even level d must go, the radius is d - 1 (its levels fit: they were
            // within the budget before) and this seed is done.
            out.truncated = true;
            used -= level[static_cast<std::size_t>(R)];
            --R;
            while (R >= d && used >= rp.max_visits) {
              used -= level[static_cast<std::size_t>(R)];
              --R;
            }
            if (R < d) {
              cut = true;
              break;
            }
          }
          ++used;
          ++level[static_cast<std::size_t>(d)];
          ++out.visits;
          if (dist[v] < 0) {
            dist[v] = d;
            seen.push_back(v);
            next.push_back(v);
          }
        }
        if (cut) break;
      }
      frontier.swap(next);
    }
    for (const node_t v : seen) {
      const std::int32_t dv = dist[v];
      dist[v] = -1;
      if (dv > R || is_seed(g, ns, qs, v)) continue;
      raw.emplace_back(v, s);
      rdist.push_back(dv);
    }
  }
  out.radius = R;
  // The pairs within the final radius (an earlier seed may have been searched deeper).
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (rdist[i] > R) continue;
    const node_t v = raw[i].first;
    if (cnt[v] < 0) {
      cnt[v] = 0;
      out.cand.push_back(v);
    }
    ++cnt[v];
    out.pairs.push_back(raw[i]);
    out.pdist.push_back(rdist[i]);
  }
  std::sort(out.cand.begin(), out.cand.end());
  out.cov.resize(out.cand.size());
  for (std::size_t j = 0; j < out.cand.size(); ++j) {
    out.cov[j] = cnt[out.cand[j]];
    cnt[out.cand[j]] = -1;
    dist[out.cand[j]] = static_cast<std::int32_t>(j);
  }
  out.near.assign(out.cand.size(), {0, 0});
  for (std::size_t i = 0; i < out.pairs.size(); ++i) {
    if (out.pdist[i] <= 2) ++out.near[static_cast<std::size_t>(dist[out.pairs[i].first])][out.pdist[i] - 1];
  }
  for (const node_t v : out.cand) dist[v] = -1;
  seen.clear();
  frontier.clear();
  next.clear();
  return out;
}

void add_hops(const GraphRef& g, const Visibility& vis, std::int64_t ns, const node_t* qs, ContextResult& o) {
  if (o.nodes.empty()) return;
  HopsResult h = multi_source_hops(g, vis, ns, qs, static_cast<std::int64_t>(o.nodes.size()), o.nodes.data(), -1);
  o.hops = std::move(h.hops);
  o.via = std::move(h.via);
}

ContextResult run_coverage(const GraphRef& g, const Visibility& vis, std::int64_t ns, const node_t* qs,
                           const double* w, const PPRParams& params, std::int64_t k, const NodeTypeFilter& filter,
                           const RankParams& rp) {
  const FillTarget target{k, filter};
  PPRResult r = personalized_pagerank_fill(g, vis, ns, qs, w, params, 0, target);
  CoverPass cp = coverage_pass(g, vis, ns, qs, rp);
  ContextResult o;
  o.residual = r.residual;
  o.pushes = r.pushes;
  o.edge_visits = r.edge_visits;
  o.eps = r.eps;
  o.fill_spent = r.fill_spent;
  o.push_truncated = r.truncated;
  o.truncated = cp.truncated;
  o.radius = cp.radius;
  o.visits = cp.visits;
  // PPR scores of the candidates: the PPR's nodes by index, merged with the ascending candidates.
  std::vector<std::pair<node_t, double>> ps(r.nodes.size());
  for (std::size_t j = 0; j < r.nodes.size(); ++j) ps[j] = {r.nodes[j], r.scores[j]};
  std::sort(ps.begin(), ps.end());
  // Ties of coverage go to the candidate with more seeds at 1 hop, then at 2 hops (closer seeds
  // first), then to the higher PPR score per visible degree: on an undirected graph
  // p_s(v) / deg(v) = p_v(s) / deg(s), the mass a walk from v itself returns to the seeds, so a
  // specific node (a small category all of whose members are seeds) beats a hub that the same
  // seeds reach among many others. A candidate is reached over a visible edge: deg >= 1.
  struct Item {
    std::int32_t cov;
    std::array<std::int32_t, 2> near;  // seeds at 1 hop, at 2 hops
    double q;                          // p / deg(v)
    double p;
    node_t v;
  };
  std::vector<Item> items;
  items.reserve(cp.cand.size());
  std::size_t a = 0;
  for (std::size_t j = 0; j < cp.cand.size(); ++j) {
    const node_t v = cp.cand[j];
    while (a < ps.size() && ps[a].first < v) ++a;
    const double p = (a < ps.size() && ps[a].first == v) ? ps[a].second : 0.0;
    if (filter.keeps(v))
      items.push_back(Item{cp.cov[j], cp.near[j], p / static_cast<double>(g.degree(v, vis)), p, v});
  }
  auto better = [&g](const Item& x, const Item& y) {
    if (x.cov != y.cov) return x.cov > y.cov;
    if (x.near != y.near) return x.near > y.near;
    if (x.q != y.q) return x.q > y.q;
    return g.before(x.v, y.v);
  };
  const std::size_t m = std::min(items.size(), static_cast<std::size_t>(k));
  std::partial_sort(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(m), items.end(), better);
  o.nodes.resize(m);
  o.scores.resize(m);
  o.coverage.resize(m);
  o.cover_ptr.assign(m + 1, 0);
  for (std::size_t j = 0; j < m; ++j) {
    o.nodes[j] = items[j].v;
    o.scores[j] = items[j].p;
    o.coverage[j] = items[j].cov;
    o.cover_ptr[j + 1] = o.cover_ptr[j] + items[j].cov;
  }
  // The seeds of each result: its position in ws.ib (clean -1), then the pairs in seed order.
  Workspace& ws = thread_workspace(g.num_nodes(), Workspace::kWorkspaceMarks);
  std::int32_t* pos = ws.ib.data();
  for (std::size_t j = 0; j < m; ++j) pos[o.nodes[j]] = static_cast<std::int32_t>(j);
  o.cover_seeds.resize(static_cast<std::size_t>(o.cover_ptr[m]));
  std::vector<std::int64_t> fill(o.cover_ptr.begin(), o.cover_ptr.end() - 1);
  for (const auto& pr : cp.pairs) {
    const std::int32_t j = pos[pr.first];
    if (j >= 0) o.cover_seeds[static_cast<std::size_t>(fill[j]++)] = pr.second;
  }
  for (std::size_t j = 0; j < m; ++j) pos[o.nodes[j]] = -1;
  add_hops(g, vis, ns, qs, o);
  return o;
}

ContextResult run_context(const GraphRef& g, const Visibility& vis, std::int64_t ns, const node_t* qs,
                          const double* w, const PPRParams& params, std::int64_t k, const NodeTypeFilter& filter,
                          const RankParams& rp) {
  if (rp.rank == Rank::kCoverage) return run_coverage(g, vis, ns, qs, w, params, k, filter, rp);
  // Without a type filter the top k + nseeds PPR nodes hold the top k non-seeds; with one, any
  // number of nodes may be filtered out, so rank all.
  const std::int64_t want = filter.node_type ? 0 : k + ns;
  const FillTarget target{k, filter};
  PPRResult r = personalized_pagerank_fill(g, vis, ns, qs, w, params, want, target);
  ContextResult o;
  o.residual = r.residual;
  o.pushes = r.pushes;
  o.edge_visits = r.edge_visits;
  o.eps = r.eps;
  o.fill_spent = r.fill_spent;
  o.push_truncated = r.truncated;
  for (std::size_t j = 0; j < r.nodes.size() && static_cast<std::int64_t>(o.nodes.size()) < k; ++j) {
    const node_t v = r.nodes[j];
    if (is_seed(g, ns, qs, v)) continue;
    if (!filter.keeps(v)) continue;
    o.nodes.push_back(v);
    o.scores.push_back(r.scores[j]);
  }
  add_hops(g, vis, ns, qs, o);
  return o;
}

}  // namespace

void validate_context(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                      const double* weights, const PPRParams& params, std::int64_t k) {
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  validate_ppr(g, vis, nseeds, seeds, weights, params);
  for (std::int64_t j = 1; j < nseeds; ++j)
    if (!g.before(seeds[j - 1], seeds[j]))
      throw InvalidArgument(g.delta() ? "seeds of each query must be strictly ascending in the graph's order"
                                      : "seeds of each query must be strictly ascending");
}

void validate_rank(const RankParams& rank) {
  if (rank.rank != Rank::kPPR && rank.rank != Rank::kCoverage)
    throw InvalidArgument("rank must be 0 (ppr) or 1 (coverage)");
  if (rank.max_hops < 1 || rank.max_hops > kMaxCoverageHops)
    throw InvalidArgument("max_hops must be in 1.." + std::to_string(kMaxCoverageHops) + ", got " +
                          std::to_string(rank.max_hops));
  if (rank.max_visits < 1)
    throw InvalidArgument("max_visits must be >= 1, got " + std::to_string(rank.max_visits));
}

ContextResult graph_context(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                            const double* weights, const PPRParams& params, std::int64_t k,
                            const NodeTypeFilter& filter, const RankParams& rank) {
  validate_context(g, vis, nseeds, seeds, weights, params, k);
  validate_rank(rank);
  return run_context(g, vis, nseeds, seeds, weights, params, k, filter, rank);
}

ContextResult graph_context_text(const CSRGraph& g, const Visibility& vis, const TextSeeds& text,
                                 std::int64_t nconcepts, const node_t* concepts, const PPRParams& params,
                                 std::int64_t k, const NodeTypeFilter& filter, const RankParams& rank) {
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  validate_rank(rank);
  if (text.index == nullptr) throw InvalidArgument("text: no index");
  if (text.index->num_docs != g.num_nodes())
    throw InvalidArgument("text: the index has " + std::to_string(text.index->num_docs) +
                          " documents, the graph " + std::to_string(g.num_nodes()) + " nodes");
  if (text.n_hits < 1) throw InvalidArgument("n_hits must be >= 1, got " + std::to_string(text.n_hits));
  if (nconcepts < 0) throw InvalidArgument("concepts: negative count");
  for (std::int64_t i = 0; i < nconcepts; ++i) {
    const node_t c = concepts[i];
    if (c < 0 || c >= g.num_nodes())
      throw InvalidArgument("concepts[" + std::to_string(i) + "] = " + std::to_string(c) + " is outside [0, " +
                            std::to_string(g.num_nodes()) + ")");
    if (vis.mask && !vis.mask[c])
      throw InvalidArgument("concepts[" + std::to_string(i) + "] = " + std::to_string(c) + " is not visible");
  }
  ContextResult out;
  out.eps = params.eps;
  if (text.num_terms > 0) {
    TextHits h =
        bm25_topk(*text.index, text.terms, text.num_terms, text.n_hits, vis.mask, nullptr, text.stats, text.bm25);
    out.hits = std::move(h.docs);
  }
  // Seeds: the hits by rank (1/rank), then the concepts in the given order (1 each, repeats one
  // seed). A stable sort by node keeps a node's hit before its concepts, so its weight is summed
  // in the order the definition gives (1/rank, then + 1), bit for bit.
  struct Entry {
    node_t node;
    double weight;
    bool concept;
  };
  std::vector<Entry> seeds;
  seeds.reserve(out.hits.size() + static_cast<std::size_t>(nconcepts));
  for (std::size_t r = 0; r < out.hits.size(); ++r)
    seeds.push_back({out.hits[r], 1.0 / static_cast<double>(r + 1), false});
  for (std::int64_t i = 0; i < nconcepts; ++i) seeds.push_back({concepts[i], 1.0, true});
  if (seeds.empty()) {
    out.seeded = false;
    return out;
  }
  std::stable_sort(seeds.begin(), seeds.end(), [](const Entry& a, const Entry& b) { return a.node < b.node; });
  std::vector<node_t> qs;
  std::vector<double> w;
  qs.reserve(seeds.size());
  w.reserve(seeds.size());
  bool has_concept = false;  // the current node already has its concept weight
  for (const Entry& e : seeds) {
    if (!qs.empty() && qs.back() == e.node) {
      if (e.concept && !has_concept) w.back() += e.weight;
      has_concept = has_concept || e.concept;
    } else {
      qs.push_back(e.node);
      w.push_back(e.weight);
      has_concept = e.concept;
    }
  }
  validate_context(g, vis, static_cast<std::int64_t>(qs.size()), qs.data(), w.data(), params, k);
  ContextResult r =
      run_context(g, vis, static_cast<std::int64_t>(qs.size()), qs.data(), w.data(), params, k, filter, rank);
  r.hits = std::move(out.hits);
  return r;
}

ContextBatch graph_context_batch(const CSRGraph& g, const Visibility& vis, std::int64_t ptr_size,
                                 const std::int64_t* seed_ptr, std::int64_t nseeds, const node_t* seeds,
                                 const double* weights, const PPRParams& params, std::int64_t k,
                                 const NodeTypeFilter& filter, int threads, const RankParams& rank) {
  const std::int64_t q = check_ptr(seed_ptr, ptr_size, nseeds, "seed_ptr");
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  validate_rank(rank);
  for (std::int64_t i = 0; i < q; ++i)
    validate_context(g, vis, seed_ptr[i + 1] - seed_ptr[i], seeds + seed_ptr[i], weights + seed_ptr[i], params, k);
  std::vector<ContextResult> res(static_cast<std::size_t>(q));
  parallel_for(q, threads, [&](std::int64_t i) {
    res[i] = run_context(g, vis, seed_ptr[i + 1] - seed_ptr[i], seeds + seed_ptr[i], weights + seed_ptr[i], params,
                         k, filter, rank);
  });
  ContextBatch out;
  const std::size_t Q = static_cast<std::size_t>(q);
  out.ptr.assign(Q + 1, 0);
  out.residual.resize(Q);
  out.pushes.resize(Q);
  out.edge_visits.resize(Q);
  out.eps.resize(Q);
  out.fill_spent.resize(Q);
  out.truncated.resize(Q);
  out.push_truncated.resize(Q);
  out.radius.resize(Q);
  out.visits.resize(Q);
  const bool cover = rank.rank == Rank::kCoverage;
  std::vector<const std::vector<node_t>*> np(Q), vp(Q);
  std::vector<const std::vector<double>*> sp(Q);
  std::vector<const std::vector<std::int32_t>*> hp(Q);
  for (std::size_t i = 0; i < Q; ++i) {
    out.ptr[i + 1] = out.ptr[i] + static_cast<std::int64_t>(res[i].nodes.size());
    out.residual[i] = res[i].residual;
    out.pushes[i] = res[i].pushes;
    out.edge_visits[i] = res[i].edge_visits;
    out.eps[i] = res[i].eps;
    out.fill_spent[i] = res[i].fill_spent;
    out.truncated[i] = res[i].truncated;
    out.push_truncated[i] = res[i].push_truncated;
    out.radius[i] = res[i].radius;
    out.visits[i] = res[i].visits;
    np[i] = &res[i].nodes;
    vp[i] = &res[i].via;
    sp[i] = &res[i].scores;
    hp[i] = &res[i].hops;
  }
  out.nodes = concat_parts(out.ptr, np);
  out.scores = concat_parts(out.ptr, sp);
  out.hops = concat_parts(out.ptr, hp);
  out.via = concat_parts(out.ptr, vp);
  if (cover) {
    out.coverage.reserve(out.nodes.size());
    out.cover_ptr.assign(1, 0);
    for (std::size_t i = 0; i < Q; ++i) {
      const ContextResult& r = res[i];
      out.coverage.insert(out.coverage.end(), r.coverage.begin(), r.coverage.end());
      const std::int64_t base = out.cover_ptr.back();
      for (std::size_t j = 1; j < r.cover_ptr.size(); ++j) out.cover_ptr.push_back(base + r.cover_ptr[j]);
      out.cover_seeds.insert(out.cover_seeds.end(), r.cover_seeds.begin(), r.cover_seeds.end());
    }
  }
  return out;
}

}  // namespace cw
