// Forward-push personalized PageRank (Andersen, Chung, Lang 2006) on the undirected projection.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"

namespace cw {

struct PPRParams {
  double restart = 0.25;        // probability of jumping back to the seeds (alpha in ACL)
  double eps = 1e-4;            // push while r(u) >= eps * deg(u)
  std::int64_t max_pushes = 0;  // 0 = no cap; otherwise stop after this many pushes (truncated)
  // > 0: after reaching eps, keep halving eps (reusing the residuals) until the total unpushed
  // mass, which equals the exact L1 error ||p* - p||_1, is <= max_residual.
  double max_residual = 0.0;
};

struct PPRResult {
  std::vector<node_t> nodes;   // nodes with p > 0, by score descending then index ascending
  std::vector<double> scores;  // p(v), an underestimate of exact PPR
  double residual = 0.0;       // total unpushed mass sum_u r(u)
  std::int64_t pushes = 0;
  std::int64_t edge_visits = 0;
  bool truncated = false;    // max_pushes reached before the eps condition held
  double eps = 0.0;          // the eps the result satisfies (certified mode lowers it)
  bool certified = false;    // certified mode: the top-k set and order are proven exact
  bool fill_spent = false;   // fill mode: its push budget or eps floor stopped it short of k
  std::int64_t results = 0;  // fill mode: nodes with p > 0 that count by the FillTarget's rule
};

// What the fill mode counts as a result: a node with p > 0 that is not a seed (seeds strictly
// ascending) and, when node_type is set, whose code c has 0 <= c < num_keep and keep[c] != 0.
// `exclude` (strictly ascending, num_exclude entries) lists further nodes that never count (the
// query node's neighbours, for link suggestion).
struct FillTarget {
  std::int64_t k = 0;  // results wanted
  const std::int32_t* node_type = nullptr;
  const std::uint8_t* keep = nullptr;
  std::int64_t num_keep = 0;
  const node_t* exclude = nullptr;
  std::int64_t num_exclude = 0;
};

// The fill's stated budget: after the push at params.eps, a new round at eps / 2 (reusing the
// residuals) starts only while fewer than k results have p > 0, some touched node holds unpushed
// mass it never pushed (p == 0, r > 0: only then can a lower eps reach a new node), the pushes so
// far are below kFillPushes and eps has been halved fewer than kFillHalvings times. A round is
// never cut short, so the result satisfies the per-node bound at the eps it reports; a round at
// eps does at most 1 / (restart * eps) pushes.
constexpr std::int64_t kFillPushes = 1 << 20;
constexpr int kFillHalvings = 20;

// Seeds: node indices (distinct, visible) and positive weights (normalised to sum 1 inside).
// k <= 0 returns every node with p > 0; otherwise the top k.
void validate_ppr(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                  const double* weights, const PPRParams& params);

PPRResult personalized_pagerank(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                                const double* weights, const PPRParams& params, std::int64_t k);

// Certified top-k: pushes at params.eps, then keeps lowering eps (by `shrink`, reusing the
// residuals) until the top-k set and its order are proven exact by the per-node bound
// 0 <= p*(v) - p(v) <= min(eps * deg(v), residual), or until total pushes reach max_pushes
// (required > 0 here) or eps reaches min_eps.
PPRResult personalized_pagerank_certified(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                                          const node_t* seeds, const double* weights, const PPRParams& params,
                                          std::int64_t k, double shrink, double min_eps);

// Hub seeds answer: the push at params.eps, then lowered eps as stated above until target.k
// results have p > 0 or the budget is spent (fill_spent). Ranks the top k_rank (0: all) as
// personalized_pagerank does; res.eps is the eps the result ended at.
PPRResult personalized_pagerank_fill(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                                     const node_t* seeds, const double* weights, const PPRParams& params,
                                     std::int64_t k_rank, const FillTarget& target);

}  // namespace cw
