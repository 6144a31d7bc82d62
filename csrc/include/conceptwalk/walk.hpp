// Bounded typed walk from a few start nodes: enumerates simple paths of 1..max_hops hops whose
// inner hops use "expansion" edge types and whose last hop uses an "admission" edge type.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"

namespace cw {

constexpr std::int32_t kWalkMaxHopsLimit = 4;

struct WalkParams {
  std::int32_t max_hops = 2;
  // Edge-type gates, indexed by edge type code (codes >= the array length are not allowed).
  const std::uint8_t* expand_types = nullptr;
  const std::uint8_t* admit_types = nullptr;
  std::int32_t num_type_flags = 0;
  // Optional node-type filters: node_type[v] indexes the flag arrays.
  const std::int32_t* node_type = nullptr;
  const std::uint8_t* expand_node_types = nullptr;  // null = every node type may be walked through
  const std::uint8_t* admit_node_types = nullptr;   // null = every node type may be a candidate
  std::int32_t num_node_type_flags = 0;
  std::int64_t max_edges = 10000;      // adjacency entries examined
  std::int64_t max_candidates = 50;    // distinct candidates
};

struct WalkResult {
  std::int32_t width = 0;                // max_hops + 1
  std::vector<node_t> path_nodes;        // paths x width, padded with -1
  std::vector<std::int64_t> path_entries;// paths x (width - 1): adjacency entry of each hop, -1 pad
  std::vector<std::int32_t> path_hops;   // per path
  std::vector<node_t> candidates;        // distinct path ends, first-discovery order
  std::int64_t edges_visited = 0;
  bool truncated = false;
};

WalkResult typed_walk(const CSRGraph& g, const Visibility& vis, std::int64_t nstarts,
                      const node_t* starts, const WalkParams& params);

}  // namespace cw
