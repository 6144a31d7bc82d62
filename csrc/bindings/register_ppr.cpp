// Personalized PageRank: one seed set, the certified top-k, and many seed sets across threads.
// Results are bound read-only classes whose arrays are views of the result (no copy).
#include "prelude.hpp"

#include "conceptwalk/batch.hpp"
#include "conceptwalk/ppr.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace {

// A vector as a read-only 1-D numpy array that owns it (no copy), like the result views.
template <class T>
py::array_t<T> readonly_array(std::vector<T>&& v) {
  py::array_t<T> a = vector_to_array(std::move(v));
  py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return a;
}

// The seeds of a plain dict {exact str id: int or float weight} as ascending node indices and
// their weights, when every id is a node visible under vis and every weight is finite, >= 0 and
// some > 0; false otherwise (the caller then takes the checked path, which raises the one error
// text, or accepts what this one leaves to it: other mappings, str subclasses, numpy weights).
bool dict_seeds(py::handle seeds, py::handle index, const cw::CSRGraph& g, const cw::Visibility& vis,
                std::vector<std::pair<cw::node_t, double>>& out) {
  if (!PyDict_CheckExact(seeds.ptr())) return false;
  out.clear();
  Py_ssize_t pos = 0;
  PyObject *key = nullptr, *value = nullptr;
  bool positive = false;
  while (PyDict_Next(seeds.ptr(), &pos, &key, &value)) {
    double w;
    if (PyFloat_CheckExact(value)) {
      w = PyFloat_AS_DOUBLE(value);
    } else if (PyLong_CheckExact(value)) {
      w = PyLong_AsDouble(value);
      if (w == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();  // too large for a float: the checked path says so
        return false;
      }
    } else {
      return false;
    }
    if (!std::isfinite(w) || w < 0.0) return false;
    positive = positive || w > 0.0;
    // Borrowed references: the lookup may run Python code (an id index's __getitem__), so the
    // key is held while it runs.
    py::object k = py::reinterpret_borrow<py::object>(key);
    const cw::node_t u = lookup_visible_id(index, k, g, vis);
    if (u < 0) return false;
    out.emplace_back(u, w);
  }
  if (out.empty() || !positive) return false;
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return true;
}

}  // namespace

void register_ppr(py::module_& m) {
  m.attr("PUSH_VISITS") = cw::kPushVisits;
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
        Nogil nogil;
        return cw::personalized_pagerank(g, vis, n, s, w, params, k);
      },
      "graph"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0, "max_pushes"_a = 0,
      "visible"_a = py::none(), "max_residual"_a = 0.0,
      "Forward push from the seeds (int32 node indices) with their weights; returns a PPRResult.");

  m.def(
      "personalized_pagerank_ids",
      [](const cw::CSRGraph& g, py::handle index, py::handle seeds, double restart, double eps, std::int64_t k,
         std::int64_t max_pushes, py::handle visible, double max_residual) -> py::object {
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        std::vector<std::pair<cw::node_t, double>> pairs;
        if (!dict_seeds(seeds, index, g, vis, pairs)) return py::none();
        const auto n = static_cast<std::int64_t>(pairs.size());
        std::vector<cw::node_t> s(pairs.size());
        std::vector<double> w(pairs.size());
        for (std::size_t i = 0; i < pairs.size(); ++i) {
          s[i] = pairs[i].first;
          w[i] = pairs[i].second;
        }
        const cw::PPRParams params{restart, eps, max_pushes, max_residual};
        cw::PPRResult r;
        {
          Nogil nogil;
          r = cw::personalized_pagerank(g, vis, n, s.data(), w.data(), params, k);
        }
        return py::make_tuple(readonly_array(std::move(r.nodes)), readonly_array(std::move(r.scores)), r.residual,
                              r.eps, r.pushes, r.edge_visits, r.truncated, r.certified);
      },
      "graph"_a, "index"_a, "seeds"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0, "max_pushes"_a = 0,
      "visible"_a = py::none(), "max_residual"_a = 0.0,
      "personalized_pagerank from a dict {id: weight}, the ids resolved through `index` in the same "
      "call: None unless every key is an exact str id of a node visible under `visible` and every "
      "weight an int or float, finite, >= 0, not all zero (the caller then takes the checked path); "
      "else (nodes, scores, residual, eps, pushes, edge_visits, truncated, certified), the arrays "
      "read-only.");

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
        Nogil nogil;
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
        Nogil nogil;
        return cw::personalized_pagerank_batch(g, vis, np, ptr, ns, s, w, params, k, threads);
      },
      "graph"_a, "seed_ptr"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0,
      "max_pushes"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Many PPR queries across threads (query i: seeds[seed_ptr[i]:seed_ptr[i+1]]); returns a "
      "PPRBatch, each query's slice identical to personalized_pagerank.");
}
