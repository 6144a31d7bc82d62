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

// 0: auto (pruned, or the scan for a large k), 1: always pruned, 2: the scan
int method_code(const std::string& method) {
  if (method == "auto") return 0;
  if (method == "pruned") return 1;
  if (method == "scan") return 2;
  throw py::value_error("method must be 'auto', 'pruned' or 'scan', got '" + method + "'");
}

template <class Index>
cw::VectorHits run_topk(const Index& ix, int method, const float* q, std::int64_t k, const std::uint8_t* vis,
                        double min_score) {
  if (method == 1) return ix.topk_pruned(q, k, vis, min_score);
  if (method == 2) return ix.topk_scan(q, k, vis, min_score);
  return ix.topk(q, k, vis, min_score);
}

// Dense rows and their codes; holds the rows' array so the index never outlives them.
struct DenseIndex {
  carray<float> matrix;
  std::unique_ptr<cw::DenseVectors> ix;
};

// A base index plus a delta; holds the base so the delta never outlives it.
struct DenseDeltaIndex {
  std::shared_ptr<DenseIndex> base;
  std::unique_ptr<cw::DenseDelta> ix;
};

template <class T>
std::vector<T> to_vector(const carray<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

}  // namespace

// The top-k of a dense index holder (DenseIndex or DenseDeltaIndex: `ix` with rows(), dim() and
// the index run_topk reads), checked and run with the GIL released; returns (rows, scores).
template <class H>
py::tuple dense_topk(const H& h, const carray<float>& query, std::int64_t k,
                     const std::optional<carray<std::uint8_t>>& visible, std::optional<double> min_score_opt,
                     const std::string& method) {
  const int code = method_code(method);
  const double min_score = min_score_opt ? *min_score_opt : -std::numeric_limits<double>::infinity();
  check_1d(query, "query", static_cast<py::ssize_t>(h.ix->dim()));
  const std::uint8_t* vis = row_mask(visible, h.ix->rows());
  const float* qp = query.data();
  cw::VectorHits r;
  {
    Nogil nogil;
    r = run_topk(*h.ix, code, qp, k, vis, min_score);
  }
  return py::make_tuple(vector_to_array(std::move(r.rows)), vector_to_array(std::move(r.scores)));
}

