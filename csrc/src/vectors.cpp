#include "conceptwalk/vectors.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>

#include "conceptwalk/common.hpp"
#include "conceptwalk/topk.hpp"

namespace cw {

namespace {

// Per-thread scratch of the sparse top-k. Clean between calls: lanes all zero. A call that
// throws half-way leaves `dirty` set, and the next call clears them once.
struct Scratch {
  std::vector<double> lanes;  // four lane sums per row: n rows (topk_scan), one row block (topk)
  std::vector<std::int32_t> qdims;
  bool dirty = false;
};

Scratch& scratch() {
  thread_local Scratch s;
  if (s.dirty) {
    std::fill(s.lanes.begin(), s.lanes.end(), 0.0);
    s.dirty = false;
  }
  return s;
}

void check_k_query(std::int64_t k, const float* query, std::int64_t dim) {
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  for (std::int64_t j = 0; j < dim; ++j)
    if (!std::isfinite(query[j])) throw InvalidArgument("query must be finite");
}

VectorHits unpack(TopK&& top) {
  VectorHits out;
  const std::vector<ScoredIndex> best = std::move(top).sorted();
  out.rows.reserve(best.size());
  out.scores.reserve(best.size());
  for (const ScoredIndex& h : best) {
    out.rows.push_back(h.index);
    out.scores.push_back(h.score);
  }
  return out;
}

}  // namespace

double dot_fixed(const float* a, const float* b, std::int64_t dim) {
  double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0;
  std::int64_t j = 0;
  for (; j + 4 <= dim; j += 4) {
    a0 += static_cast<double>(a[j]) * static_cast<double>(b[j]);
    a1 += static_cast<double>(a[j + 1]) * static_cast<double>(b[j + 1]);
    a2 += static_cast<double>(a[j + 2]) * static_cast<double>(b[j + 2]);
    a3 += static_cast<double>(a[j + 3]) * static_cast<double>(b[j + 3]);
  }
  for (; j < dim; ++j) a0 += static_cast<double>(a[j]) * static_cast<double>(b[j]);
  return (a0 + a1) + (a2 + a3);
}

VectorHits vector_topk(const float* matrix, std::int64_t n, std::int64_t dim, const float* query, std::int64_t k,
                       const std::uint8_t* visible, double min_score) {
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  if (n < 0 || dim < 0) throw InvalidArgument("matrix shape must be non-negative");
  const std::size_t kk = static_cast<std::size_t>(std::min<std::int64_t>(k, std::max<std::int64_t>(n, 0)));
  if (kk == 0) return VectorHits{};
  TopK top(kk);
  for (std::int64_t r = 0; r < n; ++r) {
    if (visible != nullptr && !visible[r]) continue;
    const double s = dot_fixed(matrix + r * dim, query, dim);
    if (std::isnan(s) || !(s >= min_score)) continue;
    top.offer(ScoredIndex{s, static_cast<node_t>(r)});
  }
  return unpack(std::move(top));
}

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
  index_blocks();
}

SparseVectors SparseVectors::from_columns(std::int64_t n, std::int64_t dim, const std::int64_t* colptr,
                                          const std::int32_t* rows, const float* values, std::int64_t nnz,
                                          std::shared_ptr<const void> keep) {
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
  if (keep) {  // checked above entry by entry; the caller keeps them unchanged
    out.rows_.borrow(rows, static_cast<std::size_t>(nnz), keep);
    out.vals_.borrow(values, static_cast<std::size_t>(nnz), std::move(keep));
  } else {
    out.rows_.assign(rows, rows + nnz);
    out.vals_.assign(values, values + nnz);
  }
  out.index_blocks();
  return out;
}

void SparseVectors::index_blocks() {
  const std::int64_t nblk = (n_ + kRowBlock - 1) / kRowBlock;
  blockptr_.assign(static_cast<std::size_t>((nblk + 1) * dim_), 0);
  const std::int32_t* rows = static_cast<const Buffer<std::int32_t>&>(rows_).data();  // owned or borrowed
  for (std::int64_t j = 0; j < dim_; ++j) {
    std::int64_t e = colptr_[j];
    for (std::int64_t b = 0; b <= nblk; ++b) {
      const std::int64_t lo = b * kRowBlock;
      while (e < colptr_[j + 1] && rows[e] < lo) ++e;
      blockptr_[b * dim_ + j] = e;
    }
  }
}

