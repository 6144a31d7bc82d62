// Forward-push personalized PageRank (Andersen, Chung, Lang 2006) on the undirected projection.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/live_graph.hpp"

namespace cw {

// The work budget of every push (every mode: plain, max_residual, fill, certified; one query,
// a batch's query, a suggestion): at most this many adjacency entries read (`edge_visits`, all
// rounds together). A push whose row would pass it is not done: the run stops, `truncated` is
// set and `eps` reports the eps the result does satisfy. Sized from the ACL bound: an unmasked
// round at eps reads at most 1 / (restart * eps) entries (each push moves restart * r(u) >=
// restart * eps * deg(u) of the total mass 1 into p), so a round with restart * eps >= 1 / 2^26
// (restart 0.05: eps >= 3e-7; the defaults 0.25 and 1e-4 read at most 40,000) is never cut, and
// a vanishing restart (1e-9) stops after ~0.3 s of pushes instead of running for minutes.
constexpr std::int64_t kPushVisits = std::int64_t{1} << 26;

struct PPRParams {
  double restart = 0.25;        // probability of jumping back to the seeds (alpha in ACL)
  double eps = 1e-4;            // push while r(u) >= eps * deg(u)
  std::int64_t max_pushes = 0;  // 0 = no cap; otherwise stop after this many pushes (truncated)
  // > 0: after reaching eps, keep halving eps (reusing the residuals) until the total unpushed
  // mass, which equals the exact L1 error ||p* - p||_1, is <= max_residual.
  double max_residual = 0.0;
  std::int64_t max_visits = kPushVisits;  // the work budget (>= 1): edge_visits never pass it
};

struct PPRResult {
  std::vector<node_t> nodes;   // nodes with p > 0, by score descending then index ascending
  std::vector<double> scores;  // p(v), an underestimate of exact PPR
  double residual = 0.0;       // total unpushed mass sum_u r(u)
  std::int64_t pushes = 0;
  std::int64_t edge_visits = 0;  // adjacency entries read (<= max_visits)
  // A budget (max_pushes, or max_visits) stopped a push round before the eps condition held. The
  // per-node bound 0 <= p*(v) - p(v) < eps * deg(v) then holds at the eps reported below, which
  // is above the eps asked for: on the undirected graph p*(v) - p(v) = sum_u r(u) ppr_u(v)
  // = deg(v) sum_u ppr_v(u) r(u) / deg(u) < deg(v) * max_u r(u) / deg(u) (just above it).
  bool truncated = false;
  // The eps the result satisfies: the eps asked for (certified and fill modes lower it), or,
  // truncated, the smallest double above max_u r(u) / deg(u) (+inf if a node without visible
  // neighbours still holds mass: only under max_pushes; the visits budget pushes those, free).
  double eps = 0.0;
  bool certified = false;    // certified mode: the top-k set and order are proven exact
  bool fill_spent = false;   // fill mode: its push budget or eps floor stopped it short of k
  std::int64_t results = 0;  // fill mode: nodes with p > 0 that count by the FillTarget's rule
};

// Keep only nodes v whose code c has 0 <= c < num_keep and keep[c] != 0. node_type == nullptr:
// no filter. node_type has one entry per node (checked by the caller of the core), or, for a live
// graph, per base node with delta_type giving the codes of the new slots (from base_nodes on); a
// code outside [0, num_keep) is simply not kept, so a query never scans all nodes.
struct NodeTypeFilter {
  const std::int32_t* node_type = nullptr;
  const std::uint8_t* keep = nullptr;
  std::int64_t num_keep = 0;
  node_t base_nodes = 0;
  const std::int32_t* delta_type = nullptr;

  bool keeps(node_t v) const {
    if (node_type == nullptr) return true;
    const std::int32_t c = delta_type != nullptr && v >= base_nodes ? delta_type[v - base_nodes] : node_type[v];
    return c >= 0 && c < num_keep && keep[c] != 0;
  }
};

// What the fill mode counts as a result: a node with p > 0 that is not a seed (seeds strictly
// ascending) and that `types` keeps. `exclude` (strictly ascending, num_exclude entries) lists
// further nodes that never count (the query node's neighbours, for link suggestion).
struct FillTarget {
  std::int64_t k = 0;  // results wanted
  NodeTypeFilter types;
  const node_t* exclude = nullptr;
  std::int64_t num_exclude = 0;
};

// The fill's stated budget: after the push at params.eps, a new round at eps / 2 (reusing the
// residuals) starts only while fewer than k results have p > 0, some touched node holds unpushed
// mass it never pushed (p == 0, r > 0: only then can a lower eps reach a new node), the pushes so
// far are below kFillPushes and eps has been halved fewer than kFillHalvings times. A round is
// never cut short by these rules, so the result satisfies the per-node bound at the eps it
// reports; a round at eps does at most 1 / (restart * eps) pushes. Only the work budget
// (params.max_visits, every round together) cuts a round: then the result is truncated, its eps
// the one it satisfies, and fill_spent is set when fewer than k results have p > 0.
constexpr std::int64_t kFillPushes = 1 << 20;
constexpr int kFillHalvings = 20;

// Seeds: node indices (distinct, visible) and positive weights (normalised to sum 1 inside).
// k <= 0 returns every node with p > 0; otherwise the top k.
void validate_ppr(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                  const double* weights, const PPRParams& params);

PPRResult personalized_pagerank(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                                const double* weights, const PPRParams& params, std::int64_t k);

// Certified top-k: pushes at params.eps, then keeps lowering eps (by `shrink`, reusing the
// residuals) until the top-k set and its order are proven exact by the per-node bound
// 0 <= p*(v) - p(v) <= min(eps * deg(v), residual), or until total pushes reach max_pushes
// (required > 0 here), the edge visits the work budget (max_visits; both: truncated, never
// certified) or eps reaches min_eps. Certification is only tried on a round that completed.
PPRResult personalized_pagerank_certified(const GraphRef& g, const Visibility& vis, std::int64_t nseeds,
                                          const node_t* seeds, const double* weights, const PPRParams& params,
                                          std::int64_t k, double shrink, double min_eps);

// Hub seeds answer: the push at params.eps, then lowered eps as stated above until target.k
// results have p > 0 or the budget is spent (fill_spent). Ranks the top k_rank (0: all) as
// personalized_pagerank does; res.eps is the eps the result ended at.
PPRResult personalized_pagerank_fill(const GraphRef& g, const Visibility& vis, std::int64_t nseeds,
                                     const node_t* seeds, const double* weights, const PPRParams& params,
                                     std::int64_t k_rank, const FillTarget& target);

}  // namespace cw
