// Unweighted shortest paths on the undirected projection.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/live_graph.hpp"

namespace cw {

struct PathResult {
  std::vector<node_t> path;  // s .. t inclusive; empty when no visible path exists
  std::int64_t visited = 0;  // nodes reached by both searches
};

// Bidirectional BFS. Among all shortest paths returns the lexicographically smallest sequence of
// node indices. s == t gives [s].
PathResult shortest_path(const GraphRef& g, const Visibility& vis, node_t s, node_t t);

struct ChainsResult {
  std::vector<std::int64_t> ptr;  // ntargets + 1 offsets: target i's chain at path[ptr[i] .. ptr[i + 1])
  std::vector<node_t> path;       // s .. t inclusive per target; empty when not reached within the budget
  std::int64_t visits = 0;        // row entries the BFS read
};

// The shortest chains from s to each target, by one BFS from s, each the chain shortest_path
// gives (the lexicographically smallest sequence of node indices among the shortest): with rows
// ascending and a FIFO queue, every node's first discoverer is its predecessor on that chain (the
// queue holds each layer in the lexicographic order of its chains). Stops once every target is
// reached, or before reading a row that would take the visits past max_visits (max_visits < 0:
// no limit); a target not reached by then, or not connected to s, gets an empty chain (ask
// shortest_path for it). Targets: visible nodes, repeats allowed.
ChainsResult shortest_paths_from(const CSRGraph& g, const Visibility& vis, node_t s, std::int64_t ntargets,
                                 const node_t* targets, std::int64_t max_visits);

struct HopsResult {
  std::vector<std::int32_t> hops;  // per target: distance to the nearest seed, -1 if not reached
  std::vector<node_t> via;         // per target: the smallest-index seed among the nearest, or -1
};

// Multi-source BFS from the seeds, stopping once every target is reached or max_hops layers are
// done (max_hops < 0: no limit). Ties: via is the smallest seed index at the minimal distance.
HopsResult multi_source_hops(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                             std::int64_t ntargets, const node_t* targets, std::int32_t max_hops);

}  // namespace cw
