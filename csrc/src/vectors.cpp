#include "conceptwalk/vectors.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>

#include "conceptwalk/common.hpp"
#include "conceptwalk/topk.hpp"

namespace cw {

namespace {

// Per-thread scratch: four lane sums per row, all zero between calls.
struct Scratch {
  std::vector<double> acc;
};

Scratch& scratch(std::int64_t n) {
  thread_local Scratch s;
  const std::size_t need = static_cast<std::size_t>(n);
  if (s.acc.size() < 4 * need) s.acc.resize(4 * need, 0.0);
  return s;
}

}  // namespace

SparseVectors::SparseVectors(std::int64_t n, std::int64_t dim, const std::int64_t* indptr,
                             const std::int32_t* indices, const float* values, std::int64_t nnz)
    : n_(n), dim_(dim) {
  if (n < 0 || n > INT32_MAX) throw InvalidArgument("rows must be in [0, 2**31 - 1], got " + std::to_string(n));
  if (dim < 0 || dim > INT32_MAX)
    throw InvalidArgument("dim must be in [0, 2**31 - 1], got " + std::to_string(dim));
  if (indptr[0] != 0 || indptr[n] != nnz)
    throw InvalidArgument("indptr must start at 0 and end at the number of entries");
  std::vector<std::int64_t> count(static_cast<std::size_t>(dim) + 1, 0);
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int64_t a = indptr[r], b = indptr[r + 1];
    if (b < a || b > nnz) throw InvalidArgument("indptr must be non-decreasing");
    std::int32_t prev = -1;
    for (std::int64_t e = a; e < b; ++e) {
      const std::int32_t j = indices[e];
      if (j < 0 || j >= dim)
        throw InvalidArgument("indices: dimension " + std::to_string(j) + " out of range [0, " +
                              std::to_string(dim) + ")");
      if (j <= prev) throw InvalidArgument("indices must be strictly ascending within a row");
      prev = j;
      if (!std::isfinite(values[e])) throw InvalidArgument("values must be finite");
      if (values[e] != 0.0f) ++count[static_cast<std::size_t>(j) + 1];
    }
  }
  for (std::int64_t j = 0; j < dim; ++j) count[j + 1] += count[j];
  colptr_ = count;
  const std::size_t kept = static_cast<std::size_t>(count[dim]);
  rows_.resize(kept);
  vals_.resize(kept);
  std::vector<std::int64_t> pos(count.begin(), count.end() - 1);
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t e = indptr[r]; e < indptr[r + 1]; ++e) {
      if (values[e] == 0.0f) continue;
      const std::int64_t p = pos[indices[e]]++;
      rows_[p] = static_cast<std::int32_t>(r);
      vals_[p] = values[e];
    }
}

SparseVectors SparseVectors::from_columns(std::int64_t n, std::int64_t dim, const std::int64_t* colptr,
                                          const std::int32_t* rows, const float* values, std::int64_t nnz) {
  if (n < 0 || n > INT32_MAX) throw InvalidArgument("rows must be in [0, 2**31 - 1], got " + std::to_string(n));
  if (dim < 0 || dim > INT32_MAX)
    throw InvalidArgument("dim must be in [0, 2**31 - 1], got " + std::to_string(dim));
  if (nnz < 0 || colptr[0] != 0 || colptr[dim] != nnz)
    throw InvalidArgument("colptr must start at 0 and end at the number of entries");
  for (std::int64_t j = 0; j < dim; ++j) {
    const std::int64_t a = colptr[j], b = colptr[j + 1];
    if (b < a || b > nnz) throw InvalidArgument("colptr must be non-decreasing");
    for (std::int64_t e = a; e < b; ++e) {
      const std::int32_t r = rows[e];
      if (r < 0 || r >= n)
        throw InvalidArgument("rows: row " + std::to_string(r) + " out of range [0, " + std::to_string(n) + ")");
      if (e > a && r <= rows[e - 1]) throw InvalidArgument("rows must be strictly ascending within a column");
      if (!std::isfinite(values[e]) || values[e] == 0.0f)
        throw InvalidArgument("values must be finite and nonzero");
    }
  }
  SparseVectors out;
  out.n_ = n;
  out.dim_ = dim;
  out.colptr_.assign(colptr, colptr + dim + 1);
  out.rows_.assign(rows, rows + nnz);
  out.vals_.assign(values, values + nnz);
  return out;
}

SparseHits SparseVectors::topk(const float* query, std::int64_t k, const std::uint8_t* visible,
                               double min_score) const {
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  for (std::int64_t j = 0; j < dim_; ++j)
    if (!std::isfinite(query[j])) throw InvalidArgument("query must be finite");
  SparseHits out;
  const std::size_t kk = static_cast<std::size_t>(std::min<std::int64_t>(k, n_));
  if (kk == 0) return out;
  Scratch& s = scratch(n_);
  double* acc = s.acc.data();
  const std::int64_t main = dim_ - dim_ % 4;
  // columns ascending: each lane sums in ascending j. Every row's lanes are accumulated (a
  // hidden row's sums are never read: its score is neither kept nor compared), which keeps the
  // loop free of branches; the visible rows are picked in the scan below.
  for (std::int64_t j = 0; j < dim_; ++j) {
    const float qf = query[j];
    if (qf == 0.0f) continue;
    const double q = static_cast<double>(qf);
    double* lane = acc + (j < main ? (j & 3) : 0);
    const std::int32_t* rp = rows_.data();
    const float* vp = vals_.data();
    for (std::int64_t e = colptr_[j], end = colptr_[j + 1]; e < end; ++e)
      lane[4 * static_cast<std::int64_t>(rp[e])] += static_cast<double>(vp[e]) * q;
  }
  TopK top(kk);
  // a row sharing no dimension with the query scores (0 + 0) + (0 + 0) = 0.0, as the dense scan
  for (std::int64_t r = 0; r < n_; ++r) {
    double* a = acc + 4 * r;
    if (visible == nullptr || visible[r]) {
      const ScoredIndex h{(a[0] + a[1]) + (a[2] + a[3]), static_cast<std::int32_t>(r)};
      if (h.score >= min_score && top.admits(h)) top.offer(h);
    }
    a[0] = a[1] = a[2] = a[3] = 0.0;
  }
  const std::vector<ScoredIndex> best = std::move(top).sorted();
  out.rows.reserve(best.size());
  out.scores.reserve(best.size());
  for (const ScoredIndex& h : best) {
    out.rows.push_back(h.index);
    out.scores.push_back(h.score);
  }
  return out;
}

}  // namespace cw
