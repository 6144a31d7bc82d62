#include "prelude.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include "conceptwalk/vectors.hpp"

namespace {

const std::uint8_t* row_mask(const std::optional<carray<std::uint8_t>>& visible, std::int64_t n) {
  if (!visible) return nullptr;
  check_1d(*visible, "visible", static_cast<py::ssize_t>(n));
  return visible->data();
}

}  // namespace

void register_vectors(py::module_& m) {
  py::class_<cw::SparseVectors, std::shared_ptr<cw::SparseVectors>>(
      m, "SparseVectors", "Sparse rows indexed by dimension, for exact dot-product top-k.")
      .def(py::init([](std::int64_t n, std::int64_t dim, const carray<std::int64_t>& indptr,
                       const carray<std::int32_t>& indices, const carray<float>& values) {
             if (n < 0) throw py::value_error("n must be non-negative, got " + std::to_string(n));
             check_1d(indptr, "indptr", static_cast<py::ssize_t>(n + 1));
             check_1d(indices, "indices");
             check_1d(values, "values", indices.shape(0));
             const std::int64_t* ip = indptr.data();
             const std::int32_t* ix = indices.data();
             const float* vp = values.data();
             const std::int64_t nnz = indices.shape(0);
             py::gil_scoped_release nogil;
             return std::make_shared<cw::SparseVectors>(n, dim, ip, ix, vp, nnz);
           }),
           "n"_a, "dim"_a, "indptr"_a, "indices"_a, "values"_a)
      .def_static(
          "from_columns",
          [](std::int64_t n, std::int64_t dim, const carray<std::int64_t>& colptr,
             const carray<std::int32_t>& rows, const carray<float>& values) {
            if (dim < 0) throw py::value_error("dim must be non-negative, got " + std::to_string(dim));
            check_1d(colptr, "colptr", static_cast<py::ssize_t>(dim + 1));
            check_1d(rows, "rows");
            check_1d(values, "values", rows.shape(0));
            const std::int64_t* cp = colptr.data();
            const std::int32_t* rp = rows.data();
            const float* vp = values.data();
            const std::int64_t nnz = rows.shape(0);
            py::gil_scoped_release nogil;
            return std::make_shared<cw::SparseVectors>(cw::SparseVectors::from_columns(n, dim, cp, rp, vp, nnz));
          },
          "n"_a, "dim"_a, "colptr"_a, "rows"_a, "values"_a,
          "The index from its own arrays (colptr, col_rows, col_values of an index): checked entry by entry.")
      .def_property_readonly("colptr", vector_property(&cw::SparseVectors::colptr),
                             "Per dimension j, its entries are [colptr[j], colptr[j + 1]) (read-only view).")
      .def_property_readonly("col_rows", vector_property(&cw::SparseVectors::col_rows),
                             "The entries' rows, by dimension then row (read-only view).")
      .def_property_readonly("col_values", vector_property(&cw::SparseVectors::col_values),
                             "The entries' values, aligned with col_rows (read-only view).")
      .def_property_readonly("rows", &cw::SparseVectors::rows)
      .def_property_readonly("dim", &cw::SparseVectors::dim)
      .def_property_readonly("nnz", &cw::SparseVectors::nnz)
      .def(
          "topk",
          [](const cw::SparseVectors& sv, const carray<float>& query, std::int64_t k,
             const std::optional<carray<std::uint8_t>>& visible, std::optional<double> min_score_opt) {
            const double min_score = min_score_opt ? *min_score_opt : -std::numeric_limits<double>::infinity();
            check_1d(query, "query", static_cast<py::ssize_t>(sv.dim()));
            const std::uint8_t* vis = row_mask(visible, sv.rows());
            const float* qp = query.data();
            cw::SparseHits r;
            {
              py::gil_scoped_release nogil;
              r = sv.topk(qp, k, vis, min_score);
            }
            return py::make_tuple(vector_to_array(std::move(r.rows)), vector_to_array(std::move(r.scores)));
          },
          "query"_a, "k"_a, "visible"_a = py::none(), "min_score"_a = py::none(),
          "Exact top-k rows by dot product over the visible rows; returns (rows, scores).");
}
