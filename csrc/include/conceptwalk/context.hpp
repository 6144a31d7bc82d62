// graph_context's pipeline: personalized PageRank from the query's seeds, the seeds dropped, an
// optional node-type filter, the top k, then for those k the hop count from the nearest seed and
// the seed each is reached through. One query or many (across threads; each query's result is
// bit-identical to the one-query call).
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/ppr.hpp"

namespace cw {

// Keep only results v with 0 <= node_type[v] < num_keep and keep[node_type[v]] != 0.
// node_type == nullptr: no filter. node_type has one entry per node (checked by the caller of
// the core); a code outside [0, num_keep) is simply not kept, so a query never scans all nodes.
struct NodeTypeFilter {
  const std::int32_t* node_type = nullptr;
  const std::uint8_t* keep = nullptr;
  std::int64_t num_keep = 0;
};

struct ContextResult {
  std::vector<node_t> nodes;        // by PPR score descending, then index ascending; no seed
  std::vector<double> scores;
  std::vector<std::int32_t> hops;   // distance to the nearest seed
  std::vector<node_t> via;          // the smallest-index seed among the nearest
  double residual = 0.0;            // the PPR's unpushed mass
  std::int64_t pushes = 0;
};

// Seeds: distinct, strictly ascending, visible node indices with weights as for PPR; k >= 1.
void validate_context(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                      const node_t* seeds, const double* weights, const PPRParams& params,
                      std::int64_t k);

ContextResult graph_context(const CSRGraph& g, const Visibility& vis, std::int64_t nseeds,
                            const node_t* seeds, const double* weights, const PPRParams& params,
                            std::int64_t k, const NodeTypeFilter& filter);

struct ContextBatch {
  std::vector<std::int64_t> ptr;    // q + 1 offsets into nodes / scores / hops / via
  std::vector<node_t> nodes;
  std::vector<double> scores;
  std::vector<std::int32_t> hops;
  std::vector<node_t> via;
  std::vector<double> residual;     // per query
  std::vector<std::int64_t> pushes;
};

// Query i has seeds seeds[seed_ptr[i] .. seed_ptr[i + 1]) (ptr_size = q + 1 offsets). Every
// query is validated before any work starts.
ContextBatch graph_context_batch(const CSRGraph& g, const Visibility& vis, std::int64_t ptr_size,
                                 const std::int64_t* seed_ptr, std::int64_t nseeds,
                                 const node_t* seeds, const double* weights,
                                 const PPRParams& params, std::int64_t k,
                                 const NodeTypeFilter& filter, int threads);

}  // namespace cw