namespace {

// Rows r0 .. r1 - 1 from their four lanes each (lanes[4 * (r - r0) ..]): each visible row's score
// (a + b) + (c + d) offered to `top` when it reaches min_score, and every row's lanes cleared. A
// row sharing no dimension with the query scores (0 + 0) + (0 + 0) = 0.0, as the dense scan.
void rank_lanes(double* lanes, std::int64_t r0, std::int64_t r1, const std::uint8_t* visible, double min_score,
                TopK& top) {
  for (std::int64_t r = r0; r < r1; ++r) {
    double* a = lanes + 4 * (r - r0);
    if (visible == nullptr || visible[r]) {
      const ScoredIndex h{(a[0] + a[1]) + (a[2] + a[3]), static_cast<std::int32_t>(r)};
      if (h.score >= min_score && top.admits(h)) top.offer(h);
    }
    a[0] = a[1] = a[2] = a[3] = 0.0;
  }
}

}  // namespace

SparseHits SparseVectors::topk_scan(const float* query, std::int64_t k, const std::uint8_t* visible,
                                    double min_score) const {
  check_k_query(k, query, dim_);
  const std::size_t kk = static_cast<std::size_t>(std::min<std::int64_t>(k, n_));
  if (kk == 0) return SparseHits{};
  TopK top(kk);
  Scratch& s = scratch();
  const std::size_t need = 4 * static_cast<std::size_t>(n_);
  if (s.lanes.size() < need) s.lanes.resize(need, 0.0);
  double* acc = s.lanes.data();
  const std::int64_t main = dim_ - dim_ % 4;
  s.dirty = true;
  // columns ascending: each lane sums in ascending j. Every row's lanes are accumulated (a
  // hidden row's sums are never read: its score is neither kept nor compared), which keeps the
  // loop free of branches; the visible rows are picked in the scan below, which also clears.
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
  rank_lanes(acc, 0, n_, visible, min_score, top);
  s.dirty = false;
  return unpack(std::move(top));
}

SparseHits SparseVectors::topk(const float* query, std::int64_t k, const std::uint8_t* visible,
                               double min_score) const {
  check_k_query(k, query, dim_);
  // the entries the query's columns hold: when they reach half the rows, nearly every block is
  // touched and the scan's one pass over all rows costs no more than summing them (and is the
  // faster loop while its lanes, 32 bytes a row, stay in the last-level cache); below that, or
  // past kScanMaxRows rows, block by block (the blocks the query misses are skipped)
  std::int64_t entries = 0;
  for (std::int64_t j = 0; j < dim_; ++j)
    if (query[j] != 0.0f) entries += colptr_[j + 1] - colptr_[j];
  if (2 * entries >= n_ && n_ <= kScanMaxRows) return topk_scan(query, k, visible, min_score);
  return topk_blocked(query, k, visible, min_score);
}

