// Batch entry points: many independent queries in one call, spread over C++ threads with the GIL
// released. Every query runs exactly the single-query core function (same code, same per-thread
// workspace discipline), so each result is bit-identical to the one-by-one call; results are
// written into slot i and concatenated in input order.
#include "prelude.hpp"

#include <algorithm>
#include <optional>

#include "conceptwalk/batch.hpp"
#include "conceptwalk/linkpred.hpp"
#include "conceptwalk/paths.hpp"
#include "conceptwalk/ppr.hpp"

namespace {

// Validates a CSR-style query pointer (q + 1 offsets into an array of length total).
std::int64_t check_ptr(const carray<std::int64_t>& ptr_a, std::int64_t total, const char* name) {
  check_1d(ptr_a, name);
  if (ptr_a.shape(0) < 1) throw py::value_error(std::string(name) + " must have at least one entry");
  const std::int64_t q = ptr_a.shape(0) - 1;
  const std::int64_t* ptr = ptr_a.data();
  if (ptr[0] != 0 || ptr[q] != total)
    throw py::value_error(std::string(name) + " must start at 0 and end at " + std::to_string(total));
  for (std::int64_t i = 0; i < q; ++i)
    if (ptr[i + 1] < ptr[i]) throw py::value_error(std::string(name) + " must be non-decreasing");
  return q;
}

template <class T>
std::vector<T> concat(const std::vector<std::int64_t>& out_ptr, std::int64_t q,
                      const std::vector<T>* const* parts) {
  std::vector<T> out(static_cast<std::size_t>(out_ptr[q]));
  for (std::int64_t i = 0; i < q; ++i)
    std::copy(parts[i]->begin(), parts[i]->end(), out.begin() + out_ptr[i]);
  return out;
}

struct ContextOut {
  std::vector<cw::node_t> nodes;
  std::vector<double> scores;
  std::vector<std::int32_t> hops;
  std::vector<cw::node_t> via;
  double residual = 0.0;
  std::int64_t pushes = 0;
};

}  // namespace

