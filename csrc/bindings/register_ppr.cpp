#include "prelude.hpp"

#include "conceptwalk/batch.hpp"
#include "conceptwalk/ppr.hpp"

namespace {

py::tuple result_tuple(cw::PPRResult&& r) {
  const double residual = r.residual;
  const auto pushes = r.pushes, visits = r.edge_visits;
  const bool truncated = r.truncated, certified = r.certified;
  const double eps = r.eps;
  return py::make_tuple(vector_to_array(std::move(r.nodes)), vector_to_array(std::move(r.scores)),
                        residual, pushes, visits, truncated, eps, certified);
}

}  // namespace

void register_ppr(py::module_& m) {
  m.def(
      "personalized_pagerank",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& seeds, const carray<double>& weights,
         double restart, double eps, std::int64_t k, std::int64_t max_pushes,
         const VisibilityMask* visible, double max_residual) {
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        const cw::Visibility vis = resolve_visibility(g, visible);
        cw::PPRParams params{restart, eps, max_pushes, max_residual};
        cw::PPRResult r;
        {
          const std::int32_t* s = seeds.data();
          const double* w = weights.data();
          const std::int64_t n = seeds.shape(0);
          py::gil_scoped_release nogil;
          r = cw::personalized_pagerank(g, vis, n, s, w, params, k);
        }
        return result_tuple(std::move(r));
      },
      "graph"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0,
      "max_pushes"_a = 0, "visible"_a = py::none(), "max_residual"_a = 0.0,
      "Forward push; returns (nodes, scores, residual, pushes, edge_visits, truncated, eps, certified).");

  m.def(
      "personalized_pagerank_certified",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& seeds, const carray<double>& weights,
         double restart, double eps, std::int64_t k, double shrink, double min_eps,
         std::int64_t max_pushes, const VisibilityMask* visible) {
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        const cw::Visibility vis = resolve_visibility(g, visible);
        cw::PPRParams params{restart, eps, max_pushes};
        cw::PPRResult r;
        {
          const std::int32_t* s = seeds.data();
          const double* w = weights.data();
          const std::int64_t n = seeds.shape(0);
          py::gil_scoped_release nogil;
          r = cw::personalized_pagerank_certified(g, vis, n, s, w, params, k, shrink, min_eps);
        }
        return result_tuple(std::move(r));
      },
      "graph"_a, "seeds"_a, "weights"_a, "restart"_a, "eps"_a, "k"_a, "shrink"_a, "min_eps"_a,
      "max_pushes"_a, "visible"_a = py::none(),
      "Push, lowering eps until the top-k is proven exact or the push budget is spent.");

  m.def(
      "personalized_pagerank_batch",
      [](const cw::CSRGraph& g, const carray<std::int64_t>& seed_ptr, const carray<std::int32_t>& seeds,
         const carray<double>& weights, double restart, double eps, std::int64_t k, int threads,
         const VisibilityMask* visible) {
        check_1d(seed_ptr, "seed_ptr");
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        if (seed_ptr.shape(0) < 1) throw py::value_error("seed_ptr must have at least one entry");
        const std::int64_t q = seed_ptr.shape(0) - 1;
        const std::int64_t* ptr = seed_ptr.data();
        if (ptr[0] != 0 || ptr[q] != seeds.shape(0))
          throw py::value_error("seed_ptr must start at 0 and end at len(seeds)");
        for (std::int64_t i = 0; i < q; ++i)
          if (ptr[i + 1] < ptr[i]) throw py::value_error("seed_ptr must be non-decreasing");
        const cw::Visibility vis = resolve_visibility(g, visible);
        cw::PPRParams params{restart, eps, 0};
        std::vector<cw::PPRResult> results(static_cast<std::size_t>(q));
        {
          const std::int32_t* s = seeds.data();
          const double* w = weights.data();
          py::gil_scoped_release nogil;
          for (std::int64_t i = 0; i < q; ++i)  // validate all before any work
            cw::validate_ppr(g, vis, ptr[i + 1] - ptr[i], s + ptr[i], w + ptr[i], params);
          cw::parallel_for(q, threads, [&](std::int64_t i) {
            results[i] = cw::personalized_pagerank(g, vis, ptr[i + 1] - ptr[i], s + ptr[i],
                                                   w + ptr[i], params, k);
          });
        }
        std::vector<std::int64_t> out_ptr(static_cast<std::size_t>(q) + 1, 0);
        for (std::int64_t i = 0; i < q; ++i) out_ptr[i + 1] = out_ptr[i] + static_cast<std::int64_t>(results[i].nodes.size());
        std::vector<cw::node_t> nodes(static_cast<std::size_t>(out_ptr[q]));
        std::vector<double> scores(static_cast<std::size_t>(out_ptr[q]));
        std::vector<double> residual(static_cast<std::size_t>(q));
        for (std::int64_t i = 0; i < q; ++i) {
          std::copy(results[i].nodes.begin(), results[i].nodes.end(), nodes.begin() + out_ptr[i]);
          std::copy(results[i].scores.begin(), results[i].scores.end(), scores.begin() + out_ptr[i]);
          residual[i] = results[i].residual;
        }
        return py::make_tuple(vector_to_array(std::move(out_ptr)), vector_to_array(std::move(nodes)),
                              vector_to_array(std::move(scores)), vector_to_array(std::move(residual)));
      },
      "graph"_a, "seed_ptr"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4,
      "k"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Many PPR queries across threads; returns (result_ptr, nodes, scores, residuals).");
}
