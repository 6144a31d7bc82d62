// conceptwalk core: an inverted text index and BM25 top-k over the visible documents, and exact
// vector top-k over visible rows. Pure C++17, no Python.
//
// Documents are node indices 0..n-1. Tokens arrive as term ids (the Python tokeniser assigns
// them; the vocabulary is sorted, so term-id order is the terms' string order). A document's
// term frequency counts each title token `title_weight` times and each body token once; its
// length is the sum of its term frequencies.
//
// Exactness under visibility: every statistic BM25 reads (the number of documents N, each term's
// document frequency, the average length) is taken over the visible documents only, and a
// document's score is the sum of its per-term contributions in ascending term order, so a score
// equals, bit for bit, the score the same code gives on an index built without the hidden
// documents. Pruning (MaxScore) only decides which documents are scored, never how.
#pragma once
#include <cstdint>
#include <vector>

#include "conceptwalk/common.hpp"
#include "conceptwalk/csr_graph.hpp"  // Buffer

namespace cw {

using term_t = std::int32_t;

struct TextIndex {
  std::int32_t num_docs = 0;
  std::int32_t num_terms = 0;
  std::int32_t title_weight = 1;
  std::vector<offset_t> offsets;  // num_terms + 1: postings of term t are [offsets[t], offsets[t+1])
  // The postings, owned (a build or a merge) or borrowed read-only (a mapped snapshot file's).
  Buffer<node_t> docs;                // per posting: document, ascending within a term
  Buffer<std::int32_t> tfs;           // per posting: weighted term frequency (>= 1)
  std::vector<std::int32_t> doc_len;  // per document: sum of its weighted term frequencies
  // Derived (not persisted): per term the largest tf and the smallest document length among its
  // postings (MaxScore's upper bounds), and the total length of all documents.
  std::vector<std::int32_t> max_tf;
  std::vector<std::int32_t> min_len;
  // Per term, each distinct tf among its postings (ascending) with the smallest length of the
  // documents holding the term that often: terms' entries [tf_ptr[t], tf_ptr[t+1]). BM25 grows
  // with tf and shrinks with length (also in floating point), so the largest contribution over
  // all documents is the largest over these pairs: the unmasked statistics cost O(pairs), not
  // O(postings).
  std::vector<offset_t> tf_ptr;
  std::vector<std::int32_t> tf_val;
  std::vector<std::int32_t> tf_min_len;
  std::int64_t total_len = 0;

  std::int64_t num_postings() const { return static_cast<std::int64_t>(docs.size()); }

  // Builds from per-document token ids: title tokens of doc d are
  // title_tokens[title_ptr[d] .. title_ptr[d+1]), body tokens likewise. Validates everything.
  static TextIndex build(std::int32_t num_docs, std::int32_t num_terms, const offset_t* title_ptr,
                         const term_t* title_tokens, std::int64_t n_title_tokens, const offset_t* body_ptr,
                         const term_t* body_tokens, std::int64_t n_body_tokens, std::int32_t title_weight);

  // Adopts persisted arrays after validating them (offsets monotone from 0 to the number of
  // postings, documents in range and strictly ascending per term, tfs >= 1, each document's
  // length equal to the sum of its tfs). The `num_postings` docs and tfs are copied, or with
  // `keep` borrowed (no copy: `keep` must keep them alive and unchanged for the index's
  // lifetime, e.g. a memory-mapped snapshot file's pages).
  static TextIndex from_arrays(std::int32_t num_docs, std::int32_t title_weight, std::vector<offset_t> offsets,
                               const node_t* docs, const std::int32_t* tfs, std::int64_t num_postings,
                               std::vector<std::int32_t> doc_len, std::shared_ptr<const void> keep = nullptr);
  bool borrowed() const { return docs.borrowed(); }

