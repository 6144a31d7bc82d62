// Resource allocation for one node and for many across threads; read-only result classes.
#include "prelude.hpp"

#include "conceptwalk/batch.hpp"
#include "conceptwalk/suggest.hpp"

void register_suggest(py::module_& m) {
  py::class_<cw::RAResult>(
      m, "RAResult",
      "Resource-allocation suggestions for one node: targets by score descending then index, "
      "target j's shared neighbours at shared[shared_ptr[j]:shared_ptr[j + 1]] (ascending), and "
      "how many candidates met min_shared. Read-only.")
      .def_property_readonly("targets", vector_property(&cw::RAResult::targets))
      .def_property_readonly("scores", vector_property(&cw::RAResult::scores))
      .def_property_readonly("shared_ptr", vector_property(&cw::RAResult::shared_ptr))
      .def_property_readonly("shared", vector_property(&cw::RAResult::shared))
      .def_readonly("candidates", &cw::RAResult::candidates)
      .def("__len__", [](const cw::RAResult& r) { return r.targets.size(); });

  py::class_<cw::RABatch>(m, "RABatch",
                          "Resource allocation for many nodes: query i's targets and scores at ptr[i]:ptr[i + 1], "
                          "target j's shared neighbours at shared[shared_ptr[j]:shared_ptr[j + 1]], per-query "
                          "candidates. Read-only.")
      .def_property_readonly("ptr", vector_property(&cw::RABatch::ptr))
      .def_property_readonly("targets", vector_property(&cw::RABatch::targets))
      .def_property_readonly("scores", vector_property(&cw::RABatch::scores))
      .def_property_readonly("shared_ptr", vector_property(&cw::RABatch::shared_ptr))
      .def_property_readonly("shared", vector_property(&cw::RABatch::shared))
      .def_property_readonly("candidates", vector_property(&cw::RABatch::candidates));

  m.def(
      "resource_allocation",
      [](const cw::CSRGraph& g, std::int64_t node, std::int64_t min_shared, std::int64_t k, py::handle visible) {
        const cw::node_t a = node_scalar(node, g, "node");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        py::gil_scoped_release nogil;
        return cw::resource_allocation(g, vis, a, min_shared, k);
      },
      "graph"_a, "node"_a, "min_shared"_a = 2, "k"_a = 0, "visible"_a = py::none(),
      "Resource allocation for one node (k <= 0: all candidates); returns an RAResult.");

  m.def(
      "suggest_batch",
      [](const cw::CSRGraph& g, py::handle nodes_in, std::int64_t min_shared, std::int64_t k, int threads,
         py::handle visible) {
        const carray<std::int32_t> nodes = node_array(nodes_in, g, "nodes");
        check_1d(nodes, "nodes");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const std::int32_t* a = nodes.data();
        const std::int64_t q = nodes.shape(0);
        py::gil_scoped_release nogil;
        return cw::resource_allocation_batch(g, vis, q, a, min_shared, k, threads);
      },
      "graph"_a, "nodes"_a, "min_shared"_a = 2, "k"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Resource allocation for many nodes across threads; returns an RABatch.");
}