void register_batch(py::module_& m) {
  m.def(
      "ppr_batch",
      [](const cw::CSRGraph& g, const carray<std::int64_t>& seed_ptr, const carray<std::int32_t>& seeds,
         const carray<double>& weights, double restart, double eps, std::int64_t k,
         std::int64_t max_pushes, int threads, const VisibilityMask* visible) {
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        const std::int64_t q = check_ptr(seed_ptr, seeds.shape(0), "seed_ptr");
        const cw::Visibility vis = resolve_visibility(g, visible);
        const cw::PPRParams params{restart, eps, max_pushes};
        std::vector<cw::PPRResult> res(static_cast<std::size_t>(q));
        {
          const std::int64_t* ptr = seed_ptr.data();
          const std::int32_t* s = seeds.data();
          const double* w = weights.data();
          py::gil_scoped_release nogil;
          for (std::int64_t i = 0; i < q; ++i)  // validate every query before any work
            cw::validate_ppr(g, vis, ptr[i + 1] - ptr[i], s + ptr[i], w + ptr[i], params);
          cw::parallel_for(q, threads, [&](std::int64_t i) {
            res[i] = cw::personalized_pagerank(g, vis, ptr[i + 1] - ptr[i], s + ptr[i], w + ptr[i],
                                               params, k);
          });
        }
        std::vector<std::int64_t> out_ptr(static_cast<std::size_t>(q) + 1, 0);
        std::vector<double> residual(q), eps_out(q);
        std::vector<std::int64_t> pushes(q), visits(q);
        std::vector<std::uint8_t> truncated(q);
        std::vector<const std::vector<cw::node_t>*> np(q);
        std::vector<const std::vector<double>*> sp(q);
        for (std::int64_t i = 0; i < q; ++i) {
          out_ptr[i + 1] = out_ptr[i] + static_cast<std::int64_t>(res[i].nodes.size());
          residual[i] = res[i].residual;
          eps_out[i] = res[i].eps;
          pushes[i] = res[i].pushes;
          visits[i] = res[i].edge_visits;
          truncated[i] = res[i].truncated ? 1 : 0;
          np[i] = &res[i].nodes;
          sp[i] = &res[i].scores;
        }
        auto nodes = concat(out_ptr, q, np.data());
        auto scores = concat(out_ptr, q, sp.data());
        return py::make_tuple(vector_to_array(std::move(out_ptr)), vector_to_array(std::move(nodes)),
                              vector_to_array(std::move(scores)), vector_to_array(std::move(residual)),
                              vector_to_array(std::move(pushes)), vector_to_array(std::move(visits)),
                              vector_to_array(std::move(truncated)), vector_to_array(std::move(eps_out)));
      },
      "graph"_a, "seed_ptr"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4,
      "k"_a = 0, "max_pushes"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Many PPR queries across threads; returns (ptr, nodes, scores, residual, pushes, edge_visits, "
      "truncated, eps), each query's slice identical to personalized_pagerank.");

  m.def(
      "context_batch",
      [](const cw::CSRGraph& g, const carray<std::int64_t>& seed_ptr, const carray<std::int32_t>& seeds,
         const carray<double>& weights, double restart, double eps, std::int64_t k,
         const std::optional<carray<std::int32_t>>& node_type, const std::optional<carray<bool>>& keep_types,
         int threads, const VisibilityMask* visible) {
        // Per query: PPR (top k + nseeds, or all with a type filter), drop the seeds (sorted
        // ascending per query), keep the wanted node types, take the first k, then hop counts and
        // reached-through seeds of those k -- what tools.graph_context does for one query.
        check_1d(seeds, "seeds");
        check_1d(weights, "weights", seeds.shape(0));
        const std::int64_t q = check_ptr(seed_ptr, seeds.shape(0), "seed_ptr");
        if (k < 1) throw py::value_error("k must be >= 1, got " + std::to_string(k));
        if (node_type.has_value() != keep_types.has_value())
          throw py::value_error("node_type and keep_types go together");
        const std::int32_t* ntype = nullptr;
        const bool* keep = nullptr;
        std::int64_t nkeep = 0;
        if (node_type) {
          check_1d(*node_type, "node_type", g.num_nodes());
          check_1d(*keep_types, "keep_types");
          ntype = node_type->data();
          keep = keep_types->data();
          nkeep = keep_types->shape(0);
        }
        const cw::Visibility vis = resolve_visibility(g, visible);
        const cw::PPRParams params{restart, eps, 0};
        std::vector<ContextOut> res(static_cast<std::size_t>(q));
        {
          const std::int64_t* ptr = seed_ptr.data();
          const std::int32_t* s = seeds.data();
          const double* w = weights.data();
          py::gil_scoped_release nogil;
          for (std::int64_t i = 0; i < q; ++i) {
            cw::validate_ppr(g, vis, ptr[i + 1] - ptr[i], s + ptr[i], w + ptr[i], params);
            for (std::int64_t j = ptr[i] + 1; j < ptr[i + 1]; ++j)
              if (s[j] <= s[j - 1]) throw cw::InvalidArgument("seeds of each query must be strictly ascending");
          }
          // Node-type codes are checked where they are read (a code outside keep_types is simply
          // not kept), so a query never scans all n nodes.
          cw::parallel_for(q, threads, [&](std::int64_t i) {
            const std::int64_t ns = ptr[i + 1] - ptr[i];
            const cw::node_t* qs = s + ptr[i];
            const std::int64_t want = ntype ? 0 : k + ns;
            cw::PPRResult r = cw::personalized_pagerank(g, vis, ns, qs, w + ptr[i], params, want);
            ContextOut& o = res[i];
            o.residual = r.residual;
            o.pushes = r.pushes;
            for (std::size_t j = 0; j < r.nodes.size() && static_cast<std::int64_t>(o.nodes.size()) < k; ++j) {
              const cw::node_t v = r.nodes[j];
              if (std::binary_search(qs, qs + ns, v)) continue;
              if (ntype && (ntype[v] < 0 || ntype[v] >= nkeep || !keep[ntype[v]])) continue;
              o.nodes.push_back(v);
              o.scores.push_back(r.scores[j]);
            }
            if (!o.nodes.empty()) {
              cw::HopsResult h = cw::multi_source_hops(g, vis, ns, qs, static_cast<std::int64_t>(o.nodes.size()),
                                                       o.nodes.data(), -1);
              o.hops = std::move(h.hops);
              o.via = std::move(h.via);
            }
          });
        }
        std::vector<std::int64_t> out_ptr(static_cast<std::size_t>(q) + 1, 0);
        std::vector<double> residual(q);
        std::vector<std::int64_t> pushes(q);
        std::vector<const std::vector<cw::node_t>*> np(q), vp(q);
        std::vector<const std::vector<double>*> sp(q);
        std::vector<const std::vector<std::int32_t>*> hp(q);
        for (std::int64_t i = 0; i < q; ++i) {
          out_ptr[i + 1] = out_ptr[i] + static_cast<std::int64_t>(res[i].nodes.size());
          residual[i] = res[i].residual;
          pushes[i] = res[i].pushes;
          np[i] = &res[i].nodes;
          vp[i] = &res[i].via;
          sp[i] = &res[i].scores;
          hp[i] = &res[i].hops;
        }
        auto nodes = concat(out_ptr, q, np.data());
        auto scores = concat(out_ptr, q, sp.data());
        auto hops = concat(out_ptr, q, hp.data());
        auto via = concat(out_ptr, q, vp.data());
        return py::make_tuple(vector_to_array(std::move(out_ptr)), vector_to_array(std::move(nodes)),
                              vector_to_array(std::move(scores)), vector_to_array(std::move(hops)),
                              vector_to_array(std::move(via)), vector_to_array(std::move(residual)),
                              vector_to_array(std::move(pushes)));
      },
      "graph"_a, "seed_ptr"_a, "seeds"_a, "weights"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 20,
      "node_type"_a = py::none(), "keep_types"_a = py::none(), "threads"_a = 1, "visible"_a = py::none(),
      "graph_context's core work for many queries: returns (ptr, nodes, scores, hops, via, residual, pushes).");

  m.def(
      "suggest_batch",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& nodes, std::int32_t min_shared,
         std::int64_t k, int threads, const VisibilityMask* visible) {
        check_1d(nodes, "nodes");
        const cw::Visibility vis = resolve_visibility(g, visible);
        const std::int64_t q = nodes.shape(0);
        std::vector<cw::RAResult> res(static_cast<std::size_t>(q));
        {
          const std::int32_t* a = nodes.data();
          py::gil_scoped_release nogil;
          if (min_shared < 1) throw cw::InvalidArgument("min_shared must be >= 1, got " + std::to_string(min_shared));
          for (std::int64_t i = 0; i < q; ++i)
            if (a[i] < 0 || a[i] >= g.num_nodes() || !cw::CSRGraph::visible(a[i], vis))
              throw cw::NodeOutOfRange("node index " + std::to_string(a[i]) + " is not a visible node");
          cw::parallel_for(q, threads, [&](std::int64_t i) {
            res[i] = cw::resource_allocation(g, vis, a[i], min_shared, k);
          });
        }
        std::vector<std::int64_t> out_ptr(static_cast<std::size_t>(q) + 1, 0), cand(q);
        std::int64_t nshared = 0;
        for (std::int64_t i = 0; i < q; ++i) {
          out_ptr[i + 1] = out_ptr[i] + static_cast<std::int64_t>(res[i].targets.size());
          cand[i] = res[i].candidates;
          nshared += static_cast<std::int64_t>(res[i].shared.size());
        }
        const std::int64_t total = out_ptr[q];
        std::vector<cw::node_t> targets(total), shared;
        std::vector<double> scores(total);
        std::vector<std::int64_t> shared_ptr(static_cast<std::size_t>(total) + 1, 0);
        shared.reserve(static_cast<std::size_t>(nshared));
        for (std::int64_t i = 0; i < q; ++i) {
          const auto& r = res[i];
          std::copy(r.targets.begin(), r.targets.end(), targets.begin() + out_ptr[i]);
          std::copy(r.scores.begin(), r.scores.end(), scores.begin() + out_ptr[i]);
          const std::int64_t base = static_cast<std::int64_t>(shared.size());
          shared.insert(shared.end(), r.shared.begin(), r.shared.end());
          for (std::size_t j = 0; j < r.targets.size(); ++j)
            shared_ptr[out_ptr[i] + static_cast<std::int64_t>(j) + 1] = base + r.shared_ptr[j + 1];
        }
        return py::make_tuple(vector_to_array(std::move(out_ptr)), vector_to_array(std::move(targets)),
                              vector_to_array(std::move(scores)), vector_to_array(std::move(shared_ptr)),
                              vector_to_array(std::move(shared)), vector_to_array(std::move(cand)));
      },
      "graph"_a, "nodes"_a, "min_shared"_a = 2, "k"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Resource allocation for many nodes: returns (ptr, targets, scores, shared_ptr, shared, candidates).");

  m.def(
      "path_batch",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& sources, const carray<std::int32_t>& targets,
         int threads, const VisibilityMask* visible) {
        check_1d(sources, "sources");
        check_1d(targets, "targets", sources.shape(0));
        const cw::Visibility vis = resolve_visibility(g, visible);
        const std::int64_t q = sources.shape(0);
        std::vector<cw::PathResult> res(static_cast<std::size_t>(q));
        {
          const std::int32_t* s = sources.data();
          const std::int32_t* t = targets.data();
          py::gil_scoped_release nogil;
          for (std::int64_t i = 0; i < q; ++i)
            for (cw::node_t x : {s[i], t[i]})
              if (x < 0 || x >= g.num_nodes() || !cw::CSRGraph::visible(x, vis))
                throw cw::NodeOutOfRange("node index " + std::to_string(x) + " is not a visible node");
          cw::parallel_for(q, threads, [&](std::int64_t i) { res[i] = cw::shortest_path(g, vis, s[i], t[i]); });
        }
        std::vector<std::int64_t> out_ptr(static_cast<std::size_t>(q) + 1, 0);
        std::vector<const std::vector<cw::node_t>*> pp(q);
        for (std::int64_t i = 0; i < q; ++i) {
          out_ptr[i + 1] = out_ptr[i] + static_cast<std::int64_t>(res[i].path.size());
          pp[i] = &res[i].path;
        }
        auto paths = concat(out_ptr, q, pp.data());
        return py::make_tuple(vector_to_array(std::move(out_ptr)), vector_to_array(std::move(paths)));
      },
      "graph"_a, "sources"_a, "targets"_a, "threads"_a = 1, "visible"_a = py::none(),
      "Shortest paths for many (source, target) pairs: returns (ptr, nodes); an empty slice = no path.");
}