SparseHits SparseVectors::topk_blocked(const float* query, std::int64_t k, const std::uint8_t* visible,
                                       double min_score) const {
  check_k_query(k, query, dim_);
  const std::size_t kk = static_cast<std::size_t>(std::min<std::int64_t>(k, n_));
  if (kk == 0) return SparseHits{};
  TopK top(kk);
  Scratch& s = scratch();
  s.qdims.clear();
  for (std::int64_t j = 0; j < dim_; ++j)
    if (query[j] != 0.0f && colptr_[j + 1] > colptr_[j]) s.qdims.push_back(static_cast<std::int32_t>(j));
  const std::size_t need = 4 * static_cast<std::size_t>(kRowBlock);
  if (s.lanes.size() < need) s.lanes.resize(need, 0.0);
  double* lanes = s.lanes.data();
  const std::int64_t main = dim_ - dim_ % 4;
  const std::int32_t* rp = rows_.data();
  const float* vp = vals_.data();
  const std::int64_t nblk = (n_ + kRowBlock - 1) / kRowBlock;
  s.dirty = true;
  for (std::int64_t b = 0; b < nblk; ++b) {
    const std::int64_t r0 = b * kRowBlock, r1 = std::min<std::int64_t>(r0 + kRowBlock, n_);
    const std::int64_t* from = blockptr_.data() + b * dim_;
    const std::int64_t* to = from + dim_;
    bool touched = false;
    // the block's lanes over the query's columns, ascending: each lane sums in ascending j
    for (const std::int32_t j : s.qdims) {
      const std::int64_t e0 = from[j], e1 = to[j];
      if (e0 == e1) continue;
      touched = true;
      const double q = static_cast<double>(query[j]);
      double* lane = lanes + (j < main ? (j & 3) : 0);
      const std::int32_t base = static_cast<std::int32_t>(r0);
      for (std::int64_t e = e0; e < e1; ++e)
        lane[4 * static_cast<std::uint32_t>(rp[e] - base)] += static_cast<double>(vp[e]) * q;
    }
    if (!touched) {
      // every row of the block scores 0.0: rows enter by row ascending while 0.0 is admitted
      if (!(0.0 >= min_score) || !top.admits(ScoredIndex{0.0, static_cast<std::int32_t>(r0)})) continue;
      for (std::int64_t r = r0; r < r1; ++r) {
        if (visible != nullptr && !visible[r]) continue;
        const ScoredIndex h{0.0, static_cast<std::int32_t>(r)};
        if (!top.admits(h)) break;
        top.offer(h);
      }
      continue;
    }
    rank_lanes(lanes, r0, r1, visible, min_score, top);
  }
  s.dirty = false;
  return unpack(std::move(top));
}

namespace {

constexpr std::int64_t kMaxCodedDim = 131072;  // dim * 127 * 127 < 2**31: the integer dot is exact

std::int32_t dot_i8(const std::int8_t* a, const std::int8_t* b, std::int64_t dim) {
  std::int32_t s = 0;
  for (std::int64_t j = 0; j < dim; ++j) s += static_cast<std::int16_t>(a[j]) * static_cast<std::int16_t>(b[j]);
  return s;
}

struct DenseCand {
  double ub;
  std::int32_t row;  // the base row
  std::int32_t out;  // the row returned (the same without a delta)
};

struct DenseScratch {
  std::vector<std::int8_t> qcode;
  std::vector<double> heap;  // the k largest lower bounds so far (a min-heap)
  std::vector<DenseCand> cand;
};

DenseScratch& dense_scratch() {
  thread_local DenseScratch s;
  return s;
}

}  // namespace

void DenseVectors::check_shape() const {
  if (n_ < 0 || n_ > INT32_MAX) throw InvalidArgument("rows must be in [0, 2**31 - 1], got " + std::to_string(n_));
  if (dim_ < 0) throw InvalidArgument("dim must be non-negative, got " + std::to_string(dim_));
}

DenseVectors::DenseVectors(const float* matrix, std::int64_t n, std::int64_t dim) : m_(matrix), n_(n), dim_(dim) {
  check_shape();
  {
    // finite: |x| <= FLT_MAX is false for NaN and the infinities (a branch-free pass that
    // vectorises, unlike isfinite per entry)
    bool finite = true;
    for (std::int64_t i = 0, size = n * dim; i < size; ++i)
      finite &= std::fabs(matrix[i]) <= std::numeric_limits<float>::max();
    if (!finite) throw InvalidArgument("matrix must be finite");
  }
  if (dim > kMaxCodedDim) return;  // no codes: topk scans
  code_.resize(static_cast<std::size_t>(n * dim));
  scale_.resize(static_cast<std::size_t>(n));
  err_.resize(static_cast<std::size_t>(n));
  l1_.resize(static_cast<std::size_t>(n));
  for (std::int64_t r = 0; r < n; ++r) code_row(r);
}