void register_vectors(py::module_& m) {
  m.def(
      "vector_topk",
      [](const carray<float>& matrix, const carray<float>& query, std::int64_t k,
         const std::optional<carray<std::uint8_t>>& visible, std::optional<double> min_score_opt) {
        const double min_score = min_score_opt ? *min_score_opt : -std::numeric_limits<double>::infinity();
        if (matrix.ndim() != 2)
          throw py::value_error("matrix must be 2-dimensional, got " + std::to_string(matrix.ndim()) +
                                " dimensions");
        const std::int64_t n = matrix.shape(0), dim = matrix.shape(1);
        check_1d(query, "query", static_cast<py::ssize_t>(dim));
        const std::uint8_t* vis = row_mask(visible, n);
        const float* mp = matrix.data();
        const float* qp = query.data();
        cw::VectorHits r;
        {
          Nogil nogil;
          r = cw::vector_topk(mp, n, dim, qp, k, vis, min_score);
        }
        return py::make_tuple(vector_to_array(std::move(r.rows)), vector_to_array(std::move(r.scores)));
      },
      "matrix"_a, "query"_a, "k"_a, "visible"_a = py::none(), "min_score"_a = py::none(),
      "Exact top-k rows by dot product over the visible rows; returns (rows, scores).");

  py::class_<DenseIndex, std::shared_ptr<DenseIndex>>(
      m, "DenseVectors", "Dense rows with per-row int8 codes, for a pruned exact dot-product top-k.")
      .def(py::init([](const carray<float>& matrix) {
             if (matrix.ndim() != 2)
               throw py::value_error("matrix must be 2-dimensional, got " + std::to_string(matrix.ndim()) +
                                     " dimensions");
             const std::int64_t n = matrix.shape(0), dim = matrix.shape(1);
             auto h = std::make_shared<DenseIndex>();
             h->matrix = matrix;
             const float* mp = h->matrix.data();
             {
               Nogil nogil;
               h->ix = std::make_unique<cw::DenseVectors>(mp, n, dim);
             }
             return h;
           }),
           "matrix"_a)
      .def(
          "updated",
          [](const std::shared_ptr<DenseIndex>& base, const carray<float>& matrix,
             const carray<std::int32_t>& base_rows) {
            if (matrix.ndim() != 2)
              throw py::value_error("matrix must be 2-dimensional, got " + std::to_string(matrix.ndim()) +
                                    " dimensions");
            const std::int64_t n = matrix.shape(0), dim = matrix.shape(1);
            check_1d(base_rows, "base_rows", static_cast<py::ssize_t>(n));
            auto h = std::make_shared<DenseIndex>();
            h->matrix = matrix;
            const float* mp = h->matrix.data();
            const std::int32_t* bp = base_rows.data();
            {
              Nogil nogil;
              h->ix = std::make_unique<cw::DenseVectors>(mp, n, dim, *base->ix, bp);
            }
            return h;
          },
          "matrix"_a, "base_rows"_a,
          "The index of matrix, taking each row's codes from base_rows[r] of this one when the rows are equal.")
      .def(
          "with_delta",
          [](const std::shared_ptr<DenseIndex>& base, std::int64_t n, const carray<std::int64_t>& runs,
             const carray<float>& rows, const carray<std::int32_t>& row_numbers) {
            const std::int64_t dim = base->ix->dim();
            if (runs.ndim() != 2 || runs.shape(1) != 3)
              throw py::value_error("runs must have shape (m, 3), got " + std::to_string(runs.ndim()) +
                                    " dimensions" +
                                    (runs.ndim() == 2 ? " of width " + std::to_string(runs.shape(1)) : ""));
            if (rows.ndim() != 2 || rows.shape(1) != dim)
              throw py::value_error("rows must have shape (m, " + std::to_string(dim) + ")");
            check_1d(row_numbers, "row_numbers", rows.shape(0));
            auto h = std::make_shared<DenseDeltaIndex>();
            h->base = base;
            std::vector<std::int64_t> rv = to_vector(runs);
            std::vector<float> dv = to_vector(rows);
            std::vector<std::int32_t> nv = to_vector(row_numbers);
            {
              Nogil nogil;
              h->ix = std::make_unique<cw::DenseDelta>(*base->ix, n, std::move(rv), std::move(dv), std::move(nv));
            }
            return h;
          },
          "n"_a, "runs"_a, "rows"_a, "row_numbers"_a,
          "This index's rows read through runs (base begin, base end, new begin) plus delta rows at row_numbers: "
          "a matrix of n rows, neither copied nor re-coded.")
      .def_property_readonly("rows", [](const DenseIndex& h) { return h.ix->rows(); })
      .def_property_readonly("dim", [](const DenseIndex& h) { return h.ix->dim(); })
      .def_property_readonly(
          "matrix", [](const DenseIndex& h) { return h.matrix; }, "The rows (the array held).")
      .def(
          "topk", &dense_topk<DenseIndex>, "query"_a, "k"_a, "visible"_a = py::none(), "min_score"_a = py::none(),
          "method"_a = "auto",
          "Exact top-k rows by dot product over the visible rows (vector_topk's result); returns (rows, scores).");

  py::class_<DenseDeltaIndex, std::shared_ptr<DenseDeltaIndex>>(
      m, "DenseDelta", "A DenseVectors base read through runs plus a few delta rows (DenseVectors.with_delta).")
      .def_property_readonly("rows", [](const DenseDeltaIndex& h) { return h.ix->rows(); })
      .def_property_readonly("dim", [](const DenseDeltaIndex& h) { return h.ix->dim(); })
      .def_property_readonly("delta_rows", [](const DenseDeltaIndex& h) { return h.ix->delta_rows(); })
      .def_property_readonly("runs", [](const DenseDeltaIndex& h) { return h.ix->runs(); })
      .def_property_readonly(
          "base", [](const DenseDeltaIndex& h) { return h.base; }, "The base index read.")
      .def("topk", &dense_topk<DenseDeltaIndex>, "query"_a, "k"_a, "visible"_a = py::none(),
           "min_score"_a = py::none(), "method"_a = "auto",
           "Exact top-k rows of the base-plus-delta matrix by dot product over the visible rows (vector_topk's "
           "result on that matrix); returns (rows, scores).");

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
             Nogil nogil;
             return std::make_shared<cw::SparseVectors>(n, dim, ip, ix, vp, nnz);
           }),
           "n"_a, "dim"_a, "indptr"_a, "indices"_a, "values"_a)
      .def_static(
          "from_columns",
          [](std::int64_t n, std::int64_t dim, const carray<std::int64_t>& colptr,
             const carray<std::int32_t>& rows, const carray<float>& values, const py::tuple& borrow) {
            if (dim < 0) throw py::value_error("dim must be non-negative, got " + std::to_string(dim));
            check_1d(colptr, "colptr", static_cast<py::ssize_t>(dim + 1));
            check_1d(rows, "rows");
            check_1d(values, "values", rows.shape(0));
            const std::int64_t* cp = colptr.data();
            const std::int32_t* rp = rows.data();
            const float* vp = values.data();
            const std::int64_t nnz = rows.shape(0);
            std::shared_ptr<const void> keep = borrow_keeper(borrow, rows, values);  // or copy
            Nogil nogil;
            return std::make_shared<cw::SparseVectors>(
                cw::SparseVectors::from_columns(n, dim, cp, rp, vp, nnz, std::move(keep)));
          },
          "n"_a, "dim"_a, "colptr"_a, "rows"_a, "values"_a, "borrow"_a = py::tuple(),
          "The index from its own arrays (colptr, col_rows, col_values of an index): checked entry by entry. "
          "Copied, unless `borrow` is the tuple (rows, values) of the arrays given, both read-only, aligned, "
          "C-contiguous, of the right dtype and over memory no Python code can change (a read-only mmap, "
          "bytes): then the index keeps them (no copy).")
      .def_property_readonly("colptr", vector_property(&cw::SparseVectors::colptr),
                             "Per dimension j, its entries are [colptr[j], colptr[j + 1]) (read-only view).")
      .def_property_readonly(
          "col_rows",
          [](py::object self) {
            const auto& b = self.cast<const cw::SparseVectors&>().col_rows();
            return readonly_view(b.data(), static_cast<std::int64_t>(b.size()), self);
          },
          "The entries' rows, by dimension then row (read-only view).")
      .def_property_readonly(
          "col_values",
          [](py::object self) {
            const auto& b = self.cast<const cw::SparseVectors&>().col_values();
            return readonly_view(b.data(), static_cast<std::int64_t>(b.size()), self);
          },
          "The entries' values, aligned with col_rows (read-only view).")
      .def_property_readonly("borrowed", &cw::SparseVectors::borrowed,
                             "Whether the entries are borrowed from the arrays given to from_columns.")
      .def_property_readonly("rows", &cw::SparseVectors::rows)
      .def_property_readonly("dim", &cw::SparseVectors::dim)
      .def_property_readonly("nnz", &cw::SparseVectors::nnz)
      .def(
          "topk",
          [](const cw::SparseVectors& sv, const carray<float>& query, std::int64_t k,
             const std::optional<carray<std::uint8_t>>& visible, std::optional<double> min_score_opt,
             const std::string& method) {
            const int code = method_code(method);
            const double min_score = min_score_opt ? *min_score_opt : -std::numeric_limits<double>::infinity();
            check_1d(query, "query", static_cast<py::ssize_t>(sv.dim()));
            const std::uint8_t* vis = row_mask(visible, sv.rows());
            const float* qp = query.data();
            cw::SparseHits r;
            {
              Nogil nogil;
              r = run_topk(sv, code, qp, k, vis, min_score);
            }
            return py::make_tuple(vector_to_array(std::move(r.rows)), vector_to_array(std::move(r.scores)));
          },
          "query"_a, "k"_a, "visible"_a = py::none(), "min_score"_a = py::none(), "method"_a = "auto",
          "Exact top-k rows by dot product over the visible rows; returns (rows, scores).");
}
