#include "prelude.hpp"

#include "conceptwalk/walk.hpp"

void register_walk(py::module_& m) {
  m.attr("WALK_MAX_HOPS_LIMIT") = cw::kWalkMaxHopsLimit;
  m.def(
      "typed_walk",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& starts, std::int32_t max_hops,
         const carray<bool>& expand_types, const carray<bool>& admit_types,
         const std::optional<carray<std::int32_t>>& node_type,
         const std::optional<carray<bool>>& expand_node_types,
         const std::optional<carray<bool>>& admit_node_types, std::int64_t max_edges,
         std::int64_t max_candidates, const VisibilityMask* visible) {
        check_1d(starts, "starts");
        check_1d(expand_types, "expand_types");
        check_1d(admit_types, "admit_types", expand_types.shape(0));
        const cw::Visibility vis = resolve_visibility(g, visible);
        cw::WalkParams wp;
        wp.max_hops = max_hops;
        wp.expand_types = reinterpret_cast<const std::uint8_t*>(expand_types.data());
        wp.admit_types = reinterpret_cast<const std::uint8_t*>(admit_types.data());
        wp.num_type_flags = static_cast<std::int32_t>(expand_types.shape(0));
        if ((expand_node_types || admit_node_types) && !node_type)
          throw py::value_error("node_type is required when a node-type filter is given");
        if (node_type) {
          check_1d(*node_type, "node_type", g.num_nodes());
          wp.node_type = node_type->data();
        }
        std::int64_t nflags = -1;
        if (expand_node_types) {
          check_1d(*expand_node_types, "expand_node_types");
          wp.expand_node_types = reinterpret_cast<const std::uint8_t*>(expand_node_types->data());
          nflags = expand_node_types->shape(0);
        }
        if (admit_node_types) {
          check_1d(*admit_node_types, "admit_node_types", nflags);
          wp.admit_node_types = reinterpret_cast<const std::uint8_t*>(admit_node_types->data());
          nflags = admit_node_types->shape(0);
        }
        wp.num_node_type_flags = static_cast<std::int32_t>(std::max<std::int64_t>(nflags, 0));
        wp.max_edges = max_edges;
        wp.max_candidates = max_candidates;
        cw::WalkResult r;
        {
          const std::int32_t* s = starts.data();
          const std::int64_t ns = starts.shape(0);
          py::gil_scoped_release nogil;
          r = cw::typed_walk(g, vis, ns, s, wp);
        }
        const std::int64_t npaths = static_cast<std::int64_t>(r.path_hops.size());
        auto nodes = vector_to_array(std::move(r.path_nodes)).reshape({npaths, static_cast<std::int64_t>(r.width)});
        auto entries = vector_to_array(std::move(r.path_entries)).reshape({npaths, static_cast<std::int64_t>(r.width - 1)});
        const std::int64_t visited = r.edges_visited;
        const bool truncated = r.truncated;
        return py::make_tuple(nodes, entries, vector_to_array(std::move(r.path_hops)),
                              vector_to_array(std::move(r.candidates)), visited, truncated);
      },
      "graph"_a, "starts"_a, "max_hops"_a, "expand_types"_a, "admit_types"_a,
      "node_type"_a = py::none(), "expand_node_types"_a = py::none(), "admit_node_types"_a = py::none(),
      "max_edges"_a = 10000, "max_candidates"_a = 50, "visible"_a = py::none(),
      "Bounded typed walk; returns (path_nodes, path_entries, path_hops, candidates, edges_visited, truncated).");
}
