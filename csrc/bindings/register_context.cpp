// graph_context's pipeline (csrc/src/context.cpp) for one query and for many across threads.
#include "prelude.hpp"

#include <optional>

#include "conceptwalk/context.hpp"

namespace {

// The optional node-type filter: node_type (one code per node) and keep_types (per code) go
// together. With delta_node_type (a live graph's), node_type holds the base's `base_nodes` codes
// and delta_node_type the new slots'.
cw::NodeTypeFilter type_filter(const cw::GraphRef& g, const std::optional<carray<std::int32_t>>& node_type,
                               const std::optional<carray<bool>>& keep_types,
                               const std::optional<carray<std::int32_t>>& delta_node_type = std::nullopt,
                               std::int64_t base_nodes = 0) {
  if (node_type.has_value() != keep_types.has_value())
    throw py::value_error("node_type and keep_types go together");
  if (delta_node_type && !node_type) throw py::value_error("delta_node_type goes with node_type");
  cw::NodeTypeFilter f;
  if (node_type) {
    if (delta_node_type) {
      check_1d(*node_type, "node_type", base_nodes);
      check_1d(*delta_node_type, "delta_node_type", g.num_nodes() - base_nodes);
      f.base_nodes = static_cast<cw::node_t>(base_nodes);
      f.delta_type = delta_node_type->data();
    } else {
      check_1d(*node_type, "node_type", g.num_nodes());
    }
    check_1d(*keep_types, "keep_types");
    f.node_type = node_type->data();
    f.keep = reinterpret_cast<const std::uint8_t*>(keep_types->data());
    f.num_keep = keep_types->shape(0);
  }
  return f;
}

// One graph_context query over a graph (a CSRGraph's rows or a LiveGraph's) for a resolved
// visibility: the arguments checked, the core run with the GIL released.
cw::ContextResult context_one(const cw::GraphRef& g, const cw::Visibility& vis, py::handle seeds_in,
                              const carray<double>& weights, double restart, double eps, std::int64_t k,
                              const std::optional<carray<std::int32_t>>& node_type,
                              const std::optional<carray<bool>>& keep_types, std::int32_t rank,
                              std::int32_t max_hops, std::int64_t max_visits,
                              const std::optional<carray<std::int32_t>>& delta_node_type = std::nullopt,
                              std::int64_t base_nodes = 0) {
  const carray<std::int32_t> seeds = node_array(seeds_in, g, "seeds");
  check_1d(seeds, "seeds");
  check_1d(weights, "weights", seeds.shape(0));
  const cw::NodeTypeFilter filter = type_filter(g, node_type, keep_types, delta_node_type, base_nodes);
  const cw::PPRParams params{restart, eps, 0};
  const std::int32_t* s = seeds.data();
  const double* w = weights.data();
  const std::int64_t n = seeds.shape(0);
  const cw::RankParams rp{static_cast<cw::Rank>(rank), max_hops, max_visits};
  Nogil nogil;
  return cw::graph_context(g, vis, n, s, w, params, k, filter, rp);
}

}  // namespace

