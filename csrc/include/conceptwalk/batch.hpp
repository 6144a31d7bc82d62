// Run many independent queries across threads; each thread uses its own workspace. The batch
// forms of PPR, resource allocation and shortest paths: every query runs exactly the single-query
// function (same code, same per-thread workspace discipline), so each result is bit-identical to
// the one-by-one call; results are concatenated in input order, query i at ptr[i] .. ptr[i + 1].
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "conceptwalk/path.hpp"
#include "conceptwalk/ppr.hpp"
#include "conceptwalk/suggest.hpp"

namespace cw {

// Calls fn(i) for i in [0, count) on `threads` threads (<= 1: the calling thread). Work is handed
// out one index at a time, so results (written by fn into slot i) are independent of scheduling.
template <class Fn>
void parallel_for(std::int64_t count, int threads, Fn&& fn) {
  if (threads <= 1 || count <= 1) {
    for (std::int64_t i = 0; i < count; ++i) fn(i);
    return;
  }
  std::atomic<std::int64_t> next{0};
  std::exception_ptr error;
  std::atomic<bool> failed{false};
  auto worker = [&]() {
    for (;;) {
      const std::int64_t i = next.fetch_add(1);
      if (i >= count || failed.load()) return;
      try {
        fn(i);
      } catch (...) {
        if (!failed.exchange(true)) error = std::current_exception();
        return;
      }
    }
  };
  const int nt = static_cast<int>(std::min<std::int64_t>(threads, count));
  std::vector<std::thread> pool;
  try {
    pool.reserve(static_cast<std::size_t>(nt - 1));
    for (int t = 1; t < nt; ++t) pool.emplace_back(worker);
  } catch (...) {
    // Not every thread could start (resource limits): the ones that did, and this one, still
    // take all the work. (Letting the exception escape would destroy joinable threads.)
  }
  worker();
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// Many PPR queries: query i has seeds seeds[seed_ptr[i] .. seed_ptr[i + 1]) (size q + 1 offsets).
struct PPRBatch {
  std::vector<std::int64_t> ptr;  // q + 1 offsets into nodes / scores
  std::vector<node_t> nodes;
  std::vector<double> scores;
  std::vector<double> residual, eps;  // per query
  std::vector<std::int64_t> pushes, edge_visits;
  std::vector<std::uint8_t> truncated;
};
// Every query is validated before any work starts.
PPRBatch personalized_pagerank_batch(const CSRGraph& g, const Visibility& vis, std::int64_t ptr_size,
                                     const std::int64_t* seed_ptr, std::int64_t nseeds, const node_t* seeds,
                                     const double* weights, const PPRParams& params, std::int64_t k, int threads);

// Resource allocation for many nodes.
struct RABatch {
  std::vector<std::int64_t> ptr;  // q + 1 offsets into targets / scores
  std::vector<node_t> targets;
  std::vector<double> scores;
  std::vector<std::int64_t> shared_ptr;  // targets.size() + 1 offsets into shared
  std::vector<node_t> shared;
  std::vector<std::int64_t> candidates;  // per query
  // PPR only (empty for RA): per target its hops, target j's chain at path[path_ptr[j] ..
  // path_ptr[j + 1]); per query the eps reached and whether the fill's budget was spent.
  std::vector<std::int32_t> hops;
  std::vector<std::int64_t> path_ptr;
  std::vector<node_t> path;
  std::vector<double> eps;
  std::vector<std::uint8_t> fill_spent;
  std::vector<std::uint8_t> truncated;  // per query: a work budget stopped the push
};
RABatch resource_allocation_batch(const CSRGraph& g, const Visibility& vis, std::int64_t q, const node_t* nodes,
                                  std::int64_t min_shared, std::int64_t k, int threads);
// ppr_suggest for many nodes (every node and the parameters checked before any work).
RABatch ppr_suggest_batch(const CSRGraph& g, const Visibility& vis, std::int64_t q, const node_t* nodes,
                          const PPRParams& params, std::int64_t k, int threads);

// Shortest paths for many (source, target) pairs; an empty slice = no visible path.
struct PathBatch {
  std::vector<std::int64_t> ptr;  // q + 1 offsets into nodes
  std::vector<node_t> nodes;
};
PathBatch shortest_path_batch(const CSRGraph& g, const Visibility& vis, std::int64_t q, const node_t* sources,
                              const node_t* targets, int threads);

// The parts of q results, concatenated: out[ptr[i] .. ptr[i + 1]) = *parts[i].
template <class T>
std::vector<T> concat_parts(const std::vector<std::int64_t>& ptr,
                            const std::vector<const std::vector<T>*>& parts) {
  const std::size_t q = parts.size();
  std::vector<T> out(static_cast<std::size_t>(ptr[q]));
  for (std::size_t i = 0; i < q; ++i) std::copy(parts[i]->begin(), parts[i]->end(), out.begin() + ptr[i]);
  return out;
}

}  // namespace cw
