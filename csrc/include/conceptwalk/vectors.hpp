// conceptwalk core: exact vector top-k, sparse (an inverted index of dimensions) and dense.
// Pure C++17, no Python.
//
// Every score is a dot product summed in float64 in four lanes (dimension j in lane j % 4, the
// dim % 4 trailing dimensions in lane 0), each lane in ascending j, and returned as
// (lane0 + lane1) + (lane2 + lane3): cw::dot_fixed. It depends on that row and the query only
// (never on the other rows, on which rows are visible, or on threads), so it is exact to
// deleting the hidden rows. The sparse index sums the same lanes without their zero products,
// which never change a lane, so its scores equal the dense scan's bit for bit.
//
// The dense top-k prunes with bounds and re-ranks exactly: int8 codes with a per-row scale give
// each row an approximation with a proven error bound, the k-th best lower bound among the
// visible rows rules out every row whose upper bound falls below it, and the rows left are
// scored exactly in the fixed order above. A row's bound depends on that row and the query
// only, so a hidden row never changes which visible row is returned, nor its score or rank; the
// result is the full scan's, order and bits included (ties: lower row first, cw::TopK). The
// sparse top-k sums the exact lanes (row block by row block for a narrow query; no bound
// prunes the built-in char n-gram hashing vectors: see docs/performance.md).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "conceptwalk/csr_graph.hpp"

namespace cw {

struct VectorHits {
  std::vector<std::int32_t> rows;
  std::vector<double> scores;
};
using SparseHits = VectorHits;

// The fixed-order dot product of two float32 vectors (the lanes above).
double dot_fixed(const float* a, const float* b, std::int64_t dim);

// Exact top-k rows of `matrix` (n x dim, row-major float32) by dot product with `query`, over the
// rows with visible[r] != 0 (nullable: all), keeping only scores >= min_score (NaN scores are
// dropped); by score descending, then row ascending. Reads every visible row in full.
VectorHits vector_topk(const float* matrix, std::int64_t n, std::int64_t dim, const float* query, std::int64_t k,
                       const std::uint8_t* visible, double min_score);

class DenseDelta;

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
  // With `keep`, `rows` and `values` are borrowed instead (no copy: `keep` must keep them alive
  // and unchanged for the index's lifetime, e.g. a memory-mapped snapshot file's pages).
  static SparseVectors from_columns(std::int64_t n, std::int64_t dim, const std::int64_t* colptr,
                                    const std::int32_t* rows, const float* values, std::int64_t nnz,
                                    std::shared_ptr<const void> keep = nullptr);

  const std::vector<std::int64_t>& colptr() const { return colptr_; }
  const Buffer<std::int32_t>& col_rows() const { return rows_; }
  const Buffer<float>& col_values() const { return vals_; }
  // True when the entries are borrowed (from_columns with `keep`), not owned.
  bool borrowed() const { return rows_.borrowed(); }

  std::int64_t rows() const { return n_; }
  std::int64_t dim() const { return dim_; }
  std::int64_t nnz() const { return static_cast<std::int64_t>(rows_.size()); }

