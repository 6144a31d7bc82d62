// Resource allocation link prediction for one node (Zhou, Lü, Zhang 2009).
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/live_graph.hpp"
#include "conceptwalk/ppr.hpp"

namespace cw {

// The suggestions of either method (resource allocation or rooted PageRank).
struct RAResult {
  std::vector<node_t> targets;           // by score desc, index asc
  std::vector<double> scores;            // RA: sum over shared neighbours z of 1 / deg(z); PPR: p(target)
  std::vector<std::int64_t> shared_ptr;  // targets.size() + 1 offsets into shared
  std::vector<node_t> shared;            // shared neighbours of each target, ascending
  std::int64_t candidates = 0;           // RA: candidates with >= min_shared shared neighbours;
                                         // PPR: visible non-neighbours with p > 0
  // PPR only (empty for RA): per target its hop distance from the query node and the shortest
  // chain query .. target (shortest_path's rule: the lexicographically smallest) at
  // path[path_ptr[j] .. path_ptr[j + 1]); the eps the push ended at and whether the fill's budget
  // stopped it short of k (as for graph_context's hub seeds).
  std::vector<std::int32_t> hops;
  std::vector<std::int64_t> path_ptr;
  std::vector<node_t> path;
  double eps = 0.0;
  bool fill_spent = false;
  bool truncated = false;  // PPR: a work budget (the push's, or max_pushes) stopped the push
};

// Candidates: visible nodes at distance exactly 2 from a (not a, not adjacent to a) with at least
// min_shared shared visible neighbours. k <= 0 returns all.
RAResult resource_allocation(const GraphRef& g, const Visibility& vis, node_t a, std::int64_t min_shared,
                             std::int64_t k);

// Rooted PageRank link suggestion: the forward push from a alone (graph_context's push: restart,
// eps, and the same fill that lowers eps for a hub until k results have p > 0 or its budget is
// spent), over the visible graph; candidates are the visible nodes other than a and its
// neighbours with p > 0, by p descending then index, the top k (k <= 0: all). Each target is
// explained by its hop distance, the neighbours of a it shares (hops == 2; none beyond) and the
// shortest chain from a. The work is the push's (local) plus one BFS from a for the targets
// beyond two hops, held to the push's own row visits (a target it does not reach within them gets
// the bidirectional BFS of shortest_path); no O(n) allocation or clearing per query.
RAResult ppr_suggest(const CSRGraph& g, const Visibility& vis, node_t a, const PPRParams& params, std::int64_t k);

}  // namespace cw
