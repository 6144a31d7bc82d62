#include "prelude.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include "conceptwalk/text_index.hpp"

namespace {

template <class T>
std::vector<T> to_vector(const carray<T>& a, const char* name) {
  check_1d(a, name);
  return std::vector<T>(a.data(), a.data() + a.shape(0));
}

// An optional uint8 mask over `n` items (None = all).
const std::uint8_t* opt_mask(const std::optional<carray<std::uint8_t>>& a, std::int64_t n, const char* name) {
  if (!a) return nullptr;
  check_1d(*a, name, static_cast<py::ssize_t>(n));
  return a->data();
}

}  // namespace

void register_text(py::module_& m) {
  py::class_<cw::TextIndex, TextIndexPtr>(m, "TextIndex",
                                          "Inverted index: term -> (document, weighted tf) postings and "
                                          "document lengths. Build with TextIndex.build or TextIndex.from_arrays.")
      .def_static(
          "build",
          [](std::int32_t num_docs, std::int32_t num_terms, const carray<std::int64_t>& title_ptr,
             const carray<std::int32_t>& title_tokens, const carray<std::int64_t>& body_ptr,
             const carray<std::int32_t>& body_tokens, std::int32_t title_weight) {
            if (num_docs < 0) throw py::value_error("num_docs must be >= 0, got " + std::to_string(num_docs));
            check_1d(title_ptr, "title_ptr", num_docs + 1);
            check_1d(body_ptr, "body_ptr", num_docs + 1);
            check_1d(title_tokens, "title_tokens");
            check_1d(body_tokens, "body_tokens");
            const auto* tp = title_ptr.data();
            const auto* tt = title_tokens.data();
            const auto* bp = body_ptr.data();
            const auto* bt = body_tokens.data();
            const std::int64_t nt = title_tokens.shape(0), nb = body_tokens.shape(0);
            TextIndexPtr out;
            {
              Nogil nogil;
              out = std::make_shared<cw::TextIndex>(
                  cw::TextIndex::build(num_docs, num_terms, tp, tt, nt, bp, bt, nb, title_weight));
            }
            return out;
          },
          "num_docs"_a, "num_terms"_a, "title_ptr"_a, "title_tokens"_a, "body_ptr"_a, "body_tokens"_a,
          "title_weight"_a = 2)
      .def_static(
          "from_arrays",
          [](std::int32_t num_docs, std::int32_t title_weight, const carray<std::int64_t>& offsets,
             const carray<std::int32_t>& docs, const carray<std::int32_t>& tfs,
             const carray<std::int32_t>& doc_len, const py::tuple& borrow) {
            auto o = to_vector(offsets, "offsets");
            auto l = to_vector(doc_len, "doc_len");
            check_1d(docs, "docs");
            check_1d(tfs, "tfs");
            if (docs.shape(0) != tfs.shape(0))
              throw py::value_error("docs and tfs must have the same length, got " +
                                    std::to_string(docs.shape(0)) + " and " + std::to_string(tfs.shape(0)));
            const cw::node_t* dp = docs.data();
            const std::int32_t* tp = tfs.data();
            const std::int64_t np = docs.shape(0);
            std::shared_ptr<const void> keep = borrow_keeper(borrow, docs, tfs);  // or copy
            TextIndexPtr out;
            {
              Nogil nogil;
              out = std::make_shared<cw::TextIndex>(cw::TextIndex::from_arrays(
                  num_docs, title_weight, std::move(o), dp, tp, np, std::move(l), std::move(keep)));
            }
            return out;
          },
          "num_docs"_a, "title_weight"_a, "offsets"_a, "docs"_a, "tfs"_a, "doc_len"_a, "borrow"_a = py::tuple(),
          "The index from its own arrays (offsets, docs, tfs, doc_len of an index): validated entry by entry. "
          "The postings are copied, unless `borrow` is the tuple (docs, tfs) of the arrays given and both are "
          "read-only, aligned, C-contiguous int32 over memory no Python code can change (a read-only mmap, "
          "bytes): then the index keeps them (no copy).")
      .def(
          "with_changes",
          [](TextIndexPtr self, std::int32_t num_docs, const carray<std::int32_t>& dropped,
             const carray<std::int32_t>& changed, TextIndexPtr sub, const carray<std::int32_t>& sub_term_at,
             const carray<std::uint8_t>& sub_term_known) {
            if (!sub) throw py::type_error("sub must be a TextIndex, got None");
            check_1d(dropped, "dropped");
            check_1d(changed, "changed");
            check_1d(sub_term_at, "sub_term_at");
            check_1d(sub_term_known, "sub_term_known", sub_term_at.shape(0));
            const auto* dp = dropped.data();
            const auto* cp = changed.data();
            const auto* ap = sub_term_at.data();
            const auto* kp = sub_term_known.data();
            const std::int64_t nd = dropped.shape(0), nc = changed.shape(0), ns = sub_term_at.shape(0);
            cw::TextMerge r;
            {
              Nogil nogil;
              r = cw::merge_text_index(*self, num_docs, dp, nd, cp, nc, *sub, ap, kp, ns);
            }
            auto ix = std::make_shared<cw::TextIndex>(std::move(r.index));
            return py::make_tuple(ix, vector_to_array(std::move(r.dropped_terms)));
          },
          "num_docs"_a, "dropped"_a, "changed"_a, "sub"_a, "sub_term_at"_a, "sub_term_known"_a,
          "The index of a new set of num_docs documents: this index's postings of the documents not in "
          "`dropped` (renumbered in order to the new positions not in `changed`) merged with `sub`, a fresh "
          "index of the documents at the new positions `changed`; `sub_term_at`/`sub_term_known` place sub's "
          "terms in this index's sorted vocabulary. Returns (index, dropped_terms): the old term ids no "
          "document uses any more.")
      .def_property_readonly("num_docs", [](const cw::TextIndex& ix) { return ix.num_docs; })
      .def_property_readonly("num_terms", [](const cw::TextIndex& ix) { return ix.num_terms; })
      .def_property_readonly("title_weight", [](const cw::TextIndex& ix) { return ix.title_weight; })
      .def_property_readonly("num_postings", [](const cw::TextIndex& ix) { return ix.num_postings(); })
      .def_property_readonly("borrowed", &cw::TextIndex::borrowed,
                             "Whether the postings are borrowed from the arrays given to from_arrays.")
      .def_property_readonly("total_len", [](const cw::TextIndex& ix) { return ix.total_len; })
      .def_property_readonly("offsets",
                             [](py::object self) {
                               const auto& ix = self.cast<const cw::TextIndex&>();
                               return readonly_view(ix.offsets.data(),
                                                    static_cast<std::int64_t>(ix.offsets.size()), self);
                             })
      .def_property_readonly("docs",
                             [](py::object self) {
                               const auto& ix = self.cast<const cw::TextIndex&>();
                               return readonly_view(ix.docs.data(), static_cast<std::int64_t>(ix.docs.size()),
                                                    self);
                             })
      .def_property_readonly("tfs",
                             [](py::object self) {
                               const auto& ix = self.cast<const cw::TextIndex&>();
                               return readonly_view(ix.tfs.data(), static_cast<std::int64_t>(ix.tfs.size()), self);
                             })
      .def_property_readonly("doc_len",
                             [](py::object self) {
                               const auto& ix = self.cast<const cw::TextIndex&>();
                               return readonly_view(ix.doc_len.data(),
                                                    static_cast<std::int64_t>(ix.doc_len.size()), self);
                             })
      .def_property_readonly(
          "max_tf",
          [](py::object self) {
            const auto& ix = self.cast<const cw::TextIndex&>();
            return readonly_view(ix.max_tf.data(), static_cast<std::int64_t>(ix.max_tf.size()), self);
          },
          "Per term, the largest tf among its postings (derived).")
      .def_property_readonly(
          "min_len",
          [](py::object self) {
            const auto& ix = self.cast<const cw::TextIndex&>();
            return readonly_view(ix.min_len.data(), static_cast<std::int64_t>(ix.min_len.size()), self);
          },
          "Per term, the smallest length of a document holding it (derived).")
      .def_property_readonly("memory_bytes",
                             [](const cw::TextIndex& ix) {
                               return static_cast<std::int64_t>(
                                   ix.offsets.size() * sizeof(cw::offset_t) + ix.docs.size() * sizeof(cw::node_t) +
                                   ix.tfs.size() * 4 + ix.doc_len.size() * 4 + ix.max_tf.size() * 4 +
                                   ix.min_len.size() * 4 + ix.tf_ptr.size() * sizeof(cw::offset_t) +
                                   ix.tf_val.size() * 4 + ix.tf_min_len.size() * 4);
                             })
      .def(
          "stats",
          [](TextIndexPtr self, const std::optional<carray<std::uint8_t>>& visible, double k1, double b) {
            if (!(k1 >= 0.0) || !std::isfinite(k1)) throw py::value_error("k1 must be finite and >= 0");
            if (!(b >= 0.0 && b <= 1.0)) throw py::value_error("b must be in [0, 1]");
            const std::uint8_t* vis = opt_mask(visible, self->num_docs, "visible");
            auto h = std::make_shared<TextStatsHolder>();
            h->index = self;
            {
              Nogil nogil;
              h->stats = cw::text_stats(*self, vis, true, cw::BM25Params{k1, b});
            }
            return h;
          },
          "visible"_a = py::none(), "k1"_a = 1.2, "b"_a = 0.75,
          "BM25 statistics (N, total length, every term's document frequency and largest contribution) over the "
          "visible documents.");

  py::class_<TextStatsHolder, std::shared_ptr<TextStatsHolder>>(
      m, "TextStats", "BM25 statistics over one visible set of documents.")
      .def_property_readonly("num_docs", [](const TextStatsHolder& h) { return h.stats.num_docs; })
      .def_property_readonly("total_len", [](const TextStatsHolder& h) { return h.stats.total_len; })
      .def_property_readonly("df",
                             [](py::object self) {
                               const auto& h = self.cast<const TextStatsHolder&>();
                               return readonly_view(h.stats.df.data(),
                                                    static_cast<std::int64_t>(h.stats.df.size()), self);
                             })
      .def_property_readonly(
          "max_contrib",
          [](py::object self) {
            const auto& h = self.cast<const TextStatsHolder&>();
            return readonly_view(h.stats.max_contrib.data(), static_cast<std::int64_t>(h.stats.max_contrib.size()),
                                 self);
          },
          "Per term, its largest BM25 contribution over the visible documents (MaxScore's bound).");

  m.def(
      "bm25_topk",
      [](TextIndexPtr index, const carray<std::int32_t>& terms, std::int64_t k,
         const std::optional<carray<std::uint8_t>>& visible, const std::optional<carray<std::uint8_t>>& eligible,
         const TextStatsHolder* stats, double k1, double b) {
        check_1d(terms, "terms");
        const std::uint8_t* vis = opt_mask(visible, index->num_docs, "visible");
        const std::uint8_t* elig = opt_mask(eligible, index->num_docs, "eligible");
        if (stats != nullptr && stats->index.get() != index.get())
          throw py::value_error("stats: computed for a different TextIndex");
        const cw::TextStats* st = stats == nullptr ? nullptr : &stats->stats;
        const auto* tp = terms.data();
        const std::int64_t nt = terms.shape(0);
        cw::TextHits r;
        {
          Nogil nogil;
          r = cw::bm25_topk(*index, tp, nt, k, vis, elig, st, cw::BM25Params{k1, b});
        }
        const std::int64_t scored = r.scored, read = r.postings_read;
        return py::make_tuple(vector_to_array(std::move(r.docs)), vector_to_array(std::move(r.scores)), scored,
                              read);
      },
      "index"_a, "terms"_a, "k"_a, "visible"_a = py::none(), "eligible"_a = py::none(), "stats"_a = py::none(),
      "k1"_a = 1.2, "b"_a = 0.75,
      "BM25 top-k over the visible documents (MaxScore); returns (docs, scores, scored, postings_read).");

  m.def(
      "bm25_topk_live",
      [](TextIndexPtr base, const TextStatsHolder& base_stats,
         const std::optional<carray<std::uint8_t>>& base_visible,
         const std::optional<carray<std::uint8_t>>& base_eligible, const carray<std::int32_t>& dropped,
         TextIndexPtr delta, const carray<std::uint64_t>& delta_keys,
         const std::optional<carray<std::uint8_t>>& delta_visible,
         const std::optional<carray<std::uint8_t>>& delta_eligible, const carray<std::int32_t>& base_terms,
         const carray<std::int32_t>& delta_terms, std::int64_t k, double k1, double b) {
        if (!base || !delta) throw py::type_error("base and delta must be TextIndex objects");
        if (base_stats.index.get() != base.get())
          throw py::value_error("base_stats: computed for a different TextIndex");
        check_1d(dropped, "dropped");
        check_1d(delta_keys, "delta_keys", delta->num_docs);
        check_1d(base_terms, "base_terms");
        check_1d(delta_terms, "delta_terms", base_terms.shape(0));
        const std::uint8_t* bv = opt_mask(base_visible, base->num_docs, "base_visible");
        const std::uint8_t* be = opt_mask(base_eligible, base->num_docs, "base_eligible");
        const std::uint8_t* dv = opt_mask(delta_visible, delta->num_docs, "delta_visible");
        const std::uint8_t* de = opt_mask(delta_eligible, delta->num_docs, "delta_eligible");
        const auto* dp = dropped.data();
        const auto* dk = delta_keys.data();
        const auto* bt = base_terms.data();
        const auto* dt = delta_terms.data();
        const std::int64_t nd = dropped.shape(0), nt = base_terms.shape(0);
        cw::TextHits r;
        {
          Nogil nogil;
          r = cw::bm25_topk_live(*base, base_stats.stats, bv, be, dp, nd, *delta, dk, dv, de, bt, dt, nt, k,
                                 cw::BM25Params{k1, b});
        }
        const std::int64_t scored = r.scored, read = r.postings_read;
        return py::make_tuple(vector_to_array(std::move(r.docs)), vector_to_array(std::move(r.scores)), scored,
                              read);
      },
      "base"_a, "base_stats"_a, "base_visible"_a, "base_eligible"_a, "dropped"_a, "delta"_a, "delta_keys"_a,
      "delta_visible"_a, "delta_eligible"_a, "base_terms"_a, "delta_terms"_a, "k"_a, "k1"_a = 1.2, "b"_a = 0.75,
      "BM25 top-k over a base index (less its dropped documents) and a delta index as one collection, statistics "
      "exact over both; delta document j is returned as base.num_docs + j. Returns (docs, scores, scored, "
      "postings_read).");
}