  // Top k rows by dot product with `query` (dim float32, finite) among the rows with
  // visible[r] != 0 (nullable: all) scoring >= min_score (rows with no common dimension score
  // 0.0); by score descending, then row ascending. The work is the query's column entries: a
  // query whose columns hold at least n / 2 entries takes topk_scan when n <= kScanMaxRows
  // (its one pass over all rows costs no more than those entries, and its lanes, 32 bytes a
  // row, stay in the last-level cache), else topk_blocked (no work over the row blocks the
  // query misses; its lanes, 512 KiB, stay in the second-level cache). Never an O(n) clear beyond the entries
  // summed. Measured on the hashing vectors' queries (~18 entries per row): the scan 0.31 ms
  // vs blocked (1,024-row blocks) 0.36 ms at 20k rows; with 16,384-row blocks 5.1 vs 5.3 ms at
  // 200k, 90 vs 28 ms at 1M (1,024-row blocks: 37 ms, 8,192: 31 ms).
  SparseHits topk(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;

  // Row block by row block (kRowBlock rows): the block's slices of the query's columns are
  // summed into one block of lanes (512 KiB), ranked and cleared as they are read; a block the
  // query's columns miss scores 0.0 throughout and is read only while a 0.0 can still enter.
  SparseHits topk_blocked(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;
  SparseHits topk_pruned(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const {
    return topk_blocked(query, k, visible, min_score);
  }

  // The lanes of all n rows summed at once over the query's columns, then every row ranked and
  // its lanes cleared (what topk did before the blocks; its path for wide queries).
  SparseHits topk_scan(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;

  static constexpr std::int64_t kRowBlock = 16384;
  static constexpr std::int64_t kScanMaxRows = std::int64_t{1} << 19;  // 524,288 rows: 16 MiB of lanes

 private:
  SparseVectors() = default;
  std::int64_t n_ = 0, dim_ = 0;
  std::vector<std::int64_t> colptr_;  // dimension j's entries are [colptr_[j], colptr_[j + 1])
  Buffer<std::int32_t> rows_;         // by dimension, then row ascending (owned, or borrowed from_columns)
  Buffer<float> vals_;
  // per row block b (kRowBlock rows) and dimension j, the first entry of column j whose row is
  // in block b or later: [blockptr_[b * dim + j], blockptr_[(b + 1) * dim + j]) is the block's
  // slice of the column ((n / kRowBlock + 2) * dim entries).
  std::vector<std::int64_t> blockptr_;
  void index_blocks();
};

// Dense rows (n x dim float32, row-major, not owned: the matrix must outlive the index and not
// change) with per-row int8 codes for a pruned exact top-k. Row r is coded as
// scale[r] * code[r][j] (scale = max|v| / 127, codes rounded to nearest) with err[r] the largest
// coding error of the row and l1[r] its L1 norm, all computed from that row alone; the query
// is coded the same way per query. The integer dot product is exact, so
//   |q.v - tq * scale[r] * (Q . code[r])| <= err[r] * tq * |Q|_1 + errq * l1[r] (+ rounding),
// a bound per row; the rows whose upper bound reaches the k-th best lower bound are re-scored
// with dot_fixed from the float rows. Same result as vector_topk, bit for bit.
class DenseVectors {
 public:
  DenseVectors(const float* matrix, std::int64_t n, std::int64_t dim);
  // The same index as DenseVectors(matrix, n, dim), codes and all, taking row r's codes from
  // base's row base_rows[r] (-1: none) when the two rows are equal bit for bit and coding the
  // other rows (a write that changed a few rows of a large matrix re-codes those only). Any
  // base_rows is sound: a row that differs from the one named is coded. base_rows[r] must be
  // in [-1, base.rows()) and base.dim() == dim (checked); base's matrix must still be the one
  // it was made from.
  DenseVectors(const float* matrix, std::int64_t n, std::int64_t dim, const DenseVectors& base,
               const std::int32_t* base_rows);

  std::int64_t rows() const { return n_; }
  std::int64_t dim() const { return dim_; }

  // vector_topk(matrix, n, dim, query, k, visible, min_score), pruned (a large k, 8k >= n,
  // scans). Query finite (checked).
  VectorHits topk(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;
  // The pruned path whatever k (for tests; a zero query, or dim > 131072 with no codes, scans).
  VectorHits topk_pruned(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;
  // vector_topk over the rows.
  VectorHits topk_scan(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const {
    return vector_topk(m_, n_, dim_, query, k, visible, min_score);
  }

 private:
  friend class DenseDelta;
  const float* m_;
  std::int64_t n_, dim_;
  std::vector<std::int8_t> code_;  // n x dim
  std::vector<float> scale_;       // per row: code unit
  std::vector<double> err_, l1_;   // per row: largest coding error (rounded up), L1 norm (rounded up)
  void check_shape() const;
  void code_row(std::int64_t r);  // row r's code, scale, err and l1 from m_ (allocated)
  // The pruned top-k over the rows of `delta` (see DenseDelta), or over all rows (delta null).
  VectorHits topk_over(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score,
                       const DenseDelta* delta, bool pruned) const;
};

// A base DenseVectors plus a small delta: the rows of a matrix of n rows that a few writes made
// from the base's matrix without copying or re-coding it. The new matrix's rows are either base
// rows, read through runs -- run i maps the base rows [runs[3i], runs[3i + 1]) to the new rows
// starting at runs[3i + 2] (a base row in no run is excluded: tombstoned or rewritten) -- or delta
// rows, held here (ndelta x dim float32, copied) with their new row numbers (strictly
// ascending). Runs ascend and are disjoint on both sides, and runs and delta rows together cover
// [0, n) exactly once (checked; InvalidArgument otherwise, as for non-finite delta rows).
// topk is vector_topk over the new matrix, bit for bit: every score is dot_fixed of one row and
// the query, the delta rows are scored exactly and seed the pruning bound, the base rows are
// pruned by their codes as in DenseVectors::topk, and ties break by the new row ascending.
// The base must outlive the delta and not change. A query costs the base's pruned top-k plus
// the delta rows' exact scores: no O(n) allocation or clear.
class DenseDelta {
 public:
  DenseDelta(const DenseVectors& base, std::int64_t n, std::vector<std::int64_t> runs, std::vector<float> rows,
             std::vector<std::int32_t> row_numbers);

  std::int64_t rows() const { return n_; }
  std::int64_t dim() const { return base_->dim(); }
  std::int64_t delta_rows() const { return static_cast<std::int64_t>(row_numbers_.size()); }
  std::int64_t runs() const { return static_cast<std::int64_t>(runs_.size() / 3); }
  const DenseVectors& base() const { return *base_; }

  // vector_topk over the new matrix (pruned, or a scan of the base runs for a large k: 8k >= n).
  VectorHits topk(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;
  VectorHits topk_pruned(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;
  VectorHits topk_scan(const float* query, std::int64_t k, const std::uint8_t* visible, double min_score) const;

 private:
  friend class DenseVectors;
  const DenseVectors* base_;
  std::int64_t n_;
  std::vector<std::int64_t> runs_;  // nruns x 3: base begin, base end, new begin
  std::vector<float> rows_;         // ndelta x dim
  std::vector<std::int32_t> row_numbers_;
};

}  // namespace cw
