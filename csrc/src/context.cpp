#include "conceptwalk/context.hpp"

#include <algorithm>
#include <string>

#include "conceptwalk/batch.hpp"
#include "conceptwalk/check.hpp"
#include "conceptwalk/paths.hpp"

namespace cw {

namespace {

ContextResult run_context(const CSRGraph& g, const Visibility& vis, std::int64_t ns, const node_t* qs,
                          const double* w, const PPRParams& params, std::int64_t k,
                          const NodeTypeFilter& filter) {
  // Without a type filter the top k + nseeds PPR nodes hold the top k non-seeds; with one, any
  // number of nodes may be filtered out, so rank all.
  const std::int64_t want = filter.node_type ? 0 : k + ns;
  PPRResult r = personalized_pagerank(g, vis, ns, qs, w, params, want);
  ContextResult o;
  o.residual = r.residual;
  o.pushes = r.pushes;
  const std::int32_t* ntype = filter.node_type;
  for (std::size_t j = 0; j < r.nodes.size() && static_cast<std::int64_t>(o.nodes.size()) < k; ++j) {
    const node_t v = r.nodes[j];
    if (std::binary_search(qs, qs + ns, v)) continue;
    if (ntype && (ntype[v] < 0 || ntype[v] >= filter.num_keep || !filter.keep[ntype[v]])) continue;
    o.nodes.push_back(v);
    o.scores.push_back(r.scores[j]);
  }
  if (!o.nodes.empty()) {
    HopsResult h = multi_source_hops(g, vis, ns, qs, static_cast<std::int64_t>(o.nodes.size()),
                                     o.nodes.data(), -1);
    o.hops = std::move(h.hops);
    o.via = std::move(h.via);
  }
  return o;
}

}  // namespace

void validate_context(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                      const node_t* seeds, const double* weights, const PPRParams& params,
                      std::int64_t k) {
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  validate_ppr(g, vis, nseeds, seeds, weights, params);
  for (std::int64_t j = 1; j < nseeds; ++j)
    if (seeds[j] <= seeds[j - 1]) throw InvalidArgument("seeds of each query must be strictly ascending");
}

ContextResult graph_context(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                            const node_t* seeds, const double* weights, const PPRParams& params,
                            std::int64_t k, const NodeTypeFilter& filter) {
  validate_context(g, vis, nseeds, seeds, weights, params, k);
  return run_context(g, vis, nseeds, seeds, weights, params, k, filter);
}

ContextBatch graph_context_batch(const CSRGraph& g, const Visibility& vis, std::int64_t ptr_size,
                                 const std::int64_t* seed_ptr, std::int64_t nseeds,
                                 const node_t* seeds, const double* weights,
                                 const PPRParams& params, std::int64_t k,
                                 const NodeTypeFilter& filter, int threads) {
  const std::int64_t q = check_ptr(seed_ptr, ptr_size, nseeds, "seed_ptr");
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  for (std::int64_t i = 0; i < q; ++i)
    validate_context(g, vis, seed_ptr[i + 1] - seed_ptr[i], seeds + seed_ptr[i], weights + seed_ptr[i],
                     params, k);
  std::vector<ContextResult> res(static_cast<std::size_t>(q));
  parallel_for(q, threads, [&](std::int64_t i) {
    res[i] = run_context(g, vis, seed_ptr[i + 1] - seed_ptr[i], seeds + seed_ptr[i], weights + seed_ptr[i],
                         params, k, filter);
  });
  ContextBatch out;
  const std::size_t Q = static_cast<std::size_t>(q);
  out.ptr.assign(Q + 1, 0);
  out.residual.resize(Q);
  out.pushes.resize(Q);
  std::vector<const std::vector<node_t>*> np(Q), vp(Q);
  std::vector<const std::vector<double>*> sp(Q);
  std::vector<const std::vector<std::int32_t>*> hp(Q);
  for (std::size_t i = 0; i < Q; ++i) {
    out.ptr[i + 1] = out.ptr[i] + static_cast<std::int64_t>(res[i].nodes.size());
    out.residual[i] = res[i].residual;
    out.pushes[i] = res[i].pushes;
    np[i] = &res[i].nodes;
    vp[i] = &res[i].via;
    sp[i] = &res[i].scores;
    hp[i] = &res[i].hops;
  }
  out.nodes = concat_parts(out.ptr, np);
  out.scores = concat_parts(out.ptr, sp);
  out.hops = concat_parts(out.ptr, hp);
  out.via = concat_parts(out.ptr, vp);
  return out;
}

}  // namespace cw
