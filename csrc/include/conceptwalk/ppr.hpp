// Forward-push personalized PageRank (Andersen, Chung, Lang 2006) on the undirected projection.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"

namespace cw {

struct PPRParams {
  double restart = 0.25;       // probability of jumping back to the seeds (alpha in ACL)
  double eps = 1e-4;           // push while r(u) >= eps * deg(u)
  std::int64_t max_pushes = 0; // 0 = no cap; otherwise stop after this many pushes (truncated)
  // > 0: after reaching eps, keep halving eps (reusing the residuals) until the total unpushed
  // mass, which equals the exact L1 error ||p* - p||_1, is <= max_residual.
  double max_residual = 0.0;
};

struct PPRResult {
  std::vector<node_t> nodes;     // nodes with p > 0, by score descending then index ascending
  std::vector<double> scores;    // p(v), an underestimate of exact PPR
  double residual = 0.0;         // total unpushed mass sum_u r(u)
  std::int64_t pushes = 0;
  std::int64_t edge_visits = 0;
  bool truncated = false;        // max_pushes reached before the eps condition held
  double eps = 0.0;              // the eps the result satisfies (certified mode lowers it)
  bool certified = false;        // certified mode: the top-k set and order are proven exact
};

// Seeds: node indices (distinct, visible) and positive weights (normalised to sum 1 inside).
// k <= 0 returns every node with p > 0; otherwise the top k.
void validate_ppr(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                  const node_t* seeds, const double* weights, const PPRParams& params);

PPRResult personalized_pagerank(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                                const node_t* seeds, const double* weights,
                                const PPRParams& params, std::int64_t k);

// Certified top-k: pushes at params.eps, then keeps lowering eps (by `shrink`, reusing the
// residuals) until the top-k set and its order are proven exact by the per-node bound
// 0 <= p*(v) - p(v) <= min(eps * deg(v), residual), or until total pushes reach max_pushes
// (required > 0 here) or eps reaches min_eps.
PPRResult personalized_pagerank_certified(const CSRGraph& g, const Visibility& vis,
                                          std::int64_t nseeds, const node_t* seeds,
                                          const double* weights, const PPRParams& params,
                                          std::int64_t k, double shrink, double min_eps);

}  // namespace cw
