#include "prelude.hpp"

#include <cmath>

#include "conceptwalk/walk.hpp"

namespace {

// The walk's outcome, owned; its arrays are read-only views into it.
struct WalkOutcome {
  cw::WalkResult r;
};

template <class T>
py::array_t<T> view2d(const std::vector<T>& v, std::int64_t rows, std::int64_t cols, py::handle base) {
  py::array_t<T> a({static_cast<py::ssize_t>(rows), static_cast<py::ssize_t>(cols)},
                   {static_cast<py::ssize_t>(cols * sizeof(T)), static_cast<py::ssize_t>(sizeof(T))}, v.data(),
                   base);
  a.attr("setflags")("write"_a = false);
  return a;
}

template <class T>
py::array_t<T> view1d(const std::vector<T>& v, py::handle base) {
  return readonly_view<T>(v.data(), static_cast<std::int64_t>(v.size()), base);
}

}  // namespace

void register_walk(py::module_& m) {
  m.attr("WALK_MAX_HOPS_LIMIT") = cw::kWalkMaxHopsLimit;
  py::class_<WalkOutcome, std::shared_ptr<WalkOutcome>>(
      m, "WalkResult",
      "Outcome of typed_walk (read-only). Per kept candidate, in rank order: candidates, scores, "
      "reach, min_hops, path_count, and path_ptr (offsets into the returned paths); per returned "
      "path: path_nodes (paths x (max_hops + 1), -1 padded), path_edges (canonical edge ids, -1 "
      "padded), path_hops, path_scores.")
      .def_property_readonly("candidates",
                             [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.candidates, s); })
      .def_property_readonly("scores", [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.scores, s); })
      .def_property_readonly("reach", [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.reach, s); })
      .def_property_readonly("min_hops", [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.min_hops, s); })
      .def_property_readonly("path_count",
                             [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.path_count, s); })
      .def_property_readonly("path_ptr", [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.path_ptr, s); })
      .def_property_readonly("path_nodes",
                             [](py::object s) {
                               const auto& r = s.cast<WalkOutcome&>().r;
                               return view2d(r.path_nodes, static_cast<std::int64_t>(r.path_hops.size()), r.width,
                                             s);
                             })
      .def_property_readonly("path_edges",
                             [](py::object s) {
                               const auto& r = s.cast<WalkOutcome&>().r;
                               return view2d(r.path_edges, static_cast<std::int64_t>(r.path_hops.size()),
                                             r.width - 1, s);
                             })
      .def_property_readonly("path_hops",
                             [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.path_hops, s); })
      .def_property_readonly("path_scores",
                             [](py::object s) { return view1d(s.cast<WalkOutcome&>().r.path_scores, s); })
      .def_property_readonly("edges_visited", [](const WalkOutcome& o) { return o.r.edges_visited; })
      .def_property_readonly("candidates_found", [](const WalkOutcome& o) { return o.r.candidates_found; })
      .def_property_readonly("cut_by_edges", [](const WalkOutcome& o) { return o.r.cut_by_edges; })
      .def_property_readonly("cut_by_candidates", [](const WalkOutcome& o) { return o.r.cut_by_candidates; })
      .def_property_readonly("truncated",
                             [](const WalkOutcome& o) { return o.r.cut_by_edges || o.r.cut_by_candidates; })
      .def("__repr__", [](const WalkOutcome& o) {
        return "WalkResult(candidates=" + std::to_string(o.r.candidates.size()) +
               ", paths=" + std::to_string(o.r.path_hops.size()) +
               ", edges_visited=" + std::to_string(o.r.edges_visited) +
               ", truncated=" + ((o.r.cut_by_edges || o.r.cut_by_candidates) ? "True" : "False") + ")";
      });
  m.def(
      "typed_walk",
      [](const cw::CSRGraph& g, const carray<std::int32_t>& starts, std::int32_t max_hops,
         const carray<bool>& expand_types, const carray<bool>& admit_types,
         const std::optional<carray<std::int32_t>>& node_type,
         const std::optional<carray<bool>>& expand_node_types, const std::optional<carray<bool>>& admit_node_types,
         std::int64_t max_edges, std::int64_t max_candidates, const VisibilityMask* visible,
         const std::optional<carray<double>>& start_weights, const std::optional<carray<double>>& edge_weights,
         double hop_decay, double min_share, std::int64_t max_paths) {
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
        if (start_weights) {
          check_1d(*start_weights, "start_weights", starts.shape(0));
          wp.start_weights = start_weights->data();
        }
        if (edge_weights) {
          check_1d(*edge_weights, "edge_weights", g.num_edges());
          wp.edge_weights = edge_weights->data();
        }
        if (!(hop_decay > 0.0 && hop_decay <= 1.0))
          throw py::value_error("hop_decay must be in (0, 1], got " + std::to_string(hop_decay));
        if (!(min_share >= 0.0 && min_share <= 1.0))
          throw py::value_error("min_share must be in [0, 1], got " + std::to_string(min_share));
        wp.hop_decay = hop_decay;
        wp.min_share = min_share;
        wp.max_paths = max_paths;
        auto out = std::make_shared<WalkOutcome>();
        {
          const std::int32_t* s = starts.data();
          const std::int64_t ns = starts.shape(0);
          py::gil_scoped_release nogil;
          out->r = cw::typed_walk(g, vis, ns, s, wp);
        }
        return out;
      },
      "graph"_a, "starts"_a, "max_hops"_a, "expand_types"_a, "admit_types"_a, "node_type"_a = py::none(),
      "expand_node_types"_a = py::none(), "admit_node_types"_a = py::none(), "max_edges"_a = 10000,
      "max_candidates"_a = 50, "visible"_a = py::none(), "start_weights"_a = py::none(),
      "edge_weights"_a = py::none(), "hop_decay"_a = 1.0, "min_share"_a = 0.5, "max_paths"_a = 0,
      "Best-first, budget-fair bounded typed walk; returns a WalkResult.");
}
