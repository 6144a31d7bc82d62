// Inverted text index, BM25 top-k (MaxScore) over visible documents, exact vector top-k.
#include "conceptwalk/text_index.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <utility>

#include "conceptwalk/live_graph.hpp"  // base_order_key
#include "conceptwalk/topk.hpp"

namespace cw {

namespace {

void check_ptr(const offset_t* ptr, std::int32_t n, std::int64_t n_tokens, const char* name) {
  if (ptr[0] != 0) throw InvalidArgument(std::string(name) + "[0] must be 0, got " + std::to_string(ptr[0]));
  for (std::int32_t d = 0; d < n; ++d)
    if (ptr[d + 1] < ptr[d])
      throw InvalidArgument(std::string(name) + " must be non-decreasing (at document " + std::to_string(d) + ")");
  if (ptr[n] != n_tokens)
    throw InvalidArgument(std::string(name) + "[-1] must equal the number of tokens (" + std::to_string(n_tokens) +
                          "), got " + std::to_string(ptr[n]));
}

void check_tokens(const term_t* tok, std::int64_t n, std::int32_t num_terms, const char* name) {
  for (std::int64_t i = 0; i < n; ++i)
    if (tok[i] < 0 || tok[i] >= num_terms)
      throw InvalidArgument(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(tok[i]) +
                            " is outside [0, " + std::to_string(num_terms) + ")");
}

// Appends a term's derived bounds (max tf, min length, the distinct-tf pairs) computed over
// postings [a, b) of (docs, tfs) with lengths doc_len.
class BoundsBuilder {
 public:
  void add(TextIndex& ix, const node_t* docs, const std::int32_t* tfs, std::size_t a, std::size_t b,
           const std::int32_t* doc_len) {
    for (std::size_t i = a; i < b; ++i) {
      const std::int32_t tf = tfs[i], dl = doc_len[docs[i]];
      if (tf <= kSmall) {
        std::int32_t& m = best_[static_cast<std::size_t>(tf)];
        if (m == INT32_MAX) seen_.push_back(tf);
        m = std::min(m, dl);
      } else {
        big_.emplace_back(tf, dl);
      }
    }
    std::sort(seen_.begin(), seen_.end());
    std::int32_t mt = 0, ml = INT32_MAX;
    for (std::int32_t tf : seen_) {
      std::int32_t& m = best_[static_cast<std::size_t>(tf)];
      ix.tf_val.push_back(tf);
      ix.tf_min_len.push_back(m);
      mt = tf;
      ml = std::min(ml, m);
      m = INT32_MAX;
    }
    seen_.clear();
    if (!big_.empty()) {
      std::sort(big_.begin(), big_.end());
      for (std::size_t i = 0; i < big_.size(); ++i) {
        if (i > 0 && big_[i].first == big_[i - 1].first) continue;  // the first has the smallest length
        ix.tf_val.push_back(big_[i].first);
        ix.tf_min_len.push_back(big_[i].second);
        mt = big_[i].first;
        ml = std::min(ml, big_[i].second);
      }
      big_.clear();
    }
    ix.max_tf.push_back(mt);
    ix.min_len.push_back(ml);
    ix.tf_ptr.push_back(static_cast<offset_t>(ix.tf_val.size()));
  }

  // Appends term t of `src` unchanged (the same postings with the same lengths).
  static void copy(TextIndex& ix, const TextIndex& src, std::size_t t) {
    const auto a = static_cast<std::size_t>(src.tf_ptr[t]), b = static_cast<std::size_t>(src.tf_ptr[t + 1]);
    ix.tf_val.insert(ix.tf_val.end(), src.tf_val.begin() + static_cast<std::ptrdiff_t>(a),
                     src.tf_val.begin() + static_cast<std::ptrdiff_t>(b));
    ix.tf_min_len.insert(ix.tf_min_len.end(), src.tf_min_len.begin() + static_cast<std::ptrdiff_t>(a),
                         src.tf_min_len.begin() + static_cast<std::ptrdiff_t>(b));
    ix.max_tf.push_back(src.max_tf[t]);
    ix.min_len.push_back(src.min_len[t]);
    ix.tf_ptr.push_back(static_cast<offset_t>(ix.tf_val.size()));
  }