  void derive();
};

// The result of TextIndex merging: the new index and the old term ids that no document of it uses
// any more (ascending; the caller drops them from its vocabulary).
struct TextMerge {
  TextIndex index;
  std::vector<term_t> dropped_terms;
};

// The index of a new set of `num_docs` documents from `old` (the index of the previous set) and
// `sub` (a fresh index of the documents that are new or changed), equal array for array to a
// fresh build of the new set, at the cost of one pass over the old postings (memory speed).
//
// `dropped` (strictly ascending old documents) are the old documents that are gone or changed;
// `changed` (strictly ascending new documents, one per document of `sub`, in order) are the new
// positions of `sub`'s documents. Every other old document keeps its postings and length and is
// renumbered, in order, to the new positions not in `changed` (so
// old.num_docs - |dropped| == num_docs - |changed|): node index = rank of the sorted id, and the
// ids that did not change keep their relative order.
//
// The vocabularies are merged without comparing strings (the caller did that by bisection): for
// sub term j, `sub_term_at[j]` is the position of its string in the old (sorted) vocabulary and
// `sub_term_known[j]` is 1 when the old term at that position is the same string, 0 when it is a
// new term that sorts just before it (at == old.num_terms: after every old term). Sub terms are
// sorted, so (2 * at + known) is non-decreasing and strictly increasing where known is 1. An old
// term that keeps no posting is dropped (a fresh build has no unused terms). Validates everything.
TextMerge merge_text_index(const TextIndex& old, std::int32_t num_docs, const node_t* dropped,
                           std::int64_t n_dropped, const node_t* changed, std::int64_t n_changed,
                           const TextIndex& sub, const term_t* sub_term_at, const std::uint8_t* sub_term_known,
                           std::int64_t n_sub_terms);

// BM25 statistics over a set of visible documents: N, the total length and (optionally, for all
// terms) the document frequencies.
struct TextStats {
  std::int64_t num_docs = 0;
  std::int64_t total_len = 0;
  std::vector<std::int32_t> df;  // empty = not computed (per-query counting)
  // Per term, the largest BM25 contribution over the visible postings (with these statistics and
  // the parameters below); empty = not computed (the looser max-tf/min-length bound is used).
  std::vector<double> max_contrib;
  double k1 = 0.0, b = 0.0;
};

struct BM25Params {
  double k1 = 1.2;
  double b = 0.75;
};

// Statistics over the documents with visible[d] != 0 (visible == nullptr: all documents).
// With all_terms, df holds every term's visible document frequency and max_contrib every term's
// exact largest contribution under `params` (O(postings)).
TextStats text_stats(const TextIndex& ix, const std::uint8_t* visible, bool all_terms,
                     BM25Params params = BM25Params{});

struct TextHits {
  std::vector<node_t> docs;
  std::vector<double> scores;
  std::int64_t scored = 0;         // documents whose full score was computed
  std::int64_t postings_read = 0;  // posting entries the essential cursors stepped over
};

// Top-k documents by BM25 over the visible documents, by score descending then document
// ascending. `terms` are distinct term ids (any order; summed in ascending order). `visible`
// (nullable) defines the statistics; `eligible` (nullable) restricts which of the visible
// documents may be returned (e.g. a node-type filter) without changing the statistics. `stats`
// (nullable) are precomputed statistics for `visible` (with df for all terms); when null they are
// computed for this query.
TextHits bm25_topk(const TextIndex& ix, const term_t* terms, std::int64_t n_terms, std::int64_t k,
                   const std::uint8_t* visible, const std::uint8_t* eligible, const TextStats* stats,
                   BM25Params params);

// BM25 top-k over a base index and a delta segment read as one collection (a live store's text:
// the base's documents but `dropped`, whose text the delta replaces or removes, and the delta's
// documents). N, the total length and every query term's document frequency are counted over
// the visible documents of both, so each score equals, bit for bit, the score bm25_topk gives on a
// fresh index of the same documents.
//
// Query terms are given per position q in the terms' string order (the summation order):
// base_terms[q] and delta_terms[q] are the term's ids in each index, -1 where that index lacks it
// (the base's ids ascend with q, as its vocabulary is sorted; the delta's vocabulary may be in any
// order). `base_stats` are the base's statistics over `base_visible` with every term's document
// frequency (TextIndex::stats). `dropped` are base documents, strictly ascending. Per delta
// document j: its order key delta_keys[j] (a base document d's key is base_order_key(d): keys
// order documents as a fresh index numbers them), visibility and eligibility (nullable:
// all). Returns base documents as d and delta documents as base.num_docs + j, by score
// descending, then order key ascending. Validates everything.
TextHits bm25_topk_live(const TextIndex& base, const TextStats& base_stats, const std::uint8_t* base_visible,
                        const std::uint8_t* base_eligible, const node_t* dropped, std::int64_t n_dropped,
                        const TextIndex& delta, const std::uint64_t* delta_keys, const std::uint8_t* delta_visible,
                        const std::uint8_t* delta_eligible, const term_t* base_terms, const term_t* delta_terms,
                        std::int64_t n_terms, std::int64_t k, BM25Params params);

// The contribution of one term to one document's score (exposed for tests and references).
inline double bm25_term(double idf, std::int32_t tf, std::int32_t dl, double avgdl, BM25Params p) {
  const double t = static_cast<double>(tf);
  const double norm = p.k1 * (1.0 - p.b + p.b * (static_cast<double>(dl) / avgdl));
  return idf * ((t * (p.k1 + 1.0)) / (t + norm));
}

// Lucene's idf: ln(1 + (N - df + 0.5) / (df + 0.5)); positive for every 1 <= df <= N.
double bm25_idf(std::int64_t n_docs, std::int64_t df);

}  // namespace cw