DenseVectors::DenseVectors(const float* matrix, std::int64_t n, std::int64_t dim, const DenseVectors& base,
                           const std::int32_t* base_rows)
    : m_(matrix), n_(n), dim_(dim) {
  check_shape();
  if (base.dim_ != dim)
    throw InvalidArgument("base has dim " + std::to_string(base.dim_) + ", the matrix " + std::to_string(dim));
  for (std::int64_t r = 0; r < n; ++r)
    if (base_rows[r] < -1 || base_rows[r] >= base.n_)
      throw InvalidArgument("base_rows[" + std::to_string(r) + "] = " + std::to_string(base_rows[r]) +
                            " outside [-1, " + std::to_string(base.n_) + ")");
  const bool coded = dim <= kMaxCodedDim;
  if (coded) {
    code_.resize(static_cast<std::size_t>(n * dim));
    scale_.resize(static_cast<std::size_t>(n));
    err_.resize(static_cast<std::size_t>(n));
    l1_.resize(static_cast<std::size_t>(n));
  }
  const std::size_t row_bytes = static_cast<std::size_t>(dim) * sizeof(float);
  for (std::int64_t r = 0; r < n; ++r) {
    const float* v = matrix + r * dim;
    const std::int32_t b = base_rows[r];
    // a row equal bit for bit to a row base checked and coded: finite, and the same codes
    if (b >= 0 && std::memcmp(v, base.m_ + static_cast<std::int64_t>(b) * dim, row_bytes) == 0) {
      if (coded) {
        std::memcpy(code_.data() + r * dim, base.code_.data() + static_cast<std::int64_t>(b) * dim,
                    static_cast<std::size_t>(dim));
        scale_[r] = base.scale_[b];
        err_[r] = base.err_[b];
        l1_[r] = base.l1_[b];
      }
      continue;
    }
    bool finite = true;
    for (std::int64_t j = 0; j < dim; ++j) finite &= std::fabs(v[j]) <= std::numeric_limits<float>::max();
    if (!finite) throw InvalidArgument("matrix must be finite");
    if (coded) code_row(r);
  }
}

void DenseVectors::code_row(std::int64_t r) {
  // locals: the int8 stores below may alias any member, which would keep the loops from vectorising
  const std::int64_t dim = dim_;
  const float* v = m_ + r * dim;
  std::int8_t* c = code_.data() + r * dim;
  // the largest magnitude and the L1 norm in four lanes each (the L1 bound below holds for
  // any order of summation; a maximum does not depend on the order)
  float mx4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
  double l14[4] = {0.0, 0.0, 0.0, 0.0};
  std::int64_t j4 = 0;
  for (; j4 + 4 <= dim; j4 += 4)
    for (int t = 0; t < 4; ++t) {
      const float a = std::fabs(v[j4 + t]);
      mx4[t] = mx4[t] > a ? mx4[t] : a;
      l14[t] += static_cast<double>(a);
    }
  for (; j4 < dim; ++j4) {
    const float a = std::fabs(v[j4]);
    mx4[0] = mx4[0] > a ? mx4[0] : a;
    l14[0] += static_cast<double>(a);
  }
  const float mx = std::max(std::max(mx4[0], mx4[1]), std::max(mx4[2], mx4[3]));
  const double l1 = (l14[0] + l14[1]) + (l14[2] + l14[3]);
  const float sc = mx / 127.0f;
  // Any code is sound: the error kept below is that of the code chosen. Picked in float,
  // rounded half away from zero by truncation (|v / sc| <= 127 + a few ulps), branch-free so
  // the loop vectorises (nearbyint is a library call on baseline x86-64).
  // (a subnormal scale codes the row as zeros: 1 / sc could overflow, and the error kept,
  // at most mx, is then what bounds it)
  const float invf = sc >= std::numeric_limits<float>::min() ? 1.0f / sc : 0.0f;
  for (std::int64_t j = 0; j < dim; ++j) {
    float x = v[j] * invf;
    x = x < -127.0f ? -127.0f : (x > 127.0f ? 127.0f : x);
    std::int32_t q = static_cast<std::int32_t>(x + std::copysign(0.5f, x));
    q = q < -127 ? -127 : (q > 127 ? 127 : q);
    c[j] = static_cast<std::int8_t>(q);
  }
  // the largest coding error, exactly in double (sc * q is exact: 24 + 7 bits), four lanes
  const double scd = static_cast<double>(sc);
  double err4[4] = {0.0, 0.0, 0.0, 0.0};
  std::int64_t e4 = 0;
  for (; e4 + 4 <= dim; e4 += 4)
    for (int t = 0; t < 4; ++t) {
      const double e = std::fabs(static_cast<double>(v[e4 + t]) - scd * static_cast<double>(c[e4 + t]));
      err4[t] = err4[t] > e ? err4[t] : e;
    }
  for (; e4 < dim; ++e4) {
    const double e = std::fabs(static_cast<double>(v[e4]) - scd * static_cast<double>(c[e4]));
    err4[0] = err4[0] > e ? err4[0] : e;
  }
  const double err = std::max(std::max(err4[0], err4[1]), std::max(err4[2], err4[3]));
  scale_[r] = sc;
  // rounded up: the differences and the sum above are within a few ulps
  err_[r] = err * (1.0 + 0x1p-40) + static_cast<double>(mx) * 0x1p-45;
  l1_[r] = l1 * (1.0 + static_cast<double>(dim + 2) * 0x1p-52);
}

