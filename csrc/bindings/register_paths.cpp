#include "prelude.hpp"

#include "conceptwalk/paths.hpp"

void register_paths(py::module_& m) {
  m.def(
      "shortest_path",
      [](const cw::CSRGraph& g, std::int64_t source, std::int64_t target, const VisibilityMask* visible) {
        for (std::int64_t x : {source, target})
          if (x < 0 || x >= g.num_nodes())
            throw py::index_error("node index " + std::to_string(x) + " outside [0, " +
                                  std::to_string(g.num_nodes()) + ")");
        const cw::Visibility vis = resolve_visibility(g, visible);
        cw::PathResult r;
        {
          py::gil_scoped_release nogil;
          r = cw::shortest_path(g, vis, static_cast<cw::node_t>(source), static_cast<cw::node_t>(target));
        }
        const std::int64_t visited = r.visited;
        return py::make_tuple(vector_to_array(std::move(r.path)), visited);
      },
      "graph"_a, "source"_a, "target"_a, "visible"_a = py::none(),
      "Bidirectional BFS, lexicographically smallest shortest path; returns (path, visited). Empty path: none.");

  m.def(
      "multi_source_hops",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& seeds, const carray<std::int32_t>& targets,
         std::int32_t max_hops, const VisibilityMask* visible) {
        check_1d(seeds, "seeds");
        check_1d(targets, "targets");
        const cw::Visibility vis = resolve_visibility(g, visible);
        cw::HopsResult r;
        {
          const std::int32_t* s = seeds.data();
          const std::int32_t* t = targets.data();
          const std::int64_t ns = seeds.shape(0), nt = targets.shape(0);
          py::gil_scoped_release nogil;
          r = cw::multi_source_hops(g, vis, ns, s, nt, t, max_hops);
        }
        return py::make_tuple(vector_to_array(std::move(r.hops)), vector_to_array(std::move(r.via)));
      },
      "graph"_a, "seeds"_a, "targets"_a, "max_hops"_a = -1, "visible"_a = py::none(),
      "Hop count from the nearest seed and that seed (smallest index on ties) for each target.");
}
