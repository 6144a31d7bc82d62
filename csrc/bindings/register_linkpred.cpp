#include "prelude.hpp"

#include "conceptwalk/batch.hpp"
#include "conceptwalk/linkpred.hpp"

void register_linkpred(py::module_& m) {
  m.def(
      "resource_allocation",
      [](const cw::CSRGraph& g, std::int64_t node, std::int32_t min_shared, std::int64_t k,
         const VisibilityMask* visible) {
        if (node < 0 || node >= g.num_nodes())
          throw py::index_error("node index " + std::to_string(node) + " outside [0, " +
                                std::to_string(g.num_nodes()) + ")");
        const cw::Visibility vis = resolve_visibility(g, visible);
        cw::RAResult r;
        {
          py::gil_scoped_release nogil;
          r = cw::resource_allocation(g, vis, static_cast<cw::node_t>(node), min_shared, k);
        }
        const std::int64_t cand = r.candidates;
        return py::make_tuple(vector_to_array(std::move(r.targets)), vector_to_array(std::move(r.scores)),
                              vector_to_array(std::move(r.shared_ptr)), vector_to_array(std::move(r.shared)),
                              cand);
      },
      "graph"_a, "node"_a, "min_shared"_a = 2, "k"_a = 0, "visible"_a = py::none(),
      "Resource allocation for one node; returns (targets, scores, shared_ptr, shared, candidates).");

  m.def(
      "resource_allocation_batch",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& nodes, std::int32_t min_shared,
         std::int64_t k, int threads, const VisibilityMask* visible) {
        check_1d(nodes, "nodes");
        const cw::Visibility vis = resolve_visibility(g, visible);
        const std::int64_t q = nodes.shape(0);
        std::vector<cw::RAResult> results(static_cast<std::size_t>(q));
        {
          const std::int32_t* a = nodes.data();
          py::gil_scoped_release nogil;
          if (min_shared < 1) throw cw::InvalidArgument("min_shared must be >= 1, got " + std::to_string(min_shared));
          for (std::int64_t i = 0; i < q; ++i) {
            if (a[i] < 0 || a[i] >= g.num_nodes() || !cw::CSRGraph::visible(a[i], vis))
              throw cw::NodeOutOfRange("node index " + std::to_string(a[i]) + " is not a visible node");
          }
          cw::parallel_for(q, threads, [&](std::int64_t i) {
            results[i] = cw::resource_allocation(g, vis, a[i], min_shared, k);
          });
        }
        std::vector<std::int64_t> out_ptr(static_cast<std::size_t>(q) + 1, 0);
        for (std::int64_t i = 0; i < q; ++i)
          out_ptr[i + 1] = out_ptr[i] + static_cast<std::int64_t>(results[i].targets.size());
        const std::int64_t total = out_ptr[q];
        std::vector<cw::node_t> targets(static_cast<std::size_t>(total));
        std::vector<double> scores(static_cast<std::size_t>(total));
        std::vector<std::int64_t> shared_ptr(static_cast<std::size_t>(total) + 1, 0);
        std::vector<cw::node_t> shared;
        for (std::int64_t i = 0; i < q; ++i) {
          const auto& r = results[i];
          for (std::size_t j = 0; j < r.targets.size(); ++j) {
            const std::int64_t o = out_ptr[i] + static_cast<std::int64_t>(j);
            targets[o] = r.targets[j];
            scores[o] = r.scores[j];
            shared.insert(shared.end(), r.shared.begin() + r.shared_ptr[j], r.shared.begin() + r.shared_ptr[j + 1]);
            shared_ptr[o + 1] = static_cast<std::int64_t>(shared.size());
          }
        }
        return py::make_tuple(vector_to_array(std::move(out_ptr)), vector_to_array(std::move(targets)),
                              vector_to_array(std::move(scores)), vector_to_array(std::move(shared_ptr)),
                              vector_to_array(std::move(shared)));
      },
      "graph"_a, "nodes"_a, "min_shared"_a = 2, "k"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Resource allocation for many nodes across threads; returns (result_ptr, targets, scores, shared_ptr, shared).");
}
