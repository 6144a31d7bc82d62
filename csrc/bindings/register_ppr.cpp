#include "prelude.hpp"

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

}
