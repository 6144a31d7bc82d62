// Shortest paths (one pair, many pairs) and multi-source hop counts; read-only result classes.
#include "prelude.hpp"

#include "conceptwalk/batch.hpp"
#include "conceptwalk/path.hpp"

void register_path(py::module_& m) {
  py::class_<cw::PathResult>(
      m, "PathResult",
      "A shortest path: node indices from source to target inclusive (empty: no visible path) "
      "and the nodes both searches reached. Read-only.")
      .def_property_readonly("path", vector_property(&cw::PathResult::path))
      .def_readonly("visited", &cw::PathResult::visited)
      .def("__len__", [](const cw::PathResult& r) { return r.path.size(); });

  py::class_<cw::PathBatch>(
      m, "PathBatch",
      "Shortest paths for many pairs: pair i's path at nodes[ptr[i]:ptr[i + 1]] (empty: none). "
      "Read-only.")
      .def_property_readonly("ptr", vector_property(&cw::PathBatch::ptr))
      .def_property_readonly("nodes", vector_property(&cw::PathBatch::nodes));

  py::class_<cw::ChainsResult>(
      m, "ChainsResult",
      "Shortest chains from one source: target i's chain at path[ptr[i]:ptr[i + 1]] (empty: not "
      "reached within the budget, or not connected) and the row entries the BFS read. Read-only.")
      .def_property_readonly("ptr", vector_property(&cw::ChainsResult::ptr))
      .def_property_readonly("path", vector_property(&cw::ChainsResult::path))
      .def_readonly("visits", &cw::ChainsResult::visits);

  py::class_<cw::HopsResult>(
      m, "HopsResult",
      "Per target: hops to the nearest seed (-1: not reached) and that seed (smallest index on "
      "ties; -1: not reached). Read-only.")
      .def_property_readonly("hops", vector_property(&cw::HopsResult::hops))
      .def_property_readonly("via", vector_property(&cw::HopsResult::via));

  m.def(
      "shortest_path",
      [](const cw::CSRGraph& g, std::int64_t source, std::int64_t target, py::handle visible) {
        const cw::node_t s = node_scalar(source, g, "source");
        const cw::node_t t = node_scalar(target, g, "target");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        Nogil nogil;
        return cw::shortest_path(g, vis, s, t);
      },
      "graph"_a, "source"_a, "target"_a, "visible"_a = py::none(),
      "Bidirectional BFS, lexicographically smallest shortest path; returns a PathResult.");

  m.def(
      "shortest_path",
      [](const LiveGraph& g, std::int64_t source, std::int64_t target, py::handle visible) {
        const cw::GraphRef ref = g.ref();
        const cw::node_t s = node_scalar(source, ref, "source");
        const cw::node_t t = node_scalar(target, ref, "target");
        const cw::Visibility vis = live_visibility(g, visible);
        Nogil nogil;
        return cw::shortest_path(ref, vis, s, t);
      },
      "graph"_a, "source"_a, "target"_a, "visible"_a = py::none(),
      "shortest_path over a LiveGraph (base plus delta; visible: its LiveVisibility or None): the "
      "same path as on a fresh build (lexicographically smallest by id).");

  m.def(
      "shortest_path_ids",
      [](const cw::CSRGraph& g, py::handle index, py::handle source, py::handle target, py::handle visible,
         py::handle ids) -> py::object {
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const cw::node_t s = lookup_visible_id(index, source, g, vis);
        const cw::node_t t = s < 0 ? -1 : lookup_visible_id(index, target, g, vis);
        if (t < 0) return py::none();
        cw::PathResult r;
        {
          Nogil nogil;
          r = cw::shortest_path(g, vis, s, t);
        }
        if (ids.is_none()) return int_list(r.path.data(), r.path.size());
        PyObject* out = PyList_New(static_cast<Py_ssize_t>(r.path.size()));
        if (out == nullptr) throw py::error_already_set();
        py::list l = py::reinterpret_steal<py::list>(out);
        for (std::size_t i = 0; i < r.path.size(); ++i)
          PyList_SET_ITEM(out, static_cast<Py_ssize_t>(i), seq_item(ids, r.path[i]).release().ptr());
        return l;
      },
      "graph"_a, "index"_a, "source"_a, "target"_a, "visible"_a = py::none(), "ids"_a = py::none(),
      "shortest_path by node ids, resolved through `index` (id -> node index) in the same call: None "
      "when an id is not an exact str of a node visible under `visible` (the caller raises), else the "
      "path (empty: none) as node indices, or as the items of `ids` when given.");

  m.def(
      "path_batch",
      [](const cw::CSRGraph& g, py::handle sources_in, py::handle targets_in, int threads, py::handle visible) {
        const carray<std::int32_t> sources = node_array(sources_in, g, "sources");
        const carray<std::int32_t> targets = node_array(targets_in, g, "targets");
        check_1d(sources, "sources");
        check_1d(targets, "targets", sources.shape(0));
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const std::int32_t* s = sources.data();
        const std::int32_t* t = targets.data();
        const std::int64_t q = sources.shape(0);
        Nogil nogil;
        return cw::shortest_path_batch(g, vis, q, s, t, threads);
      },
      "graph"_a, "sources"_a, "targets"_a, "threads"_a = 1, "visible"_a = py::none(),
      "Shortest paths for many (source, target) pairs across threads; returns a PathBatch.");

  m.def(
      "shortest_paths_from",
      [](const cw::CSRGraph& g, std::int64_t source, py::handle targets_in, std::int64_t max_visits,
         py::handle visible) {
        const cw::node_t s = node_scalar(source, g, "source");
        const carray<std::int32_t> targets = node_array(targets_in, g, "targets");
        check_1d(targets, "targets");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const std::int32_t* t = targets.data();
        const std::int64_t nt = targets.shape(0);
        Nogil nogil;
        return cw::shortest_paths_from(g, vis, s, nt, t, max_visits);
      },
      "graph"_a, "source"_a, "targets"_a, "max_visits"_a = -1, "visible"_a = py::none(),
      "shortest_path's chain from source to every target by one BFS (max_visits < 0: no budget; a "
      "target not reached within it gets an empty chain); returns a ChainsResult.");

  m.def(
      "multi_source_hops",
      [](const cw::CSRGraph& g, py::handle seeds_in, py::handle targets_in, std::int32_t max_hops,
         py::handle visible) {
        const carray<std::int32_t> seeds = node_array(seeds_in, g, "seeds");
        const carray<std::int32_t> targets = node_array(targets_in, g, "targets");
        check_1d(seeds, "seeds");
        check_1d(targets, "targets");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const std::int32_t* s = seeds.data();
        const std::int32_t* t = targets.data();
        const std::int64_t ns = seeds.shape(0), nt = targets.shape(0);
        Nogil nogil;
        return cw::multi_source_hops(g, vis, ns, s, nt, t, max_hops);
      },
      "graph"_a, "seeds"_a, "targets"_a, "max_hops"_a = -1, "visible"_a = py::none(),
      "Hop count from the nearest seed and that seed (smallest index on ties) for each target; "
      "returns a HopsResult.");
}
