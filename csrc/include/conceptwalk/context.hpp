// graph_context's pipeline: personalized PageRank from the query's seeds, the seeds dropped, an
// optional node-type filter, the top k, then for those k the hop count from the nearest seed and
// the seed each is reached through. One query or many (across threads; each query's result is
// bit-identical to the one-query call).
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/csr_graph.hpp"
#include "conceptwalk/ppr.hpp"
#include "conceptwalk/text_index.hpp"

namespace cw {

// The ranking. kPPR: by PPR score descending, then index. kCoverage: candidates are every
// visible non-seed node within max_hops of a seed; by coverage (the number of distinct seeds
// within max_hops over the visible graph) descending, then the seeds at 1 hop, then at 2 hops
// (closer first), then PPR score per visible degree descending (the specific node before the
// hub), then index.
enum class Rank : std::int32_t { kPPR = 0, kCoverage = 1 };

// The hard cap on max_hops for rank = kCoverage.
constexpr std::int32_t kMaxCoverageHops = 3;
// The default work budget of the coverage pass: visible adjacency entries read by its
// per-seed depth-bounded BFS (all seeds together), spent level by level: the pass completes the
// largest radius r <= max_hops whose BFS from every seed fits in the budget (truncated when
// r < max_hops), and its coverage is then exact for radius r.
constexpr std::int64_t kCoverageVisits = 4'000'000;

struct RankParams {
  Rank rank = Rank::kPPR;
  std::int32_t max_hops = 2;                  // coverage only: 1 .. kMaxCoverageHops
  std::int64_t max_visits = kCoverageVisits;  // coverage only: >= 1
};

struct ContextResult {
  std::vector<node_t> nodes;  // in rank order (see Rank); no seed
  std::vector<double> scores;
  std::vector<std::int32_t> hops;  // distance to the nearest seed
  std::vector<node_t> via;         // the smallest-index seed among the nearest
  double residual = 0.0;           // the PPR's unpushed mass
  std::int64_t pushes = 0;
  std::int64_t edge_visits = 0;  // adjacency entries the PPR read (<= kPushVisits)
  double eps = 0.0;              // the eps the PPR satisfies (lowered for a hub seed; raised when truncated)
  bool fill_spent = false;       // the hub fill's budget (or the work budget) stopped it short of k
  bool push_truncated = false;   // the push's work budget (kPushVisits) cut it: eps is above the one asked for
  // Coverage only (empty for kPPR): per result its coverage and the seeds within max_hops
  // (ascending) at cover_seeds[cover_ptr[i] .. cover_ptr[i + 1]).
  std::vector<std::int32_t> coverage;
  std::vector<std::int64_t> cover_ptr;
  std::vector<node_t> cover_seeds;
  bool truncated = false;   // coverage: the work budget stopped the pass short of max_hops
  std::int32_t radius = 0;  // coverage: the radius completed (coverage is exact for it; 0..max_hops)
  std::int64_t visits = 0;  // coverage: adjacency entries the pass read
  // graph_context_text only: the question's visible full-text hits in rank order (the search
  // seeds, weight 1/rank), and whether there was any seed at all (false: no hit and no concept,
  // nothing was walked and every other field is empty).
  std::vector<node_t> hits;
  bool seeded = true;
};

// Seeds: distinct, strictly ascending, visible node indices with weights as for PPR; k >= 1.
void validate_context(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                      const double* weights, const PPRParams& params, std::int64_t k);
void validate_rank(const RankParams& rank);

ContextResult graph_context(const GraphRef& g, const Visibility& vis, std::int64_t nseeds, const node_t* seeds,
                            const double* weights, const PPRParams& params, std::int64_t k,
                            const NodeTypeFilter& filter, const RankParams& rank = RankParams{});

// The full-text half of a question-seeded query: the question's term ids (any order, repeats
// allowed; each in [0, index->num_terms)) and how many visible hits seed the walk. The index's
// documents are the graph's nodes in node order (num_docs == the graph's num_nodes); stats, when
// given, are text_stats over the same visible documents as `vis` (nullptr: counted per query).
struct TextSeeds {
  const TextIndex* index = nullptr;
  const term_t* terms = nullptr;
  std::int64_t num_terms = 0;
  std::int64_t n_hits = 10;
  const TextStats* stats = nullptr;
  BM25Params bm25{};
};

// graph_context from a question, in one call: BM25 top n_hits over the visible documents, each
// hit seeded with weight 1/rank, each distinct given concept with weight 1 (a concept that is also
// a hit gets 1/rank + 1, added in that order), then graph_context over those seeds. `concepts`
// are visible node indices in any order (repeats are one seed). The result's `hits` lists the
// search seeds; `seeded` is false when there was no hit and no concept.
ContextResult graph_context_text(const CSRGraph& g, const Visibility& vis, const TextSeeds& text,
                                 std::int64_t nconcepts, const node_t* concepts, const PPRParams& params,
                                 std::int64_t k, const NodeTypeFilter& filter,
                                 const RankParams& rank = RankParams{});

struct ContextBatch {
  std::vector<std::int64_t> ptr;  // q + 1 offsets into nodes / scores / hops / via
  std::vector<node_t> nodes;
  std::vector<double> scores;
  std::vector<std::int32_t> hops;
  std::vector<node_t> via;
  std::vector<double> residual;  // per query
  std::vector<std::int64_t> pushes, edge_visits;
  std::vector<double> eps;                                          // per query
  std::vector<std::uint8_t> fill_spent, truncated, push_truncated;  // per query
  std::vector<std::int32_t> radius;                                 // per query (coverage)
  std::vector<std::int64_t> visits;                                 // per query
  // Coverage only: per result (aligned with nodes) its coverage; result j's seeds at
  // cover_seeds[cover_ptr[j] .. cover_ptr[j + 1]) (cover_ptr has nodes.size() + 1 entries).
  std::vector<std::int32_t> coverage;
  std::vector<std::int64_t> cover_ptr;
  std::vector<node_t> cover_seeds;
};

// Query i has seeds seeds[seed_ptr[i] .. seed_ptr[i + 1]) (ptr_size = q + 1 offsets). Every
// query is validated before any work starts.
ContextBatch graph_context_batch(const CSRGraph& g, const Visibility& vis, std::int64_t ptr_size,
                                 const std::int64_t* seed_ptr, std::int64_t nseeds, const node_t* seeds,
                                 const double* weights, const PPRParams& params, std::int64_t k,
                                 const NodeTypeFilter& filter, int threads, const RankParams& rank = RankParams{});

}  // namespace cw
