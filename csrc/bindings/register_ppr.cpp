// Personalized PageRank: one seed set, the certified top-k, and many seed sets across threads.
// Results are bound read-only classes whose arrays are views of the result (no copy).
#include "prelude.hpp"

#include "conceptwalk/batch.hpp"
#include "conceptwalk/ppr.hpp"

void register_ppr(py::module_& m) {
  py::class_<cw::PPRResult>(
      m, "PPRResult",
      "One PPR result: nodes with p > 0 by score descending then index ascending, their scores "
      "(underestimates of exact PPR), the unpushed mass and the work done. Read-only.")
      .def_property_readonly("nodes", vector_property(&cw::PPRResult::nodes))
      .def_property_readonly("scores", vector_property(&cw::PPRResult::scores))
      .def_readonly("residual", &cw::PPRResult::residual)
      .def_readonly("pushes", &cw::PPRResult::pushes)
      .def_readonly("edge_visits", &cw::PPRResult::edge_visits)
      .def_readonly("truncated", &cw::PPRResult::truncated)
      .def_readonly("eps", &cw::PPRResult::eps)
      .def_readonly("certified", &cw::PPRResult::certified);

  py::class_<cw::PPRBatch>(
      m, "PPRBatch",
      "Many PPR results: query i's nodes and scores at ptr[i]:ptr[i + 1], per-query residual, "
      "eps, pushes, edge_visits and truncated. Read-only.")
      .def_property_readonly("ptr", vector_property(&cw::PPRBatch::ptr))
      .def_property_readonly("nodes", vector_property(&cw::PPRBatch::nodes))
      .def_property_readonly("scores", vector_property(&cw::PPRBatch::scores))
      .def_property_readonly("residual", vector_property(&cw::PPRBatch::residual))
      .def_property_readonly("eps", vector_property(&cw::PPRBatch::eps))
      .def_property_readonly("pushes", vector_property(&cw::PPRBatch::pushes))
      .def_property_readonly("edge_visits", vector_property(&cw::PPRBatch::edge_visits))
      .def_property_readonly("truncated", flag_property(&cw::PPRBatch::truncated));

  m.def(
      "personalized_pagerank",
      [](const cw::CSRGraph& g, py::handle seeds_in, const carray<double>& weights, double restart, double eps,
         std::int64_t k, std::int64_t max_pushes, py::handle visible, double max_residual) {
        const carray<std::int32_t> seeds = node_array(seeds_in, g, "seeds");
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const cw::PPRParams params{restart, eps, max_pushes, max_residual};
        const std::int32_t* s = seeds.data();
        const double* w = weights.data();
        const std::int64_t n = seeds.shape(0);
        py::gil_scoped_release nogil;
        return cw::personalized_pagerank(g, vis, n, s, w, params, k);
      },
      "graph"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0, "max_pushes"_a = 0,
      "visible"_a = py::none(), "max_residual"_a = 0.0,
      "Forward push from the seeds (int32 node indices) with their weights; returns a PPRResult.");

  m.def(
      "personalized_pagerank_certified",
      [](const cw::CSRGraph& g, py::handle seeds_in, const carray<double>& weights, double restart, double eps,
         std::int64_t k, double shrink, double min_eps, std::int64_t max_pushes, py::handle visible) {
        const carray<std::int32_t> seeds = node_array(seeds_in, g, "seeds");
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const cw::PPRParams params{restart, eps, max_pushes};
        const std::int32_t* s = seeds.data();
        const double* w = weights.data();
        const std::int64_t n = seeds.shape(0);
        py::gil_scoped_release nogil;
        return cw::personalized_pagerank_certified(g, vis, n, s, w, params, k, shrink, min_eps);
      },
      "graph"_a, "seeds"_a, "weights"_a, "restart"_a, "eps"_a, "k"_a, "shrink"_a, "min_eps"_a, "max_pushes"_a,
      "visible"_a = py::none(),
      "Push, lowering eps until the top-k is proven exact or the push budget is spent; returns a PPRResult.");

  m.def(
      "ppr_batch",
      [](const cw::CSRGraph& g, const carray<std::int64_t>& seed_ptr, py::handle seeds_in,
         const carray<double>& weights, double restart, double eps, std::int64_t k, std::int64_t max_pushes,
         int threads, py::handle visible) {
        const carray<std::int32_t> seeds = node_array(seeds_in, g, "seeds");
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        check_1d(seed_ptr, "seed_ptr");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const cw::PPRParams params{restart, eps, max_pushes};
        const std::int64_t* ptr = seed_ptr.data();
        const std::int64_t np = seed_ptr.shape(0), ns = seeds.shape(0);
        const std::int32_t* s = seeds.data();
        const double* w = weights.data();
        py::gil_scoped_release nogil;
        return cw::personalized_pagerank_batch(g, vis, np, ptr, ns, s, w, params, k, threads);
      },
      "graph"_a, "seed_ptr"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0,
      "max_pushes"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Many PPR queries across threads (query i: seeds[seed_ptr[i]:seed_ptr[i+1]]); returns a "
      "PPRBatch, each query's slice identical to personalized_pagerank.");
}
