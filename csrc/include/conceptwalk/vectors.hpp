// conceptwalk core: exact top-k of sparse vectors through an inverted index of their dimensions.
// Pure C++17, no Python.
//
// SparseVectors holds n rows of dimension dim by column (for each dimension, the rows with a
// nonzero entry there, ascending, and their float32 values). A query reads only the columns of
// its own nonzero dimensions. Each row's score is summed in float64 in four lanes (dimension j
// in lane j % 4, the dim % 4 trailing dimensions in lane 0), each lane in ascending j, and
// returned as (lane0 + lane1) + (lane2 + lane3): the order of cw::dot_fixed minus its zero
// products, which never change a lane, so a score equals, bit for bit, what vector_topk gives
// on the dense rows, and depends on that row and the query only (never on the other rows, on
// which rows are visible, or on threads): exact to deleting the hidden rows. The scatter over
// the query's columns sums every row (no per-entry branch); only visible rows are then ranked.
#pragma once
#include <cstdint>
#include <vector>

namespace cw {

struct SparseHits {
  std::vector<std::int32_t> rows;
  std::vector<double> scores;
};

class SparseVectors {
 public:
  // From rows in CSR form: row r's entries are [indptr[r], indptr[r + 1]) of `indices` (the
  // dimensions, each in [0, dim), ascending and distinct within a row) and `values` (finite).
  // Zero values are dropped. Throws InvalidArgument on malformed input.
  SparseVectors(std::int64_t n, std::int64_t dim, const std::int64_t* indptr, const std::int32_t* indices,
                const float* values, std::int64_t nnz);

  // From the index itself, as colptr() / col_rows() / col_values() give it (a saved copy): the
  // same rows scored the same way, bit for bit. Checked entry by entry (column pointers
  // non-decreasing from 0 to nnz, rows in [0, n) strictly ascending within a column, values
  // finite and nonzero); throws InvalidArgument otherwise.
  static SparseVectors from_columns(std::int64_t n, std::int64_t dim, const std::int64_t* colptr,
                                    const std::int32_t* rows, const float* values, std::int64_t nnz);

  const std::vector<std::int64_t>& colptr() const { return colptr_; }
  const std::vector<std::int32_t>& col_rows() const { return rows_; }
  const std::vector<float>& col_values() const { return vals_; }

  std::int64_t rows() const { return n_; }
  std::int64_t dim() const { return dim_; }
  std::int64_t nnz() const { return static_cast<std::int64_t>(rows_.size()); }

  // Top k rows by dot product with `query` (dim float32, finite) among the rows with
  // visible[r] != 0 (nullable: all) scoring >= min_score (rows with no common dimension score
  // 0.0); by score descending, then row ascending.
  SparseHits topk(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;

 private:
  SparseVectors() = default;
  std::int64_t n_ = 0, dim_ = 0;
  std::vector<std::int64_t> colptr_;  // dimension j's entries are [colptr_[j], colptr_[j + 1])
  std::vector<std::int32_t> rows_;    // by dimension, then row ascending
  std::vector<float> vals_;
};

}  // namespace cw
