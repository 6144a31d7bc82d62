#include "conceptwalk/batch.hpp"

#include "conceptwalk/check.hpp"

namespace cw {

PPRBatch personalized_pagerank_batch(const CSRGraph& g, const Visibility& vis, std::int64_t ptr_size,
                                     const std::int64_t* seed_ptr, std::int64_t nseeds, const node_t* seeds,
                                     const double* weights, const PPRParams& params, std::int64_t k, int threads) {
  const std::int64_t q = check_ptr(seed_ptr, ptr_size, nseeds, "seed_ptr");
  for (std::int64_t i = 0; i < q; ++i)  // validate every query before any work
    validate_ppr(g, vis, seed_ptr[i + 1] - seed_ptr[i], seeds + seed_ptr[i], weights + seed_ptr[i], params);
  std::vector<PPRResult> res(static_cast<std::size_t>(q));
  parallel_for(q, threads, [&](std::int64_t i) {
    res[i] = personalized_pagerank(g, vis, seed_ptr[i + 1] - seed_ptr[i], seeds + seed_ptr[i],
                                   weights + seed_ptr[i], params, k);
  });
  PPRBatch out;
  const std::size_t Q = static_cast<std::size_t>(q);
  out.ptr.assign(Q + 1, 0);
  out.residual.resize(Q);
  out.eps.resize(Q);
  out.pushes.resize(Q);
  out.edge_visits.resize(Q);
  out.truncated.resize(Q);
  std::vector<const std::vector<node_t>*> np(Q);
  std::vector<const std::vector<double>*> sp(Q);
  for (std::size_t i = 0; i < Q; ++i) {
    out.ptr[i + 1] = out.ptr[i] + static_cast<std::int64_t>(res[i].nodes.size());
    out.residual[i] = res[i].residual;
    out.eps[i] = res[i].eps;
    out.pushes[i] = res[i].pushes;
    out.edge_visits[i] = res[i].edge_visits;
    out.truncated[i] = res[i].truncated ? 1 : 0;
    np[i] = &res[i].nodes;
    sp[i] = &res[i].scores;
  }
  out.nodes = concat_parts(out.ptr, np);
  out.scores = concat_parts(out.ptr, sp);
  return out;
}

namespace {

// The q results of either suggestion method as one batch (PPR's hops, paths and eps included when
// the results carry them: path_ptr is set exactly for PPR results).
RABatch concat_suggestions(const std::vector<RAResult>& res, bool ppr) {
  RABatch out;
  const std::size_t Q = res.size();
  out.ptr.assign(Q + 1, 0);
  out.candidates.resize(Q);
  std::size_t nshared = 0, npath = 0;
  for (std::size_t i = 0; i < Q; ++i) {
    out.ptr[i + 1] = out.ptr[i] + static_cast<std::int64_t>(res[i].targets.size());
    out.candidates[i] = res[i].candidates;
    nshared += res[i].shared.size();
    npath += res[i].path.size();
  }
  const std::size_t total = static_cast<std::size_t>(out.ptr[Q]);
  out.targets.resize(total);
  out.scores.resize(total);
  out.shared_ptr.assign(total + 1, 0);
  out.shared.reserve(nshared);
  if (ppr) {
    out.hops.resize(total);
    out.path_ptr.assign(total + 1, 0);
    out.path.reserve(npath);
    out.eps.resize(Q);
    out.fill_spent.resize(Q);
    out.truncated.resize(Q);
  }
  for (std::size_t i = 0; i < Q; ++i) {
    const RAResult& r = res[i];
    std::copy(r.targets.begin(), r.targets.end(), out.targets.begin() + out.ptr[i]);
    std::copy(r.scores.begin(), r.scores.end(), out.scores.begin() + out.ptr[i]);
    const std::int64_t base = static_cast<std::int64_t>(out.shared.size());
    out.shared.insert(out.shared.end(), r.shared.begin(), r.shared.end());
    for (std::size_t j = 0; j < r.targets.size(); ++j)
      out.shared_ptr[static_cast<std::size_t>(out.ptr[i]) + j + 1] = base + r.shared_ptr[j + 1];
    if (ppr) {
      std::copy(r.hops.begin(), r.hops.end(), out.hops.begin() + out.ptr[i]);
      const std::int64_t pbase = static_cast<std::int64_t>(out.path.size());
      out.path.insert(out.path.end(), r.path.begin(), r.path.end());
      for (std::size_t j = 0; j < r.targets.size(); ++j)
        out.path_ptr[static_cast<std::size_t>(out.ptr[i]) + j + 1] = pbase + r.path_ptr[j + 1];
      out.eps[i] = r.eps;
      out.fill_spent[i] = r.fill_spent ? 1 : 0;
      out.truncated[i] = r.truncated ? 1 : 0;
    }
  }
  return out;
}

}  // namespace

RABatch resource_allocation_batch(const CSRGraph& g, const Visibility& vis, std::int64_t q, const node_t* nodes,
                                  std::int64_t min_shared, std::int64_t k, int threads) {
  check_min_shared(min_shared);
  check_nodes(g, vis, q, nodes, "node");
  std::vector<RAResult> res(static_cast<std::size_t>(q));
  parallel_for(q, threads, [&](std::int64_t i) { res[i] = resource_allocation(g, vis, nodes[i], min_shared, k); });
  return concat_suggestions(res, false);
}

RABatch ppr_suggest_batch(const CSRGraph& g, const Visibility& vis, std::int64_t q, const node_t* nodes,
                          const PPRParams& params, std::int64_t k, int threads) {
  check_nodes(g, vis, q, nodes, "node");
  if (q > 0) {
    const double one = 1.0;
    validate_ppr(g, vis, 1, nodes, &one, params);  // the parameters, once, before any work
  }
  std::vector<RAResult> res(static_cast<std::size_t>(q));
  parallel_for(q, threads, [&](std::int64_t i) { res[i] = ppr_suggest(g, vis, nodes[i], params, k); });
  return concat_suggestions(res, true);
}

PathBatch shortest_path_batch(const CSRGraph& g, const Visibility& vis, std::int64_t q, const node_t* sources,
                              const node_t* targets, int threads) {
  for (std::int64_t i = 0; i < q; ++i) {
    check_node(g, vis, sources[i], "source");
    check_node(g, vis, targets[i], "target");
  }
  std::vector<PathResult> res(static_cast<std::size_t>(q));
  parallel_for(q, threads, [&](std::int64_t i) { res[i] = shortest_path(g, vis, sources[i], targets[i]); });
  PathBatch out;
  const std::size_t Q = static_cast<std::size_t>(q);
  out.ptr.assign(Q + 1, 0);
  std::vector<const std::vector<node_t>*> pp(Q);
  for (std::size_t i = 0; i < Q; ++i) {
    out.ptr[i + 1] = out.ptr[i] + static_cast<std::int64_t>(res[i].path.size());
    pp[i] = &res[i].path;
  }
  out.nodes = concat_parts(out.ptr, pp);
  return out;
}

}  // namespace cw