void register_context(py::module_& m) {
  py::class_<cw::ContextResult>(
      m, "ContextResult",
      "graph_context's core result for one query: result nodes (no seed) by PPR score, their "
      "scores, hop counts from the nearest seed and the seed each is reached through, and the "
      "PPR's residual, pushes, edge_visits, eps and push_truncated (the work budget PUSH_VISITS "
      "cut it). Read-only.")
      .def_property_readonly("nodes", vector_property(&cw::ContextResult::nodes))
      .def_property_readonly("scores", vector_property(&cw::ContextResult::scores))
      .def_property_readonly("hops", vector_property(&cw::ContextResult::hops))
      .def_property_readonly("via", vector_property(&cw::ContextResult::via))
      .def_readonly("residual", &cw::ContextResult::residual)
      .def_readonly("pushes", &cw::ContextResult::pushes)
      .def_readonly("edge_visits", &cw::ContextResult::edge_visits)
      .def_readonly("eps", &cw::ContextResult::eps)
      .def_readonly("fill_spent", &cw::ContextResult::fill_spent)
      .def_readonly("push_truncated", &cw::ContextResult::push_truncated)
      .def_property_readonly("coverage", vector_property(&cw::ContextResult::coverage))
      .def_property_readonly("cover_ptr", vector_property(&cw::ContextResult::cover_ptr))
      .def_property_readonly("cover_seeds", vector_property(&cw::ContextResult::cover_seeds))
      .def_readonly("truncated", &cw::ContextResult::truncated)
      .def_readonly("radius", &cw::ContextResult::radius)
      .def_readonly("visits", &cw::ContextResult::visits)
      .def_property_readonly("hits", vector_property(&cw::ContextResult::hits))
      .def_readonly("seeded", &cw::ContextResult::seeded)
      .def("__len__", [](const cw::ContextResult& r) { return r.nodes.size(); });

  py::class_<cw::ContextBatch>(
      m, "ContextBatch",
      "graph_context's core results for many queries: query i's nodes, scores, hops and via at "
      "ptr[i]:ptr[i + 1], per-query residual and pushes. Read-only.")
      .def_property_readonly("ptr", vector_property(&cw::ContextBatch::ptr))
      .def_property_readonly("nodes", vector_property(&cw::ContextBatch::nodes))
      .def_property_readonly("scores", vector_property(&cw::ContextBatch::scores))
      .def_property_readonly("hops", vector_property(&cw::ContextBatch::hops))
      .def_property_readonly("via", vector_property(&cw::ContextBatch::via))
      .def_property_readonly("residual", vector_property(&cw::ContextBatch::residual))
      .def_property_readonly("pushes", vector_property(&cw::ContextBatch::pushes))
      .def_property_readonly("edge_visits", vector_property(&cw::ContextBatch::edge_visits))
      .def_property_readonly("eps", vector_property(&cw::ContextBatch::eps))
      .def_property_readonly("fill_spent", vector_property(&cw::ContextBatch::fill_spent))
      .def_property_readonly("truncated", vector_property(&cw::ContextBatch::truncated))
      .def_property_readonly("push_truncated", vector_property(&cw::ContextBatch::push_truncated))
      .def_property_readonly("radius", vector_property(&cw::ContextBatch::radius))
      .def_property_readonly("visits", vector_property(&cw::ContextBatch::visits))
      .def_property_readonly("coverage", vector_property(&cw::ContextBatch::coverage))
      .def_property_readonly("cover_ptr", vector_property(&cw::ContextBatch::cover_ptr))
      .def_property_readonly("cover_seeds", vector_property(&cw::ContextBatch::cover_seeds));

  m.def(
      "graph_context",
      [](const cw::CSRGraph& g, py::handle seeds_in, const carray<double>& weights, double restart, double eps,
         std::int64_t k, const std::optional<carray<std::int32_t>>& node_type,
         const std::optional<carray<bool>>& keep_types, py::handle visible, std::int32_t rank,
         std::int32_t max_hops, std::int64_t max_visits, py::handle delta_node_type) {
        if (!delta_node_type.is_none())
          throw py::value_error("delta_node_type is a LiveGraph's (a CSRGraph has none)");
        return context_one(g, resolve_visibility(g, mask_arg(visible)), seeds_in, weights, restart, eps, k,
                           node_type, keep_types, rank, max_hops, max_visits);
      },
      "graph"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 20,
      "node_type"_a = py::none(), "keep_types"_a = py::none(), "visible"_a = py::none(), "rank"_a = 0,
      "max_hops"_a = 2, "max_visits"_a = cw::kCoverageVisits, "delta_node_type"_a = py::none(),
      "One graph_context query (seeds strictly ascending): PPR (eps lowered for a hub seed), drop "
      "the seeds, keep the wanted node types, the top k by PPR (rank 0) or by coverage within "
      "max_hops, then PPR (rank 1), then hop counts and reached-through seeds; returns a ContextResult.");

  m.def(
      "graph_context",
      [](const LiveGraph& g, py::handle seeds_in, const carray<double>& weights, double restart, double eps,
         std::int64_t k, const std::optional<carray<std::int32_t>>& node_type,
         const std::optional<carray<bool>>& keep_types, py::handle visible, std::int32_t rank,
         std::int32_t max_hops, std::int64_t max_visits,
         const std::optional<carray<std::int32_t>>& delta_node_type) {
        const cw::GraphRef ref = g.ref();
        return context_one(ref, live_visibility(g, visible), seeds_in, weights, restart, eps, k, node_type,
                           keep_types, rank, max_hops, max_visits, delta_node_type, g.base->num_nodes());
      },
      "graph"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 20,
      "node_type"_a = py::none(), "keep_types"_a = py::none(), "visible"_a = py::none(), "rank"_a = 0,
      "max_hops"_a = 2, "max_visits"_a = cw::kCoverageVisits, "delta_node_type"_a = py::none(),
      "graph_context over a LiveGraph (base plus delta): seeds strictly ascending in the graph's "
      "order (their order keys); the result equals the same query on a fresh build, bit for bit. A "
      "node-type filter gives node_type for every slot, or for the base's nodes with delta_node_type "
      "for the new slots.");

  m.def(
      "graph_context_text",
      [](const cw::CSRGraph& g, TextIndexPtr index, const carray<std::int32_t>& terms, std::int64_t n_hits,
         py::handle concepts_in, double restart, double eps, std::int64_t k,
         const std::optional<carray<std::int32_t>>& node_type, const std::optional<carray<bool>>& keep_types,
         py::handle visible, const TextStatsHolder* stats, std::int32_t rank, std::int32_t max_hops,
         std::int64_t max_visits, double k1, double b) {
        check_1d(terms, "terms");
        const carray<std::int32_t> concepts =
            concepts_in.is_none() ? carray<std::int32_t>(0) : node_array(concepts_in, g, "concepts");
        check_1d(concepts, "concepts");
        const cw::NodeTypeFilter filter = type_filter(g, node_type, keep_types);
        const VisibilityMask* vm = mask_arg(visible);
        const cw::Visibility vis = resolve_visibility(g, vm);
        if (stats != nullptr) {
          if (stats->index.get() != index.get())
            throw py::value_error("stats: computed for a different TextIndex");
          const std::int64_t n_visible = vm ? vm->visible_count : g.num_nodes();
          if (stats->stats.num_docs != n_visible)
            throw py::value_error("stats: computed over " + std::to_string(stats->stats.num_docs) +
                                  " documents, the visible set has " + std::to_string(n_visible));
        }
        cw::TextSeeds text;
        text.index = index.get();
        text.terms = terms.data();
        text.num_terms = terms.shape(0);
        text.n_hits = n_hits;
        text.stats = stats == nullptr ? nullptr : &stats->stats;
        text.bm25 = cw::BM25Params{k1, b};
        const cw::PPRParams params{restart, eps, 0};
        const cw::RankParams rp{static_cast<cw::Rank>(rank), max_hops, max_visits};
        const std::int32_t* c = concepts.data();
        const std::int64_t nc = concepts.shape(0);
        Nogil nogil;
        return cw::graph_context_text(g, vis, text, nc, c, params, k, filter, rp);
      },
      "graph"_a, "index"_a, "terms"_a, "n_hits"_a = 10, "concepts"_a = py::none(), "restart"_a = 0.25,
      "eps"_a = 1e-4, "k"_a = 20, "node_type"_a = py::none(), "keep_types"_a = py::none(),
      "visible"_a = py::none(), "stats"_a = py::none(), "rank"_a = 0, "max_hops"_a = 2,
      "max_visits"_a = cw::kCoverageVisits, "k1"_a = 1.2, "b"_a = 0.75,
      "graph_context from a question in one call: BM25 top n_hits over the visible documents (the graph's "
      "nodes; stats over the same visible set, or None), hits seeded 1/rank and the given concepts 1, then "
      "graph_context over those seeds; returns a ContextResult whose hits are the search seeds and whose "
      "seeded is false when there was no seed.");

  m.def(
      "context_batch",
      [](const cw::CSRGraph& g, const carray<std::int64_t>& seed_ptr, py::handle seeds_in,
         const carray<double>& weights, double restart, double eps, std::int64_t k,
         const std::optional<carray<std::int32_t>>& node_type, const std::optional<carray<bool>>& keep_types,
         int threads, py::handle visible, std::int32_t rank, std::int32_t max_hops, std::int64_t max_visits) {
        const carray<std::int32_t> seeds = node_array(seeds_in, g, "seeds");
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        check_1d(seed_ptr, "seed_ptr");
        const cw::NodeTypeFilter filter = type_filter(g, node_type, keep_types);
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const cw::PPRParams params{restart, eps, 0};
        const std::int64_t* ptr = seed_ptr.data();
        const std::int64_t np = seed_ptr.shape(0), ns = seeds.shape(0);
        const std::int32_t* s = seeds.data();
        const double* w = weights.data();
        const cw::RankParams rp{static_cast<cw::Rank>(rank), max_hops, max_visits};
        Nogil nogil;
        return cw::graph_context_batch(g, vis, np, ptr, ns, s, w, params, k, filter, threads, rp);
      },
      "graph"_a, "seed_ptr"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 20,
      "node_type"_a = py::none(), "keep_types"_a = py::none(), "threads"_a = 1, "visible"_a = py::none(),
      "rank"_a = 0, "max_hops"_a = 2, "max_visits"_a = cw::kCoverageVisits,
      "graph_context's core work for many queries across threads; returns a ContextBatch.");
}
