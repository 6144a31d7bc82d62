#include "prelude.hpp"

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

}