VectorHits DenseVectors::topk(const float* query, std::int64_t k, const std::uint8_t* visible,
                              double min_score) const {
  check_k_query(k, query, dim_);
  if (8 * std::min<std::int64_t>(k, n_) >= n_) return vector_topk(m_, n_, dim_, query, k, visible, min_score);
  return topk_pruned(query, k, visible, min_score);
}

VectorHits DenseVectors::topk_pruned(const float* query, std::int64_t k, const std::uint8_t* visible,
                                     double min_score) const {
  return topk_over(query, k, visible, min_score, nullptr, true);
}

VectorHits DenseVectors::topk_over(const float* query, std::int64_t k, const std::uint8_t* visible,
                                   double min_score, const DenseDelta* delta, bool pruned) const {
  check_k_query(k, query, dim_);
  const std::int64_t n_out = delta != nullptr ? delta->n_ : n_;
  const std::size_t kk = static_cast<std::size_t>(std::min<std::int64_t>(k, n_out));
  if (kk == 0) return VectorHits{};
  // the base rows read, as runs (base begin, base end, output begin): all rows in place without a delta
  const std::int64_t whole[3] = {0, n_, 0};
  const std::int64_t* runs = delta != nullptr ? delta->runs_.data() : whole;
  const std::int64_t nruns = delta != nullptr ? static_cast<std::int64_t>(delta->runs_.size() / 3) : 1;
  float qmx = 0.0f;
  for (std::int64_t j = 0; j < dim_; ++j) qmx = std::max(qmx, std::fabs(query[j]));
  // nothing to prune: asked to scan, no codes, or a zero query (every score is 0.0)
  if (!pruned || code_.empty() || qmx == 0.0f) {
    if (delta == nullptr) return vector_topk(m_, n_, dim_, query, k, visible, min_score);
    TopK top(kk);
    const auto offer = [&](const float* row, std::int64_t out) {
      if (visible != nullptr && !visible[out]) return;
      const double sc = dot_fixed(row, query, dim_);
      if (std::isnan(sc) || !(sc >= min_score)) return;
      top.offer(ScoredIndex{sc, static_cast<node_t>(out)});
    };
    for (std::int64_t i = 0; i < delta->delta_rows(); ++i)
      offer(delta->rows_.data() + i * dim_, delta->row_numbers_[static_cast<std::size_t>(i)]);
    for (std::int64_t u = 0; u < nruns; ++u) {
      const std::int64_t b0 = runs[3 * u], b1 = runs[3 * u + 1], off = runs[3 * u + 2] - b0;
      for (std::int64_t r = b0; r < b1; ++r) offer(m_ + r * dim_, r + off);
    }
    return unpack(std::move(top));
  }
  DenseScratch& s = dense_scratch();
  s.qcode.resize(static_cast<std::size_t>(dim_));
  const double tq = static_cast<double>(qmx) / 127.0;
  double errq = 0.0;
  std::int64_t q1 = 0;
  for (std::int64_t j = 0; j < dim_; ++j) {
    double q = std::nearbyint(static_cast<double>(query[j]) / tq);
    q = std::min(127.0, std::max(-127.0, q));
    s.qcode[j] = static_cast<std::int8_t>(q);
    q1 += static_cast<std::int64_t>(std::fabs(q));
    errq = std::max(errq, std::fabs(static_cast<double>(query[j]) - tq * q));
  }
  errq = errq * (1.0 + 0x1p-40) + static_cast<double>(qmx) * 0x1p-45;
  const double eq1 = tq * static_cast<double>(q1) * (1.0 + 0x1p-50);
  // the exact double lanes differ from the real dot product by at most gamma_dim * qmx * l1
  const double round_rel = static_cast<double>(dim_ + 8) * 0x1p-52;
  s.heap.clear();
  s.heap.reserve(kk);
  s.cand.clear();
  TopK top(kk);
  double lb_k = -std::numeric_limits<double>::infinity();
  // a lower bound of some visible row's score: the k largest make lb_k
  const auto bound = [&](double lb) {
    if (s.heap.size() < kk) {
      s.heap.push_back(lb);
      std::push_heap(s.heap.begin(), s.heap.end(), std::greater<double>());
      if (s.heap.size() == kk) lb_k = s.heap.front();
    } else if (lb > s.heap.front()) {
      std::pop_heap(s.heap.begin(), s.heap.end(), std::greater<double>());
      s.heap.back() = lb;
      std::push_heap(s.heap.begin(), s.heap.end(), std::greater<double>());
      lb_k = s.heap.front();
    }
  };
  if (delta != nullptr) {
    // the delta rows exactly: their scores are lower bounds too (the base rows then prune against them)
    for (std::int64_t i = 0; i < delta->delta_rows(); ++i) {
      const std::int32_t out = delta->row_numbers_[static_cast<std::size_t>(i)];
      if (visible != nullptr && !visible[out]) continue;
      const double sc = dot_fixed(delta->rows_.data() + i * dim_, query, dim_);
      bound(sc);
      if (std::isnan(sc) || !(sc >= min_score)) continue;
      top.offer(ScoredIndex{sc, out});
    }
  }
  const std::size_t compact_at = 4 * kk + 4096;
  const std::int8_t* qc = s.qcode.data();
  for (std::int64_t u = 0; u < nruns; ++u) {
    const std::int64_t b0 = runs[3 * u], b1 = runs[3 * u + 1], off = runs[3 * u + 2] - b0;
    for (std::int64_t r = b0; r < b1; ++r) {
      if (visible != nullptr && !visible[r + off]) continue;
      const std::int32_t dot = dot_i8(code_.data() + r * dim_, qc, dim_);
      const double a = tq * static_cast<double>(scale_[r]) * static_cast<double>(dot);
      const double sl =
          (err_[r] * eq1 + errq * l1_[r] + round_rel * (static_cast<double>(qmx) * l1_[r] + std::fabs(a))) *
          (1.0 + 0x1p-30);
      const double lb = a - sl, ub = a + sl;
      bound(lb);
      if (ub >= lb_k && ub >= min_score) {
        s.cand.push_back(DenseCand{ub, static_cast<std::int32_t>(r), static_cast<std::int32_t>(r + off)});
        if (s.cand.size() >= compact_at) {
          std::size_t w = 0;
          for (const DenseCand& c : s.cand)
            if (c.ub >= lb_k) s.cand[w++] = c;
          s.cand.resize(w);
        }
      }
    }
  }
  for (const DenseCand& c : s.cand) {
    if (c.ub < lb_k) continue;
    const ScoredIndex h{dot_fixed(m_ + static_cast<std::int64_t>(c.row) * dim_, query, dim_), c.out};
    if (h.score >= min_score && top.admits(h)) top.offer(h);
  }
  return unpack(std::move(top));
}