 private:
  static constexpr std::int32_t kSmall = 64;
  std::vector<std::int32_t> best_ = std::vector<std::int32_t>(kSmall + 1, INT32_MAX);
  std::vector<std::int32_t> seen_;
  std::vector<std::pair<std::int32_t, std::int32_t>> big_;
};

}  // namespace

TextIndex TextIndex::build(std::int32_t num_docs, std::int32_t num_terms, const offset_t* title_ptr,
                           const term_t* title_tokens, std::int64_t n_title_tokens, const offset_t* body_ptr,
                           const term_t* body_tokens, std::int64_t n_body_tokens, std::int32_t title_weight) {
  if (num_docs < 0) throw InvalidArgument("num_docs must be >= 0, got " + std::to_string(num_docs));
  if (num_terms < 0) throw InvalidArgument("num_terms must be >= 0, got " + std::to_string(num_terms));
  if (title_weight < 1 || title_weight > 1000)
    throw InvalidArgument("title_weight must be in [1, 1000], got " + std::to_string(title_weight));
  check_ptr(title_ptr, num_docs, n_title_tokens, "title_ptr");
  check_ptr(body_ptr, num_docs, n_body_tokens, "body_ptr");
  check_tokens(title_tokens, n_title_tokens, num_terms, "title_tokens");
  check_tokens(body_tokens, n_body_tokens, num_terms, "body_tokens");

  TextIndex ix;
  ix.num_docs = num_docs;
  ix.num_terms = num_terms;
  ix.title_weight = title_weight;
  ix.doc_len.assign(static_cast<std::size_t>(num_docs), 0);
  for (std::int32_t d = 0; d < num_docs; ++d) {
    const std::int64_t len = static_cast<std::int64_t>(title_weight) * (title_ptr[d + 1] - title_ptr[d]) +
                             (body_ptr[d + 1] - body_ptr[d]);
    if (len > INT32_MAX)
      throw InvalidArgument("document " + std::to_string(d) + " is too long (" + std::to_string(len) +
                            " weighted tokens)");
    ix.doc_len[static_cast<std::size_t>(d)] = static_cast<std::int32_t>(len);
  }
  // Pass 1: document frequencies (last[t] = the last document that counted t).
  std::vector<node_t> last(static_cast<std::size_t>(num_terms), -1);
  std::vector<offset_t> df(static_cast<std::size_t>(num_terms) + 1, 0);
  auto count = [&](const term_t* tok, offset_t a, offset_t b, node_t d) {
    for (offset_t i = a; i < b; ++i) {
      const auto t = static_cast<std::size_t>(tok[i]);
      if (last[t] != d) {
        last[t] = d;
        ++df[t + 1];
      }
    }
  };
  for (node_t d = 0; d < num_docs; ++d) {
    count(title_tokens, title_ptr[d], title_ptr[d + 1], d);
    count(body_tokens, body_ptr[d], body_ptr[d + 1], d);
  }
  std::partial_sum(df.begin(), df.end(), df.begin());
  ix.offsets = df;
  const std::size_t np = static_cast<std::size_t>(ix.offsets.back());
  ix.docs.resize(np);
  ix.tfs.resize(np);
  std::fill(ix.docs.data(), ix.docs.data() + np, 0);
  std::fill(ix.tfs.data(), ix.tfs.data() + np, 0);
  // Pass 2: fill (documents ascending within each term).
  std::fill(last.begin(), last.end(), -1);
  std::vector<offset_t> cur(ix.offsets.begin(), ix.offsets.end() - 1);
  auto fill = [&](const term_t* tok, offset_t a, offset_t b, node_t d, std::int32_t w) {
    for (offset_t i = a; i < b; ++i) {
      const auto t = static_cast<std::size_t>(tok[i]);
      if (last[t] != d) {
        last[t] = d;
        ix.docs[static_cast<std::size_t>(cur[t])] = d;
        ix.tfs[static_cast<std::size_t>(cur[t])] = w;
        ++cur[t];
      } else {
        ix.tfs[static_cast<std::size_t>(cur[t] - 1)] += w;
      }
    }
  };
  for (node_t d = 0; d < num_docs; ++d) {
    fill(title_tokens, title_ptr[d], title_ptr[d + 1], d, title_weight);
    fill(body_tokens, body_ptr[d], body_ptr[d + 1], d, 1);
  }
  ix.derive();
  return ix;
}

TextIndex TextIndex::from_arrays(std::int32_t num_docs, std::int32_t title_weight, std::vector<offset_t> offsets,
                                 const node_t* docs, const std::int32_t* tfs, std::int64_t num_postings,
                                 std::vector<std::int32_t> doc_len, std::shared_ptr<const void> keep) {
  if (num_docs < 0) throw InvalidArgument("num_docs must be >= 0, got " + std::to_string(num_docs));
  if (title_weight < 1 || title_weight > 1000)
    throw InvalidArgument("title_weight must be in [1, 1000], got " + std::to_string(title_weight));
  if (offsets.empty()) throw InvalidArgument("offsets must hold num_terms + 1 entries, got 0");
  if (offsets.size() - 1 > static_cast<std::size_t>(INT32_MAX)) throw InvalidArgument("offsets: too many terms");
  if (num_postings < 0) throw InvalidArgument("num_postings must be >= 0, got " + std::to_string(num_postings));
  if (num_postings > 0 && (docs == nullptr || tfs == nullptr)) throw InvalidArgument("docs and tfs are required");
  if (doc_len.size() != static_cast<std::size_t>(num_docs))
    throw InvalidArgument("doc_len must have num_docs = " + std::to_string(num_docs) + " entries, got " +
                          std::to_string(doc_len.size()));
  const auto nt = static_cast<std::int32_t>(offsets.size() - 1);
  check_ptr(offsets.data(), nt, num_postings, "offsets");
  std::vector<std::int64_t> sum(static_cast<std::size_t>(num_docs), 0);
  for (std::int32_t t = 0; t < nt; ++t) {
    for (offset_t i = offsets[static_cast<std::size_t>(t)]; i < offsets[static_cast<std::size_t>(t) + 1]; ++i) {
      const node_t d = docs[static_cast<std::size_t>(i)];
      if (d < 0 || d >= num_docs)
        throw InvalidArgument("docs[" + std::to_string(i) + "] = " + std::to_string(d) + " is outside [0, " +
                              std::to_string(num_docs) + ")");
      if (i > offsets[static_cast<std::size_t>(t)] && docs[static_cast<std::size_t>(i - 1)] >= d)
        throw InvalidArgument("docs must be strictly ascending within each term (term " + std::to_string(t) + ")");
      const std::int32_t tf = tfs[static_cast<std::size_t>(i)];
      if (tf < 1) throw InvalidArgument("tfs[" + std::to_string(i) + "] must be >= 1, got " + std::to_string(tf));
      sum[static_cast<std::size_t>(d)] += tf;
    }
  }
  for (std::int32_t d = 0; d < num_docs; ++d)
    if (sum[static_cast<std::size_t>(d)] != doc_len[static_cast<std::size_t>(d)])
      throw InvalidArgument(
          "doc_len[" + std::to_string(d) + "] = " + std::to_string(doc_len[static_cast<std::size_t>(d)]) +
          " differs from the sum of its tfs (" + std::to_string(sum[static_cast<std::size_t>(d)]) + ")");
  TextIndex ix;
  ix.num_docs = num_docs;
  ix.num_terms = nt;
  ix.title_weight = title_weight;
  ix.offsets = std::move(offsets);
  const auto np = static_cast<std::size_t>(num_postings);
  if (keep) {
    ix.docs.borrow(docs, np, keep);
    ix.tfs.borrow(tfs, np, std::move(keep));
  } else {
    ix.docs.assign(docs, docs + np);
    ix.tfs.assign(tfs, tfs + np);
  }
  ix.doc_len = std::move(doc_len);
  ix.derive();
  return ix;
}

void TextIndex::derive() {
  max_tf.clear();
  min_len.clear();
  tf_val.clear();
  tf_min_len.clear();
  tf_ptr.assign(1, 0);
  max_tf.reserve(static_cast<std::size_t>(num_terms));
  min_len.reserve(static_cast<std::size_t>(num_terms));
  tf_ptr.reserve(static_cast<std::size_t>(num_terms) + 1);
  BoundsBuilder bb;
  for (std::int32_t t = 0; t < num_terms; ++t)
    bb.add(*this, std::as_const(docs).data(), std::as_const(tfs).data(),
           static_cast<std::size_t>(offsets[static_cast<std::size_t>(t)]),
           static_cast<std::size_t>(offsets[static_cast<std::size_t>(t) + 1]), doc_len.data());
  total_len = 0;
  for (std::int32_t l : doc_len) total_len += l;
}

namespace {

void check_ascending(const node_t* a, std::int64_t n, std::int32_t bound, const char* name) {
  for (std::int64_t i = 0; i < n; ++i) {
    if (a[i] < 0 || a[i] >= bound)
      throw InvalidArgument(std::string(name) + "[" + std::to_string(i) + "] = " + std::to_string(a[i]) +
                            " is outside [0, " + std::to_string(bound) + ")");
    if (i > 0 && a[i - 1] >= a[i])
      throw InvalidArgument(std::string(name) + " must be strictly ascending (at " + std::to_string(i) + ")");
  }
}

}  // namespace

TextMerge merge_text_index(const TextIndex& old, std::int32_t num_docs, const node_t* dropped,
                           std::int64_t n_dropped, const node_t* changed, std::int64_t n_changed,
                           const TextIndex& sub, const term_t* sub_term_at, const std::uint8_t* sub_term_known,
                           std::int64_t n_sub_terms) {
  // ---- validation (everything the merge relies on)
  if (num_docs < 0) throw InvalidArgument("num_docs must be >= 0, got " + std::to_string(num_docs));
  if (sub.title_weight != old.title_weight)
    throw InvalidArgument("sub has title_weight " + std::to_string(sub.title_weight) + ", the index " +
                          std::to_string(old.title_weight));
  if (n_dropped < 0 || n_dropped > old.num_docs)
    throw InvalidArgument("dropped: " + std::to_string(n_dropped) + " documents of " +
                          std::to_string(old.num_docs));
  check_ascending(dropped, n_dropped, old.num_docs, "dropped");
  if (n_changed != sub.num_docs)
    throw InvalidArgument("changed must hold one position per document of sub (" + std::to_string(sub.num_docs) +
                          "), got " + std::to_string(n_changed));
  check_ascending(changed, n_changed, num_docs, "changed");
  if (static_cast<std::int64_t>(old.num_docs) - n_dropped != static_cast<std::int64_t>(num_docs) - n_changed)
    throw InvalidArgument("the kept documents do not fit: " + std::to_string(old.num_docs) + " - " +
                          std::to_string(n_dropped) + " dropped != " + std::to_string(num_docs) + " - " +
                          std::to_string(n_changed) + " changed");
  if (n_sub_terms != sub.num_terms)
    throw InvalidArgument("sub_term_at must hold one entry per term of sub (" + std::to_string(sub.num_terms) +
                          "), got " + std::to_string(n_sub_terms));
  if (static_cast<std::int64_t>(old.num_terms) + sub.num_terms > INT32_MAX)
    throw InvalidArgument("too many terms");
  std::int64_t prev_rank = -1;
  for (std::int64_t j = 0; j < n_sub_terms; ++j) {
    const term_t at = sub_term_at[j];
    const std::uint8_t known = sub_term_known[j];
    if (known > 1)
      throw InvalidArgument("sub_term_known[" + std::to_string(j) + "] must be 0 or 1, got " +
                            std::to_string(known));
    if (at < 0 || at > old.num_terms || (known && at == old.num_terms))
      throw InvalidArgument("sub_term_at[" + std::to_string(j) + "] = " + std::to_string(at) + " is outside [0, " +
                            std::to_string(known ? old.num_terms : old.num_terms + 1) + ")");
    const std::int64_t rank = 2 * static_cast<std::int64_t>(at) + known;
    if (rank < prev_rank || (known && rank == prev_rank))
      throw InvalidArgument("sub_term_at / sub_term_known must follow the sorted vocabulary (at " +
                            std::to_string(j) + ")");
    prev_rank = rank;
    if (sub.offsets[static_cast<std::size_t>(j) + 1] <= sub.offsets[static_cast<std::size_t>(j)])
      throw InvalidArgument("sub term " + std::to_string(j) + " has no postings (sub must be a fresh build)");
  }

  // ---- old document -> new document (-1: dropped), order-preserving
  const auto n_old = static_cast<std::size_t>(old.num_docs);
  std::vector<node_t> map(n_old);
  {
    std::int64_t di = 0, ci = 0;
    node_t next = 0;
    for (std::size_t d = 0; d < n_old; ++d) {
      if (di < n_dropped && dropped[di] == static_cast<node_t>(d)) {
        map[d] = -1;
        ++di;
        continue;
      }
      while (ci < n_changed && changed[ci] == next) {
        ++next;
        ++ci;
      }
      map[d] = next++;
    }
  }
  TextMerge out;
  TextIndex& ix = out.index;
  ix.num_docs = num_docs;
  ix.title_weight = old.title_weight;
  ix.doc_len.assign(static_cast<std::size_t>(num_docs), 0);
  std::int64_t total = old.total_len;
  for (std::size_t d = 0; d < n_old; ++d) {
    if (map[d] >= 0)
      ix.doc_len[static_cast<std::size_t>(map[d])] = old.doc_len[d];
    else
      total -= old.doc_len[d];
  }
  for (std::int64_t s = 0; s < n_changed; ++s) {
    ix.doc_len[static_cast<std::size_t>(changed[s])] = sub.doc_len[static_cast<std::size_t>(s)];
    total += sub.doc_len[static_cast<std::size_t>(s)];
  }
  ix.total_len = total;

  // ---- postings, term by term in the merged (sorted) vocabulary
  const std::size_t cap = old.docs.size() + sub.docs.size();
  ix.docs.resize(cap);
  ix.tfs.resize(cap);
  const std::size_t nt_cap = static_cast<std::size_t>(old.num_terms) + static_cast<std::size_t>(sub.num_terms);
  ix.offsets.reserve(nt_cap + 1);
  ix.max_tf.reserve(nt_cap);
  ix.min_len.reserve(nt_cap);
  ix.tf_ptr.reserve(nt_cap + 1);
  ix.tf_val.reserve(old.tf_val.size() + sub.tf_val.size());
  ix.tf_min_len.reserve(old.tf_val.size() + sub.tf_val.size());
  ix.offsets.push_back(0);
  ix.tf_ptr.push_back(0);
  BoundsBuilder bb;
  node_t* od = ix.docs.data();
  std::int32_t* ot = ix.tfs.data();
  std::size_t w = 0;
  const node_t* mp = map.data();
  const std::int32_t* new_len = ix.doc_len.data();

  // The map is a few runs of consecutive kept documents, each shifted by one constant (a write
  // changes few documents): a long posting list is copied run by run (a vectorisable add and a
  // memcpy, the run's end found by binary search) instead of one lookup per posting.
  struct Run {
    node_t lo, hi, shift;
  };
  std::vector<Run> runs;
  std::vector<node_t> run_lo;
  for (std::size_t d = 0; d < n_old;) {
    if (mp[d] < 0) {
      ++d;
      continue;
    }
    const node_t shift = mp[d] - static_cast<node_t>(d);
    std::size_t e = d + 1;
    while (e < n_old && mp[e] >= 0 && mp[e] - static_cast<node_t>(e) == shift) ++e;
    runs.push_back(Run{static_cast<node_t>(d), static_cast<node_t>(e), shift});
    run_lo.push_back(static_cast<node_t>(d));
    d = e;
  }
  constexpr std::size_t kMaxRuns = 64, kMinList = 32;
  const bool by_runs = runs.size() <= kMaxRuns;
  auto copy_old = [&](std::size_t t) {  // the kept postings of old term t, renumbered
    const auto a = static_cast<std::size_t>(old.offsets[t]), b = static_cast<std::size_t>(old.offsets[t + 1]);
    const node_t* sd = old.docs.data();
    const std::int32_t* st = old.tfs.data();
    if (!by_runs || b - a < kMinList) {
      for (std::size_t i = a; i < b; ++i) {  // branch-free: write always, advance when kept
        const node_t nd = mp[sd[i]];
        od[w] = nd;
        ot[w] = st[i];
        w += static_cast<std::size_t>(nd >= 0);
      }
      return;
    }
    std::size_t i = a;
    while (i < b) {
      const node_t d = sd[i];
      if (mp[d] < 0) {  // a dropped document
        ++i;
        continue;
      }
      const Run& r =
          runs[static_cast<std::size_t>(std::upper_bound(run_lo.begin(), run_lo.end(), d) - run_lo.begin()) - 1];
      const std::size_t j = static_cast<std::size_t>(std::lower_bound(sd + i, sd + b, r.hi) - sd);
      const node_t shift = r.shift;
      node_t* dst = od + w;
      const node_t* src = sd + i;
      const std::size_t len = j - i;
      for (std::size_t k = 0; k < len; ++k) dst[k] = src[k] + shift;
      std::memcpy(ot + w, st + i, len * sizeof(std::int32_t));
      w += len;
      i = j;
    }
  };
  auto emit_computed = [&](std::size_t start) {  // bounds over the term's new postings
    ix.offsets.push_back(static_cast<offset_t>(w));
    bb.add(ix, od, ot, start, w, new_len);
  };
  auto emit_sub = [&](std::size_t j) {  // a term only the changed documents hold
    const auto a = static_cast<std::size_t>(sub.offsets[j]), b = static_cast<std::size_t>(sub.offsets[j + 1]);
    for (std::size_t i = a; i < b; ++i) {
      od[w] = changed[sub.docs[i]];
      ot[w] = sub.tfs[i];
      ++w;
    }
    ix.offsets.push_back(static_cast<offset_t>(w));
    BoundsBuilder::copy(ix, sub, j);  // sub's lengths are the new lengths of its documents
  };

  std::size_t j = 0;
  const auto nsub = static_cast<std::size_t>(n_sub_terms);
  for (std::size_t t = 0;; ++t) {
    while (j < nsub && !sub_term_known[j] && static_cast<std::size_t>(sub_term_at[j]) == t) emit_sub(j++);
    if (t == static_cast<std::size_t>(old.num_terms)) break;
    const std::size_t start = w;
    if (j < nsub && sub_term_known[j] && static_cast<std::size_t>(sub_term_at[j]) == t) {
      // both: merge the kept old postings with the sub's (disjoint documents, both ascending)
      const auto oa = static_cast<std::size_t>(old.offsets[t]), ob = static_cast<std::size_t>(old.offsets[t + 1]);
      const auto sa = static_cast<std::size_t>(sub.offsets[j]), sb = static_cast<std::size_t>(sub.offsets[j + 1]);
      std::size_t i = oa, k = sa;
      node_t nd_old = -1;
      auto next_old = [&]() {
        while (i < ob && (nd_old = mp[old.docs[i]]) < 0) ++i;
      };
      next_old();
      while (i < ob || k < sb) {
        const node_t nd_sub = k < sb ? changed[sub.docs[k]] : std::numeric_limits<node_t>::max();
        if (i < ob && nd_old < nd_sub) {
          od[w] = nd_old;
          ot[w] = old.tfs[i];
          ++i;
          next_old();
        } else {
          od[w] = nd_sub;
          ot[w] = sub.tfs[k];
          ++k;
        }
        ++w;
      }
      ++j;
      emit_computed(start);
      continue;
    }
    copy_old(t);
    const std::size_t got = w - start;
    if (got == 0) {
      out.dropped_terms.push_back(static_cast<term_t>(t));
      continue;
    }
    if (got == static_cast<std::size_t>(old.offsets[t + 1] - old.offsets[t])) {
      ix.offsets.push_back(static_cast<offset_t>(w));
      BoundsBuilder::copy(ix, old, t);  // the same postings and lengths: the same bounds
    } else {
      emit_computed(start);
    }
  }
  ix.docs.resize(w);
  ix.tfs.resize(w);
  ix.num_terms = static_cast<std::int32_t>(ix.offsets.size() - 1);
  return out;
}

TextStats text_stats(const TextIndex& ix, const std::uint8_t* visible, bool all_terms, BM25Params p) {
  TextStats s;
  s.k1 = p.k1;
  s.b = p.b;
  if (visible == nullptr) {
    s.num_docs = ix.num_docs;
    s.total_len = ix.total_len;
  } else {
    for (std::int32_t d = 0; d < ix.num_docs; ++d) {
      if (visible[d]) {
        ++s.num_docs;
        s.total_len += ix.doc_len[static_cast<std::size_t>(d)];
      }
    }
  }
  if (!all_terms) return s;
  const auto nt = static_cast<std::size_t>(ix.num_terms);
  s.df.assign(nt, 0);
  s.max_contrib.assign(nt, 0.0);
  const double avgdl = s.num_docs > 0 ? static_cast<double>(s.total_len) / static_cast<double>(s.num_docs) : 1.0;
  if (visible == nullptr) {
    for (std::size_t t = 0; t < nt; ++t) {
      const auto c = static_cast<std::int32_t>(ix.offsets[t + 1] - ix.offsets[t]);
      s.df[t] = c;
      if (c == 0 || s.total_len == 0) continue;
      const double idf = bm25_idf(s.num_docs, c);
      double mx = 0.0;  // the largest over the distinct-tf pairs is the largest over the postings
      for (offset_t i = ix.tf_ptr[t]; i < ix.tf_ptr[t + 1]; ++i)
        mx = std::max(mx, bm25_term(idf, ix.tf_val[static_cast<std::size_t>(i)],
                                    ix.tf_min_len[static_cast<std::size_t>(i)], avgdl, p));
      s.max_contrib[t] = mx;
    }
    return s;
  }
  // Over a mask: one pass per term counts the visible postings and keeps, per distinct tf, the
  // smallest visible length; the contribution is then computed once per distinct tf (BM25 shrinks
  // with the length for a given tf, in floating point too), not once per posting: the same
  // largest contribution as a scan.
  constexpr std::int32_t kSmall = 64;
  std::vector<std::int32_t> best(kSmall + 1, INT32_MAX);
  std::vector<std::int32_t> seen;
  std::vector<std::pair<std::int32_t, std::int32_t>> big;
  const node_t* docs = ix.docs.data();
  const std::int32_t* tfs = ix.tfs.data();
  const std::int32_t* len = ix.doc_len.data();
  for (std::size_t t = 0; t < nt; ++t) {
    const auto a = static_cast<std::size_t>(ix.offsets[t]), e = static_cast<std::size_t>(ix.offsets[t + 1]);
    std::int32_t c = 0;
    for (std::size_t i = a; i < e; ++i) {
      const node_t d = docs[i];
      if (!visible[d]) continue;
      ++c;
      const std::int32_t tf = tfs[i], dl = len[d];
      if (tf <= kSmall) {
        std::int32_t& m = best[static_cast<std::size_t>(tf)];
        if (m == INT32_MAX) seen.push_back(tf);
        m = std::min(m, dl);
      } else {
        big.emplace_back(tf, dl);
      }
    }
    s.df[t] = c;
    double mx = 0.0;
    const bool any = c > 0 && s.total_len > 0;
    const double idf = any ? bm25_idf(s.num_docs, c) : 0.0;
    for (std::int32_t tf : seen) {
      std::int32_t& m = best[static_cast<std::size_t>(tf)];
      if (any) mx = std::max(mx, bm25_term(idf, tf, m, avgdl, p));
      m = INT32_MAX;
    }
    seen.clear();
    if (any)
      for (const auto& q : big) mx = std::max(mx, bm25_term(idf, q.first, q.second, avgdl, p));
    big.clear();
    s.max_contrib[t] = mx;
  }
  return s;
}

double bm25_idf(std::int64_t n_docs, std::int64_t df) {
  const double n = static_cast<double>(n_docs), f = static_cast<double>(df);
  return std::log(1.0 + (n - f + 0.5) / (f + 0.5));
}

namespace {

struct PostingList {
  const node_t* docs;
  const std::int32_t* tfs;
  offset_t pos, end;
  double idf, ub;
  std::size_t slot;  // position of the term in ascending term order (the summation order)
};

}  // namespace

namespace {

void check_bm25_args(std::int64_t k, BM25Params p) {
  if (k < 1) throw InvalidArgument("k must be >= 1, got " + std::to_string(k));
  if (!(p.k1 >= 0.0) || !std::isfinite(p.k1))
    throw InvalidArgument("k1 must be finite and >= 0, got " + std::to_string(p.k1));
  if (!(p.b >= 0.0 && p.b <= 1.0)) throw InvalidArgument("b must be in [0, 1], got " + std::to_string(p.b));
}

// MaxScore over `lists` (each a term's postings with its idf, upper bound and summation slot):
// the top `k` documents `allowed` admits by score descending, then document ascending; a
// document's score is the sum of its contributions in ascending slot order. `filtered`: whether
// `allowed` can refuse a document. Adds to out.scored and out.postings_read and fills out.docs and
// out.scores.
template <class Allowed>
void maxscore_topk(std::vector<PostingList>& lists, std::size_t n_slots, std::int64_t k, std::int32_t num_docs,
                   const std::int32_t* dl, double avgdl, BM25Params p, bool filtered, Allowed allowed,
                   TextHits& out) {
  const std::size_t m = lists.size();
  std::vector<double> contrib(n_slots, 0.0);
  // MaxScore: lists by upper bound ascending; the first `e` lists are non-essential (their bounds
  // together cannot lift a document into the top k), so only the others generate candidates.
  std::stable_sort(lists.begin(), lists.end(),
                   [](const PostingList& a, const PostingList& b) { return a.ub < b.ub; });
  std::vector<double> pre(m + 1, 0.0);
  for (std::size_t i = 0; i < m; ++i) pre[i + 1] = pre[i] + lists[i].ub;
  constexpr double slack = 1.0 + 1e-10;  // covers rounding differences between summation orders
  std::size_t e = 0;
  const std::size_t kk = static_cast<std::size_t>(std::min<std::int64_t>(k, num_docs));
  TopK top(kk);
  bool full = false;
  double theta = 0.0;

  auto settle = [&](PostingList& l) {  // skip postings of documents that may not be returned
    if (!filtered) return;
    while (l.pos < l.end && !allowed(l.docs[l.pos])) {
      ++l.pos;
      ++out.postings_read;
    }
  };
  for (auto& l : lists) settle(l);

  std::vector<std::size_t> touched;
  touched.reserve(m);
  std::vector<std::pair<std::size_t, offset_t>> here;
  here.reserve(m);
  while (e < m) {
    node_t d = std::numeric_limits<node_t>::max();
    for (std::size_t i = e; i < m; ++i)
      if (lists[i].pos < lists[i].end) d = std::min(d, lists[i].docs[lists[i].pos]);
    if (d == std::numeric_limits<node_t>::max()) break;
    // The essential lists holding d; first a bound from their upper bounds alone (no arithmetic
    // per posting): most candidates of a single rare word are dropped here.
    double ub_here = 0.0;
    here.clear();
    for (std::size_t i = e; i < m; ++i) {
      PostingList& l = lists[i];
      if (l.pos < l.end && l.docs[l.pos] == d) {
        here.push_back(std::make_pair(i, l.pos));
        ub_here += l.ub;
        ++l.pos;
        ++out.postings_read;
        settle(l);
      }
    }
    if (full && (ub_here + pre[e]) * slack <= theta) continue;
    double partial = 0.0;
    for (const auto& hp : here) {
      const PostingList& l = lists[hp.first];
      const double c = bm25_term(l.idf, l.tfs[hp.second], dl[d], avgdl, p);
      contrib[l.slot] = c;
      touched.push_back(l.slot);
      partial += c;
    }
    bool pruned = false;
    for (std::size_t i = e; i-- > 0;) {
      if (full && (partial + pre[i + 1]) * slack <= theta) {
        pruned = true;
        break;
      }
      PostingList& l = lists[i];
      if (l.pos >= l.end || l.docs[l.pos] > d) continue;
      if (l.docs[l.pos] < d) {  // gallop, then binary search, to the first posting >= d
        offset_t lo = l.pos, step = 1;
        while (lo + step < l.end && l.docs[lo + step] < d) {
          lo += step;
          step *= 2;
        }
        const offset_t hi = std::min(lo + step + 1, l.end);
        l.pos = std::lower_bound(l.docs + lo + 1, l.docs + hi, d) - l.docs;
      }
      if (l.pos < l.end && l.docs[l.pos] == d) {
        const double c = bm25_term(l.idf, l.tfs[l.pos], dl[d], avgdl, p);
        contrib[l.slot] = c;
        touched.push_back(l.slot);
        partial += c;
        ++l.pos;
      }
    }
    if (!pruned) {
      double s = 0.0;  // the exact score: contributions in ascending term order
      std::sort(touched.begin(), touched.end());
      for (std::size_t slot : touched) s += contrib[slot];
      ++out.scored;
      top.offer(ScoredIndex{s, d});
      full = top.full();
      if (full) theta = top.worst();
      if (full)
        while (e < m && pre[e + 1] * slack <= theta) ++e;
    }
    for (std::size_t slot : touched) contrib[slot] = 0.0;
    touched.clear();
  }
  const std::vector<ScoredIndex> best = std::move(top).sorted();
  out.docs.reserve(best.size());
  out.scores.reserve(best.size());
  for (const ScoredIndex& h : best) {
    out.docs.push_back(h.index);
    out.scores.push_back(h.score);
  }
}

}  // namespace

TextHits bm25_topk(const TextIndex& ix, const term_t* terms_in, std::int64_t n_terms, std::int64_t k,
                   const std::uint8_t* visible, const std::uint8_t* eligible, const TextStats* stats,
                   BM25Params p) {
  check_bm25_args(k, p);
  std::vector<term_t> terms(terms_in, terms_in + n_terms);
  for (std::int64_t i = 0; i < n_terms; ++i)
    if (terms[static_cast<std::size_t>(i)] < 0 || terms[static_cast<std::size_t>(i)] >= ix.num_terms)
      throw InvalidArgument("terms[" + std::to_string(i) +
                            "] = " + std::to_string(terms[static_cast<std::size_t>(i)]) + " is outside [0, " +
                            std::to_string(ix.num_terms) + ")");
  if (stats != nullptr && !stats->df.empty() && stats->df.size() != static_cast<std::size_t>(ix.num_terms))
    throw InvalidArgument("stats were computed for a different index");
  std::sort(terms.begin(), terms.end());
  terms.erase(std::unique(terms.begin(), terms.end()), terms.end());

  TextHits out;
  TextStats local;
  const TextStats* st = stats;
  if (st == nullptr) {
    local = text_stats(ix, visible, false);
    st = &local;
  }
  if (st->num_docs == 0 || st->total_len == 0) return out;
  const double avgdl = static_cast<double>(st->total_len) / static_cast<double>(st->num_docs);
  // documents that may be returned: the eligible ones (when given) that are visible (when a mask
  // is given), read from both masks here rather than from their AND made per query by the caller
  const bool filtered = eligible != nullptr || visible != nullptr;

  std::vector<PostingList> lists;
  lists.reserve(terms.size());
  for (std::size_t j = 0; j < terms.size(); ++j) {
    const auto t = static_cast<std::size_t>(terms[j]);
    const offset_t a = ix.offsets[t], b = ix.offsets[t + 1];
    std::int64_t df;
    if (!st->df.empty()) {
      df = st->df[t];
    } else if (visible == nullptr) {
      df = b - a;
    } else {
      df = 0;
      for (offset_t i = a; i < b; ++i) df += visible[ix.docs[static_cast<std::size_t>(i)]] != 0;
    }
    if (df == 0) continue;  // the term does not occur in what the caller sees
    const double idf = bm25_idf(st->num_docs, df);
    // Upper bound of the term's contribution to any document: the largest tf with the shortest
    // length among its postings (the contribution grows with tf and shrinks with length),
    // inflated so that floating-point rounding can never make a true score exceed it.
    const bool exact_ub = !st->max_contrib.empty() && st->k1 == p.k1 && st->b == p.b;
    const double ub =
        (exact_ub ? st->max_contrib[t] : bm25_term(idf, ix.max_tf[t], ix.min_len[t], avgdl, p)) * (1.0 + 1e-9);
    lists.push_back(PostingList{ix.docs.data(), ix.tfs.data(), a, b, idf, ub, j});
  }
  if (lists.empty()) return out;
  maxscore_topk(
      lists, terms.size(), k, ix.num_docs, ix.doc_len.data(), avgdl, p, filtered,
      [eligible, visible](node_t d) {
        return (eligible == nullptr || eligible[d] != 0) && (visible == nullptr || visible[d] != 0);
      },
      out);
  return out;
}

TextHits bm25_topk_live(const TextIndex& base, const TextStats& base_stats, const std::uint8_t* base_visible,
                        const std::uint8_t* base_eligible, const node_t* dropped, std::int64_t n_dropped,
                        const TextIndex& delta, const std::uint64_t* delta_keys, const std::uint8_t* delta_visible,
                        const std::uint8_t* delta_eligible, const term_t* base_terms, const term_t* delta_terms,
                        std::int64_t n_terms, std::int64_t k, BM25Params p) {
  check_bm25_args(k, p);
  if (base_stats.df.size() != static_cast<std::size_t>(base.num_terms))
    throw InvalidArgument("base_stats must hold every base term's document frequency");
  if (delta.title_weight != base.title_weight)
    throw InvalidArgument("the delta's title weight " + std::to_string(delta.title_weight) +
                          " is not the base's " + std::to_string(base.title_weight));
  if (static_cast<std::int64_t>(base.num_docs) + delta.num_docs > std::numeric_limits<std::int32_t>::max())
    throw InvalidArgument("base and delta hold too many documents");
  if (n_dropped < 0 || n_terms < 0) throw InvalidArgument("negative count");
  for (std::int64_t i = 0; i < n_dropped; ++i) {
    if (dropped[i] < 0 || dropped[i] >= base.num_docs)
      throw InvalidArgument("dropped[" + std::to_string(i) + "] = " + std::to_string(dropped[i]) +
                            " is outside [0, " + std::to_string(base.num_docs) + ")");
    if (i > 0 && dropped[i] <= dropped[i - 1]) throw InvalidArgument("dropped must be strictly ascending");
  }
  const auto nq = static_cast<std::size_t>(n_terms);
  std::vector<term_t> seen_delta;
  term_t last_base = -1;
  for (std::size_t q = 0; q < nq; ++q) {
    const term_t bt = base_terms[q], dt = delta_terms[q];
    if (bt < -1 || bt >= base.num_terms || dt < -1 || dt >= delta.num_terms)
      throw InvalidArgument("query term " + std::to_string(q) + ": an id outside its index");
    if (bt >= 0) {
      if (bt <= last_base) throw InvalidArgument("base_terms must ascend (the vocabulary's order)");
      last_base = bt;
    }
    if (dt >= 0) seen_delta.push_back(dt);
  }
  std::sort(seen_delta.begin(), seen_delta.end());
  if (std::adjacent_find(seen_delta.begin(), seen_delta.end()) != seen_delta.end())
    throw InvalidArgument("delta_terms repeat a term");

  TextHits out;
  // the statistics of the collection: the base's, less its dropped visible documents, plus the
  // delta's visible documents
  std::int64_t n_docs = base_stats.num_docs, total = base_stats.total_len;
  std::vector<std::int64_t> df(nq, 0);
  for (std::size_t q = 0; q < nq; ++q)
    if (base_terms[q] >= 0) df[q] = base_stats.df[static_cast<std::size_t>(base_terms[q])];
  for (std::int64_t i = 0; i < n_dropped; ++i) {
    const node_t d = dropped[i];
    if (base_visible != nullptr && base_visible[d] == 0) continue;
    --n_docs;
    total -= base.doc_len[static_cast<std::size_t>(d)];
    for (std::size_t q = 0; q < nq; ++q) {
      const term_t bt = base_terms[q];
      if (bt < 0) continue;
      const node_t* a = base.docs.data() + base.offsets[static_cast<std::size_t>(bt)];
      const node_t* e = base.docs.data() + base.offsets[static_cast<std::size_t>(bt) + 1];
      if (std::binary_search(a, e, d)) --df[q];
    }
  }
  auto delta_sees = [delta_visible](node_t j) { return delta_visible == nullptr || delta_visible[j] != 0; };
  for (node_t j = 0; j < delta.num_docs; ++j) {
    if (!delta_sees(j)) continue;
    ++n_docs;
    total += delta.doc_len[static_cast<std::size_t>(j)];
  }
  for (std::size_t q = 0; q < nq; ++q) {
    const term_t dt = delta_terms[q];
    if (dt < 0) continue;
    for (offset_t i = delta.offsets[static_cast<std::size_t>(dt)];
         i < delta.offsets[static_cast<std::size_t>(dt) + 1]; ++i)
      df[q] += delta_sees(delta.docs[static_cast<std::size_t>(i)]);
  }
  if (n_docs <= 0 || total <= 0) return out;
  const double avgdl = static_cast<double>(total) / static_cast<double>(n_docs);
  std::vector<double> idf(nq, 0.0);
  for (std::size_t q = 0; q < nq; ++q)
    if (df[q] > 0) idf[q] = bm25_idf(n_docs, df[q]);

  // the base: MaxScore, with bounds from each term's largest tf and shortest document (the exact
  // per-caller bounds are of other statistics)
  std::vector<PostingList> lists;
  for (std::size_t q = 0; q < nq; ++q) {
    const term_t bt = base_terms[q];
    if (bt < 0 || df[q] <= 0) continue;
    const auto t = static_cast<std::size_t>(bt);
    if (base.offsets[t] == base.offsets[t + 1]) continue;
    const double ub = bm25_term(idf[q], base.max_tf[t], base.min_len[t], avgdl, p) * (1.0 + 1e-9);
    lists.push_back(
        PostingList{base.docs.data(), base.tfs.data(), base.offsets[t], base.offsets[t + 1], idf[q], ub, q});
  }
  TextHits base_hits;
  if (!lists.empty()) {
    const bool filtered = base_visible != nullptr || base_eligible != nullptr || n_dropped > 0;
    const node_t* dr_end = dropped + n_dropped;
    maxscore_topk(
        lists, nq, k, base.num_docs, base.doc_len.data(), avgdl, p, filtered,
        [base_visible, base_eligible, dropped, dr_end](node_t d) {
          return (base_visible == nullptr || base_visible[d] != 0) &&
                 (base_eligible == nullptr || base_eligible[d] != 0) && !std::binary_search(dropped, dr_end, d);
        },
        base_hits);
  }
  // the delta: every visible eligible document holding a query term, scored in full (its
  // contributions in ascending q, as the MaxScore loop sums them)
  struct Posting {
    node_t doc;
    std::size_t q;
    std::int32_t tf;
  };
  std::vector<Posting> posts;
  for (std::size_t q = 0; q < nq; ++q) {
    const term_t dt = delta_terms[q];
    if (dt < 0 || df[q] <= 0) continue;
    for (offset_t i = delta.offsets[static_cast<std::size_t>(dt)];
         i < delta.offsets[static_cast<std::size_t>(dt) + 1]; ++i) {
      const node_t j = delta.docs[static_cast<std::size_t>(i)];
      if (!delta_sees(j) || (delta_eligible != nullptr && delta_eligible[j] == 0)) continue;
      posts.push_back(Posting{j, q, delta.tfs[static_cast<std::size_t>(i)]});
      ++out.postings_read;
    }
  }
  std::sort(posts.begin(), posts.end(),
            [](const Posting& a, const Posting& b) { return a.doc < b.doc || (a.doc == b.doc && a.q < b.q); });
  struct Hit {
    double score;
    std::uint64_t key;
    node_t doc;  // as returned
  };
  std::vector<Hit> hits;
  hits.reserve(base_hits.docs.size() + posts.size());
  for (std::size_t i = 0; i < base_hits.docs.size(); ++i) {
    const node_t d = base_hits.docs[i];
    hits.push_back(Hit{base_hits.scores[i], base_order_key(d), d});
  }
  for (std::size_t i = 0; i < posts.size();) {
    const node_t j = posts[i].doc;
    const std::int32_t dl = delta.doc_len[static_cast<std::size_t>(j)];
    double s = 0.0;
    for (; i < posts.size() && posts[i].doc == j; ++i) s += bm25_term(idf[posts[i].q], posts[i].tf, dl, avgdl, p);
    ++out.scored;
    hits.push_back(Hit{s, delta_keys[j], base.num_docs + j});
  }
  std::sort(hits.begin(), hits.end(), [](const Hit& a, const Hit& b) {
    return a.score > b.score || (a.score == b.score && (a.key < b.key || (a.key == b.key && a.doc < b.doc)));
  });
  if (hits.size() > static_cast<std::size_t>(k)) hits.resize(static_cast<std::size_t>(k));
  out.scored += base_hits.scored;
  out.postings_read += base_hits.postings_read;
  out.docs.reserve(hits.size());
  out.scores.reserve(hits.size());
  for (const Hit& h : hits) {
    out.docs.push_back(h.doc);
    out.scores.push_back(h.score);
  }
  return out;
}

}  // namespace cw
