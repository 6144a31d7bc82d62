// Resource allocation link prediction for one node (Zhou, Lü, Zhang 2009).
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"

namespace cw {

struct RAResult {
  std::vector<node_t> targets;           // by score desc, index asc
  std::vector<double> scores;            // sum over shared neighbours z of 1 / deg(z)
  std::vector<std::int64_t> shared_ptr;  // targets.size() + 1 offsets into shared
  std::vector<node_t> shared;            // shared neighbours of each target, ascending
  std::int64_t candidates = 0;           // candidates with >= min_shared shared neighbours
};

// Candidates: visible nodes at distance exactly 2 from a (not a, not adjacent to a) with at least
// min_shared shared visible neighbours. k <= 0 returns all.
RAResult resource_allocation(const CSRGraph& g, const Visibility& vis, node_t a, std::int64_t min_shared,
                             std::int64_t k);

}  // namespace cw
