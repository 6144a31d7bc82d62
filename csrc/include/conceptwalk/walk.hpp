// Bounded typed walk from a few weighted start nodes: enumerates simple paths of 1..max_hops hops
// whose inner hops use "expansion" edge types and whose last hop uses an "admission" edge type,
// scores each path, and keeps the best candidates under a candidate budget shared across the starts.
//
// Path score = weight(start) * hop_decay^(hops - 1) * product over hops of the hop's edge weight,
// where a hop is represented by the edge of the pair whose type passes that hop's gate with the
// highest weight (an edge without a weight ranks below any weighted one and counts 1), then the
// lowest edge id. A candidate's score is its best path's score.
//
// Selection (best-first, budget-fair): each distinct start (by weight descending, then index)
// enumerates its paths breadth-first with a share of the edge budget (what is left, divided by
// the starts still to go). The candidate budget B is apportioned over the starts that reached any
// candidate: every one is guaranteed floor(min_share * B / n), the rest goes in proportion to the
// weights (largest remainder, ties by start order). Each start takes its best candidates (by its
// own best path score) not yet taken up to its quota; what a start cannot use is filled from the
// remaining candidates by the global order. Candidates come out in the global order: score
// descending, then the number of starts reaching them descending, then the best edge-weight
// product descending, then fewer hops, then index. With one start this is exactly the top B by score.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/live_graph.hpp"

namespace cw {

constexpr std::int32_t kWalkMaxHopsLimit = 4;

struct WalkParams {
  std::int32_t max_hops = 2;
  // Edge-type gates, indexed by edge type code (codes >= the array length are not allowed).
  const std::uint8_t* expand_types = nullptr;
  const std::uint8_t* admit_types = nullptr;
  std::int32_t num_type_flags = 0;
  // Optional node-type filters: node_type[v] indexes the flag arrays (over a live graph: for
  // v < node_type_split; node_type_tail[v - node_type_split] for the slots after the base's).
  const std::int32_t* node_type = nullptr;
  const std::int32_t* node_type_tail = nullptr;
  node_t node_type_split = 0;
  const std::uint8_t* expand_node_types = nullptr;  // null = every node type may be walked through
  const std::uint8_t* admit_node_types = nullptr;   // null = every node type may be a candidate
  std::int32_t num_node_type_flags = 0;
  std::int64_t max_edges = 10000;         // adjacency entries examined
  std::int64_t max_candidates = 50;       // distinct candidates kept
  const double* start_weights = nullptr;  // per start (> 0, finite); null = all 1
  const double* edge_weights = nullptr;   // per canonical edge, in (0, 1] or NaN = none; null = none
  double hop_decay = 1.0;                 // (0, 1]
  double min_share = 0.5;                 // [0, 1]: guaranteed fraction of an equal share per start
  std::int64_t max_paths = 0;             // paths returned per candidate (best first); 0 = all
};

struct WalkResult {
  std::int32_t width = 0;  // max_hops + 1
  // Kept candidates, in the global order, and per candidate:
  std::vector<node_t> candidates;
  std::vector<double> scores;            // best path score
  std::vector<std::int32_t> reach;       // distinct starts with a path to it
  std::vector<std::int32_t> min_hops;    // fewest hops of any path to it
  std::vector<std::int64_t> path_count;  // paths found to it (all, not only those returned)
  std::vector<std::int64_t> path_ptr;    // candidates + 1 offsets into the returned paths
  // Returned paths (grouped by candidate, best first within one): paths x width nodes padded with
  // -1, paths x (width - 1) canonical edge ids (the edge representing each hop), hops, score.
  std::vector<node_t> path_nodes;
  std::vector<std::int64_t> path_edges;
  std::vector<std::int32_t> path_hops;
  std::vector<double> path_scores;
  std::int64_t edges_visited = 0;
  std::int64_t candidates_found = 0;  // distinct candidates before the budget cut
  bool cut_by_edges = false;
  bool cut_by_candidates = false;
};

WalkResult typed_walk(const CSRGraph& g, const Visibility& vis, std::int64_t nstarts, const node_t* starts,
                      const WalkParams& params);

// The edges of the pairs a live graph's delta added, or whose edge set it changed: every edge of
// each such pair (the base's included), in the order a fresh build numbers a pair's edges (type
// name, then direction), so that "the lowest edge id" picks the edge a fresh build picks. A pair
// of two base nodes that is not listed here has the base's edges. Read by the walk over a live
// graph; the edge of delta entry i is reported as edge id first_id + i (first_id: the base's
// num_edges), with its weight weights[i] (NaN: none; null: no weights).
struct WalkDeltaEdges {
  std::int64_t num_pairs = 0;
  const std::uint64_t* pair_keys = nullptr;  // (lo << 32) | hi, lo < hi as slot numbers, strictly ascending
  const std::int32_t* pair_ptr = nullptr;    // num_pairs + 1 offsets into the per-edge arrays
  const std::int32_t* typedir =
      nullptr;  // (type code << 1) | direction (0: from the pair's node first in id order)
  const double* weights = nullptr;
  std::int64_t first_id = 0;
};

// The walk over a live graph (a base's rows plus a delta): the same walk, paths and order as
// typed_walk over a fresh build of the same graph, nodes numbered as slots. `edges` must list
// every pair the delta added (a hop over a pair that is neither the base's nor listed throws
// InvalidArgument); the edge weights of `params` are the base's (per base canonical edge).
// Throws InvalidArgument on a malformed `edges` (unordered keys, offsets or slots out of range).
WalkResult typed_walk(const GraphRef& g, const WalkDeltaEdges& edges, const Visibility& vis, std::int64_t nstarts,
                      const node_t* starts, const WalkParams& params);

}  // namespace cw