DenseDelta::DenseDelta(const DenseVectors& base, std::int64_t n, std::vector<std::int64_t> runs,
                       std::vector<float> rows, std::vector<std::int32_t> row_numbers)
    : base_(&base), n_(n), runs_(std::move(runs)), rows_(std::move(rows)), row_numbers_(std::move(row_numbers)) {
  if (n < 0 || n > INT32_MAX) throw InvalidArgument("n must be in [0, 2**31 - 1], got " + std::to_string(n));
  if (runs_.size() % 3 != 0) throw InvalidArgument("runs must hold 3 numbers per run");
  const std::int64_t dim = base.dim_, nd = static_cast<std::int64_t>(row_numbers_.size());
  if (static_cast<std::int64_t>(rows_.size()) != nd * dim)
    throw InvalidArgument("rows must be " + std::to_string(nd) + " x " + std::to_string(dim) +
                          " (one per row number)");
  const std::int64_t nruns = static_cast<std::int64_t>(runs_.size() / 3);
  std::int64_t base_end = 0;
  for (std::int64_t u = 0; u < nruns; ++u) {
    const std::int64_t b0 = runs_[3 * u], b1 = runs_[3 * u + 1], o = runs_[3 * u + 2];
    if (b0 < base_end || b1 < b0 || b1 > base.n_)
      throw InvalidArgument("run " + std::to_string(u) + ": base rows [" + std::to_string(b0) + ", " +
                            std::to_string(b1) + ") not ascending, disjoint and within [0, " +
                            std::to_string(base.n_) + ")");
    if (o < 0 || o > n - (b1 - b0))
      throw InvalidArgument("run " + std::to_string(u) + ": rows from " + std::to_string(o) + " outside [0, " +
                            std::to_string(n) + ")");
    base_end = b1;
  }
  for (std::int64_t i = 0; i < nd; ++i) {
    const std::int32_t r = row_numbers_[static_cast<std::size_t>(i)];
    if (r < 0 || r >= n)
      throw InvalidArgument("row_numbers[" + std::to_string(i) + "] = " + std::to_string(r) + " outside [0, " +
                            std::to_string(n) + ")");
    if (i > 0 && r <= row_numbers_[static_cast<std::size_t>(i - 1)])
      throw InvalidArgument("row_numbers must be strictly ascending");
  }
  // runs and delta rows cover [0, n) once each, in order
  std::int64_t at = 0, u = 0, i = 0;
  while (u < nruns || i < nd) {
    if (u < nruns && runs_[3 * u] == runs_[3 * u + 1]) {
      ++u;  // an empty run
    } else if (u < nruns && runs_[3 * u + 2] == at) {
      at += runs_[3 * u + 1] - runs_[3 * u];
      ++u;
    } else if (i < nd && row_numbers_[static_cast<std::size_t>(i)] == at) {
      ++at;
      ++i;
    } else {
      throw InvalidArgument("runs and row_numbers must cover rows [0, " + std::to_string(n) +
                            ") once each, in order; row " + std::to_string(at) + " is not");
    }
  }
  if (at != n)
    throw InvalidArgument("runs and row_numbers cover " + std::to_string(at) + " rows, not " + std::to_string(n));
  bool finite = true;
  for (const float x : rows_) finite &= std::fabs(x) <= std::numeric_limits<float>::max();
  if (!finite) throw InvalidArgument("rows must be finite");
}

VectorHits DenseDelta::topk(const float* query, std::int64_t k, const std::uint8_t* visible,
                            double min_score) const {
  check_k_query(k, query, dim());
  return base_->topk_over(query, k, visible, min_score, this, 8 * std::min<std::int64_t>(k, n_) < n_);
}

VectorHits DenseDelta::topk_pruned(const float* query, std::int64_t k, const std::uint8_t* visible,
                                   double min_score) const {
  return base_->topk_over(query, k, visible, min_score, this, true);
}

VectorHits DenseDelta::topk_scan(const float* query, std::int64_t k, const std::uint8_t* visible,
                                 double min_score) const {
  return base_->topk_over(query, k, visible, min_score, this, false);
}

}  // namespace cw
