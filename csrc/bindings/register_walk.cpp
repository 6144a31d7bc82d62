#include "prelude.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "conceptwalk/walk.hpp"

namespace {

// The walk's outcome, owned; its arrays are read-only views into it.
struct WalkOutcome {
  cw::WalkResult r;
  std::int64_t num_nodes = 0;        // of the graph walked: render_paths refuses another graph's sizes
  std::int64_t num_edges = 0;        // (over a live graph: the base's edges plus the delta's listed ones)
  py::object rendered = py::none();  // with typed_walk(render=...): per candidate its paths, or None
  // Over a live graph: the graph walked (its order decides a hop's direction) and the listed
  // pairs' edges' (type << 1) | direction, edge first_id + i being entry i.
  std::shared_ptr<const cw::CSRGraph> live_base;
  std::shared_ptr<const cw::GraphDelta> live_delta;
  py::object delta_typedir_keep;  // the listed edges' array (kept alive, read in place)
  const std::int32_t* delta_typedir = nullptr;
  std::int64_t first_id = 0;
};

// What rendering reads of the graph walked: its sizes, each edge's (type << 1) | direction and
// the node order (a CSRGraph's index, a live graph's order keys).
struct RenderSource {
  std::int64_t n = 0, m = 0;
  const cw::CSRGraph* base = nullptr;
  const cw::GraphDelta* delta = nullptr;  // null: base alone
  const std::int32_t* dtd = nullptr;      // with delta: the listed edges'
  std::int64_t first_id = 0;

  std::int32_t typedir(std::int64_t e) const {
    if (e < base->num_edges()) return base->edge_typedir()[e];
    return dtd[e - first_id];
  }
  bool before(cw::node_t a, cw::node_t b) const { return delta ? cw::GraphRef(*base, delta).before(a, b) : a < b; }
};

RenderSource render_source(const WalkOutcome& o, py::handle graph) {
  RenderSource src;
  if (o.live_base) {
    if (!py::isinstance<LiveGraph>(graph)) throw cw::InvalidArgument("render_paths: the walk ran on a LiveGraph");
    const auto& lg = graph.cast<const LiveGraph&>();
    if (lg.base != o.live_base || lg.delta != o.live_delta)
      throw cw::InvalidArgument("render_paths: the graph is not the LiveGraph this walk ran on");
    src.base = o.live_base.get();
    src.delta = o.live_delta.get();
    src.dtd = o.delta_typedir;
    src.first_id = o.first_id;
    src.n = o.live_delta->n;
    src.m = o.num_edges;
    return src;
  }
  if (!py::isinstance<cw::CSRGraph>(graph)) throw cw::InvalidArgument("render_paths: the walk ran on a CSRGraph");
  src.base = &graph.cast<const cw::CSRGraph&>();
  src.n = src.base->num_nodes();
  src.m = src.base->num_edges();
  return src;
}

// A new reference from the CPython API, or the Python error it raised as a C++ exception.
py::object owned(PyObject* o) {
  if (!o) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(o);
}

PyObject* interned(const char* s) {
  PyObject* o = PyUnicode_InternFromString(s);  // kept for the process (the module's key strings)
  if (!o) throw py::error_already_set();
  return o;
}

void set_item(PyObject* d, PyObject* key, PyObject* value) {
  if (PyDict_SetItem(d, key, value) != 0) throw py::error_already_set();
}

// The paths of the candidates at `slots` (positions in o.r.candidates), each a list of
// {"concept", "score", "nodes", "hops"} dicts; a hop is {"from", "to", "type", "direction"} plus
// its edge's provenance: (present, absent) = provenance_cache[e] (or provenance_miss(e), which is
// expected to fill the cache), present's values copied (a dict value is copied one level) and
// absent, when non-empty, copied under "absent". What the wrap's Python decoding built per hop,
// in one call per walk. Every index read is checked against the graph and the result's arrays.
// Over a live graph, `ids` holds the base's ids and `tail_ids` the new slots' (slot base_n + j).
py::list render_paths(const WalkOutcome& o, py::handle graph, const std::vector<std::int64_t>& slots,
                      const py::list& ids, const py::sequence& type_names, const py::dict& provenance_cache,
                      const py::object& provenance_miss, const py::object& tail_ids = py::none()) {
  static PyObject* const k_concept = interned("concept");
  static PyObject* const k_score = interned("score");
  static PyObject* const k_nodes = interned("nodes");
  static PyObject* const k_hops = interned("hops");
  static PyObject* const k_from = interned("from");
  static PyObject* const k_to = interned("to");
  static PyObject* const k_type = interned("type");
  static PyObject* const k_direction = interned("direction");
  static PyObject* const k_absent = interned("absent");
  static PyObject* const v_forward = interned("forward");
  static PyObject* const v_backward = interned("backward");
  const cw::WalkResult& r = o.r;
  const RenderSource g = render_source(o, graph);
  const std::int64_t n = g.n, m = g.m;
  if (n != o.num_nodes || m != o.num_edges)
    throw cw::InvalidArgument("render_paths: the graph is not the one this walk ran on (" + std::to_string(n) +
                              " nodes, " + std::to_string(m) + " edges; the walk's graph had " +
                              std::to_string(o.num_nodes) + " and " + std::to_string(o.num_edges) + ")");
  PyObject* tail_items = nullptr;
  if (!tail_ids.is_none()) {
    if (!PyList_Check(tail_ids.ptr())) throw py::type_error("render_paths: tail_ids must be a list");
    if (!g.delta) throw cw::InvalidArgument("render_paths: tail_ids are a live graph's");
    tail_items = tail_ids.ptr();
  }
  const std::int64_t head = g.delta ? g.base->num_nodes() : n;
  if (static_cast<std::int64_t>(PyList_GET_SIZE(ids.ptr())) != head ||
      (g.delta && (!tail_items || static_cast<std::int64_t>(PyList_GET_SIZE(tail_items)) != n - head)))
    throw cw::InvalidArgument("render_paths: ids (and over a live graph tail_ids) must hold one id per node (" +
                              std::to_string(n) + ")");
  std::vector<py::object> names;
  for (py::handle t : type_names) names.push_back(py::reinterpret_borrow<py::object>(t));
  const std::int64_t ncand = static_cast<std::int64_t>(r.candidates.size());
  const std::int64_t npaths = static_cast<std::int64_t>(r.path_hops.size());
  const std::int64_t width = r.width;
  if (static_cast<std::int64_t>(r.path_ptr.size()) != ncand + 1 && ncand > 0)
    throw cw::InvalidArgument("render_paths: the walk result has no path offsets");
  PyObject* id_items = ids.ptr();
  // provenance_miss (and a provenance key's __hash__/__eq__) run Python code mid-rendering that
  // can shrink `ids`: every read of it is checked against its size at that moment.
  auto id_at = [id_items, tail_items, head](std::int32_t i) -> PyObject* {
    if (i >= head) {
      if (!tail_items || i - head >= PyList_GET_SIZE(tail_items))
        throw cw::InvalidArgument("render_paths: ids changed size during the rendering");
      return PyList_GET_ITEM(tail_items, i - head);
    }
    if (i >= PyList_GET_SIZE(id_items))
      throw cw::InvalidArgument("render_paths: ids changed size during the rendering");
    return PyList_GET_ITEM(id_items, i);
  };
  py::list out(slots.size());
  for (std::size_t si = 0; si < slots.size(); ++si) {
    const std::int64_t s = slots[si];
    if (s < 0 || s >= ncand)
      throw cw::InvalidArgument("render_paths: slot " + std::to_string(s) + " is not a candidate position (0.." +
                                std::to_string(ncand - 1) + ")");
    const std::int64_t p0 = r.path_ptr[s], p1 = r.path_ptr[s + 1];
    if (p0 < 0 || p1 < p0 || p1 > npaths) throw cw::InvalidArgument("render_paths: path offsets out of range");
    py::list paths(static_cast<std::size_t>(p1 - p0));
    for (std::int64_t p = p0; p < p1; ++p) {
      const std::int64_t h = r.path_hops[p];
      if (h < 0 || h + 1 > width) throw cw::InvalidArgument("render_paths: path length out of range");
      const std::int32_t* row = r.path_nodes.data() + p * width;
      const std::int64_t* edges = r.path_edges.data() + p * (width - 1);
      for (std::int64_t j = 0; j <= h; ++j)
        if (row[j] < 0 || row[j] >= n) throw cw::InvalidArgument("render_paths: path node out of range");
      py::object nodes = owned(PyList_New(h + 1));
      for (std::int64_t j = 0; j <= h; ++j) {
        PyObject* id = id_at(row[j]);
        Py_INCREF(id);
        PyList_SET_ITEM(nodes.ptr(), j, id);
      }
      py::object hops = owned(PyList_New(h));
      for (std::int64_t j = 0; j < h; ++j) {
        const std::int64_t e = edges[j];
        if (e < 0 || e >= m) throw cw::InvalidArgument("render_paths: path edge out of range");
        const std::int32_t td = g.typedir(e);
        const std::size_t type = static_cast<std::size_t>(td >> 1);
        if (td < 0 || type >= names.size()) throw cw::InvalidArgument("render_paths: edge type code out of range");
        const std::int32_t u = row[j], v = row[j + 1];
        const bool u_first = g.before(u, v);  // the pair's first node in id order
        const std::int32_t src = (td & 1) == 0 ? (u_first ? u : v) : (u_first ? v : u);
        py::object key = owned(PyLong_FromLongLong(e));
        PyObject* got = PyDict_GetItemWithError(provenance_cache.ptr(), key.ptr());  // borrowed
        py::object prov;
        if (got) {
          prov = py::reinterpret_borrow<py::object>(got);
        } else {
          if (PyErr_Occurred()) throw py::error_already_set();
          prov = provenance_miss(key);
        }
        if (!PyTuple_Check(prov.ptr()) || PyTuple_GET_SIZE(prov.ptr()) != 2 ||
            !PyDict_Check(PyTuple_GET_ITEM(prov.ptr(), 0)) || !PyDict_Check(PyTuple_GET_ITEM(prov.ptr(), 1)))
          throw py::type_error("render_paths: a provenance entry must be a (dict, dict) tuple");
        PyObject* present = PyTuple_GET_ITEM(prov.ptr(), 0);
        PyObject* absent = PyTuple_GET_ITEM(prov.ptr(), 1);
        py::object hop = owned(PyDict_New());
        set_item(hop.ptr(), k_from, id_at(u));
        set_item(hop.ptr(), k_to, id_at(v));
        set_item(hop.ptr(), k_type, names[type].ptr());
        set_item(hop.ptr(), k_direction, src == u ? v_forward : v_backward);
        Py_ssize_t pos = 0;
        PyObject *pk, *pv;
        while (PyDict_Next(present, &pos, &pk, &pv)) {
          // owned while in use: hashing a key may run code that removes it from `present`
          const py::object key_ref = py::reinterpret_borrow<py::object>(pk);
          const py::object value_ref = py::reinterpret_borrow<py::object>(pv);
          if (PyDict_Check(pv)) {
            py::object copy = owned(PyDict_Copy(pv));
            set_item(hop.ptr(), key_ref.ptr(), copy.ptr());
          } else {
            set_item(hop.ptr(), key_ref.ptr(), value_ref.ptr());
          }
        }
        if (PyDict_GET_SIZE(absent) > 0) {
          py::object copy = owned(PyDict_Copy(absent));
          set_item(hop.ptr(), k_absent, copy.ptr());
        }
        PyList_SET_ITEM(hops.ptr(), j, hop.release().ptr());
      }
      py::object path = owned(PyDict_New());
      set_item(path.ptr(), k_concept, id_at(row[0]));
      py::object score = owned(PyFloat_FromDouble(r.path_scores[p]));
      set_item(path.ptr(), k_score, score.ptr());
      set_item(path.ptr(), k_nodes, nodes.ptr());
      set_item(path.ptr(), k_hops, hops.ptr());
      paths[static_cast<std::size_t>(p - p0)] = std::move(path);
    }
    out[si] = std::move(paths);
  }
  return out;
}

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

// typed_walk's arguments shared by its two entry points.
struct WalkArgs {
  const carray<std::int32_t>& starts;
  std::int32_t max_hops;
  const carray<bool>& expand_types;
  const carray<bool>& admit_types;
  const std::optional<carray<std::int32_t>>& node_type;
  const std::optional<carray<std::int32_t>>& delta_node_type;
  const std::optional<carray<bool>>& expand_node_types;
  const std::optional<carray<bool>>& admit_node_types;
  std::int64_t max_edges, max_candidates;
  const std::optional<carray<double>>& start_weights;
  const std::optional<carray<double>>& edge_weights;
  double hop_decay, min_share;
  std::int64_t max_paths;
};

// The WalkParams of `a`, each array checked: node_type per node of the first `base_nodes` (the
// rest, over a live graph, in delta_node_type), edge_weights per base canonical edge.
cw::WalkParams walk_params(const WalkArgs& a, std::int64_t num_nodes, std::int64_t base_nodes,
                           std::int64_t base_edges) {
  check_1d(a.starts, "starts");
  check_1d(a.expand_types, "expand_types");
  check_1d(a.admit_types, "admit_types", a.expand_types.shape(0));
  cw::WalkParams wp;
  wp.max_hops = a.max_hops;
  wp.expand_types = reinterpret_cast<const std::uint8_t*>(a.expand_types.data());
  wp.admit_types = reinterpret_cast<const std::uint8_t*>(a.admit_types.data());
  wp.num_type_flags = static_cast<std::int32_t>(a.expand_types.shape(0));
  if ((a.expand_node_types || a.admit_node_types) && !a.node_type)
    throw py::value_error("node_type is required when a node-type filter is given");
  if (a.node_type) {
    check_1d(*a.node_type, "node_type", base_nodes);
    wp.node_type = a.node_type->data();
    if (a.delta_node_type) {
      check_1d(*a.delta_node_type, "delta_node_type", num_nodes - base_nodes);
      wp.node_type_tail = a.delta_node_type->data();
      wp.node_type_split = static_cast<cw::node_t>(base_nodes);
    }
  }
  std::int64_t nflags = -1;
  if (a.expand_node_types) {
    check_1d(*a.expand_node_types, "expand_node_types");
    wp.expand_node_types = reinterpret_cast<const std::uint8_t*>(a.expand_node_types->data());
    nflags = a.expand_node_types->shape(0);
  }
  if (a.admit_node_types) {
    check_1d(*a.admit_node_types, "admit_node_types", nflags);
    wp.admit_node_types = reinterpret_cast<const std::uint8_t*>(a.admit_node_types->data());
    nflags = a.admit_node_types->shape(0);
  }
  wp.num_node_type_flags = static_cast<std::int32_t>(std::max<std::int64_t>(nflags, 0));
  wp.max_edges = a.max_edges;
  wp.max_candidates = a.max_candidates;
  if (a.start_weights) {
    check_1d(*a.start_weights, "start_weights", a.starts.shape(0));
    wp.start_weights = a.start_weights->data();
  }
  if (a.edge_weights) {
    check_1d(*a.edge_weights, "edge_weights", base_edges);
    wp.edge_weights = a.edge_weights->data();
  }
  if (!(a.hop_decay > 0.0 && a.hop_decay <= 1.0))
    throw py::value_error("hop_decay must be in (0, 1], got " + std::to_string(a.hop_decay));
  if (!(a.min_share >= 0.0 && a.min_share <= 1.0))
    throw py::value_error("min_share must be in [0, 1], got " + std::to_string(a.min_share));
  wp.hop_decay = a.hop_decay;
  wp.min_share = a.min_share;
  wp.max_paths = a.max_paths;
  return wp;
}

// typed_walk(render=...): the paths of every kept candidate outside except_nodes, rendered in
// the same call (the wrap's default path: the walk's order is final, the flat hits are left
// out). `render` has `size` items: (ids, type_names, cache, miss, except) or, over a live graph,
// (ids, tail_ids, type_names, cache, miss, except).
void render_in_call(WalkOutcome& out, py::handle graph, const std::optional<py::tuple>& render, std::size_t size) {
  if (!render) return;
  if (render->size() != size)
    throw py::type_error(size == 5 ? "render must be (ids, type_names, provenance_cache, provenance_miss, "
                                     "except_nodes), got " +
                                         std::to_string(render->size()) + " items"
                                   : "render must be (ids, tail_ids, type_names, provenance_cache, "
                                     "provenance_miss, except_nodes), got " +
                                         std::to_string(render->size()) + " items");
  const std::size_t off = size == 6 ? 1 : 0;
  const auto except = (*render)[4 + off].cast<carray<std::int32_t>>();
  check_1d(except, "render except_nodes");
  std::vector<std::int32_t> skip(except.data(), except.data() + except.shape(0));
  std::sort(skip.begin(), skip.end());
  std::vector<std::int64_t> slots;
  const auto& cands = out.r.candidates;
  for (std::size_t i = 0; i < cands.size(); ++i)
    if (!std::binary_search(skip.begin(), skip.end(), cands[i])) slots.push_back(static_cast<std::int64_t>(i));
  py::list got = render_paths(out, graph, slots, (*render)[0].cast<py::list>(),
                              (*render)[1 + off].cast<py::sequence>(), (*render)[2 + off].cast<py::dict>(),
                              (*render)[3 + off], off ? py::object((*render)[1]) : py::object(py::none()));
  py::list per(cands.size());
  for (std::size_t i = 0; i < cands.size(); ++i) per[i] = py::none();
  for (std::size_t j = 0; j < slots.size(); ++j) per[static_cast<std::size_t>(slots[j])] = got[j];
  out.rendered = std::move(per);
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
      .def_property_readonly(
          "rendered", [](const WalkOutcome& o) { return o.rendered; },
          "With typed_walk(render=...): per kept candidate its rendered paths (as render_paths "
          "gives them), None for a candidate in except_nodes; else None.")
      .def("render_paths", &render_paths, "graph"_a, "slots"_a, "ids"_a, "type_names"_a, "provenance_cache"_a,
           "provenance_miss"_a, "tail_ids"_a = py::none(),
           "The paths of the candidates at `slots` (positions in `candidates`) as JSON-ready dicts: per "
           "candidate a list of {concept, score, nodes, hops}, each hop {from, to, type, direction} plus its "
           "edge's provenance (provenance_cache[e] = (present, absent), or provenance_miss(e) on a miss). "
           "`graph` must be the graph walked, `ids` its node ids (over a LiveGraph the base's, and "
           "`tail_ids` the new slots'), `type_names` its edge type names.")
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
         double hop_decay, double min_share, std::int64_t max_paths, const std::optional<py::tuple>& render) {
        const cw::Visibility vis = resolve_visibility(g, visible);
        const std::optional<carray<std::int32_t>> no_delta_types;  // (a CSRGraph has no new slots)
        WalkArgs a{starts,         max_hops,          expand_types,     admit_types, node_type,
                   no_delta_types, expand_node_types, admit_node_types, max_edges,   max_candidates,
                   start_weights,  edge_weights,      hop_decay,        min_share,   max_paths};
        const cw::WalkParams wp = walk_params(a, g.num_nodes(), g.num_nodes(), g.num_edges());
        auto out = std::make_shared<WalkOutcome>();
        out->num_nodes = g.num_nodes();
        out->num_edges = g.num_edges();
        {
          const std::int32_t* s = starts.data();
          const std::int64_t ns = starts.shape(0);
          Nogil nogil;
          out->r = cw::typed_walk(g, vis, ns, s, wp);
        }
        render_in_call(*out, py::cast(g, py::return_value_policy::reference), render, 5);
        return out;
      },
      "graph"_a, "starts"_a, "max_hops"_a, "expand_types"_a, "admit_types"_a, "node_type"_a = py::none(),
      "expand_node_types"_a = py::none(), "admit_node_types"_a = py::none(), "max_edges"_a = 10000,
      "max_candidates"_a = 50, "visible"_a = py::none(), "start_weights"_a = py::none(),
      "edge_weights"_a = py::none(), "hop_decay"_a = 1.0, "min_share"_a = 0.5, "max_paths"_a = 0,
      "render"_a = py::none(), "Best-first, budget-fair bounded typed walk; returns a WalkResult.");

  m.def(
      "typed_walk_live",
      [](const LiveGraph& g, const carray<std::uint64_t>& pair_keys, const carray<std::int32_t>& pair_ptr,
         const carray<std::int32_t>& typedir, const std::optional<carray<double>>& weights,
         const carray<std::int32_t>& starts, std::int32_t max_hops, const carray<bool>& expand_types,
         const carray<bool>& admit_types, const std::optional<carray<std::int32_t>>& node_type,
         const std::optional<carray<std::int32_t>>& delta_node_type,
         const std::optional<carray<bool>>& expand_node_types, const std::optional<carray<bool>>& admit_node_types,
         std::int64_t max_edges, std::int64_t max_candidates, py::handle visible,
         const std::optional<carray<double>>& start_weights, const std::optional<carray<double>>& edge_weights,
         double hop_decay, double min_share, std::int64_t max_paths, const std::optional<py::tuple>& render) {
        const cw::GraphRef ref = g.ref();
        const cw::Visibility vis = live_visibility(g, visible);
        const cw::CSRGraph& base = *g.base;
        check_1d(pair_keys, "pair_keys");
        check_1d(pair_ptr, "pair_ptr", pair_keys.shape(0) + 1);
        check_1d(typedir, "typedir");
        if (pair_ptr.data()[pair_keys.shape(0)] != typedir.shape(0))
          throw py::value_error("pair_ptr must end at the number of listed edges (typedir's length)");
        if (weights) check_1d(*weights, "weights", typedir.shape(0));
        if ((node_type.has_value() != delta_node_type.has_value()))
          throw py::value_error("node_type (the base's) and delta_node_type (the new slots') go together");
        WalkArgs a{starts,          max_hops,          expand_types,     admit_types, node_type,
                   delta_node_type, expand_node_types, admit_node_types, max_edges,   max_candidates,
                   start_weights,   edge_weights,      hop_decay,        min_share,   max_paths};
        const cw::WalkParams wp = walk_params(a, ref.num_nodes(), base.num_nodes(), base.num_edges());
        cw::WalkDeltaEdges de;
        de.num_pairs = pair_keys.shape(0);
        de.pair_keys = pair_keys.data();
        de.pair_ptr = pair_ptr.data();
        de.typedir = typedir.data();
        de.weights = weights ? weights->data() : nullptr;
        de.first_id = base.num_edges();
        auto out = std::make_shared<WalkOutcome>();
        out->num_nodes = ref.num_nodes();
        out->num_edges = base.num_edges() + typedir.shape(0);
        out->live_base = g.base;
        out->live_delta = g.delta;
        out->delta_typedir_keep = typedir;  // read again by render_paths (a code out of range is refused there)
        out->delta_typedir = typedir.data();
        out->first_id = base.num_edges();
        {
          const std::int32_t* s = starts.data();
          const std::int64_t ns = starts.shape(0);
          Nogil nogil;
          out->r = cw::typed_walk(ref, de, vis, ns, s, wp);
        }
        render_in_call(*out, py::cast(g, py::return_value_policy::reference), render, 6);
        return out;
      },
      "graph"_a, "pair_keys"_a, "pair_ptr"_a, "typedir"_a, "weights"_a, "starts"_a, "max_hops"_a, "expand_types"_a,
      "admit_types"_a, "node_type"_a = py::none(), "delta_node_type"_a = py::none(),
      "expand_node_types"_a = py::none(), "admit_node_types"_a = py::none(), "max_edges"_a = 10000,
      "max_candidates"_a = 50, "visible"_a = py::none(), "start_weights"_a = py::none(),
      "edge_weights"_a = py::none(), "hop_decay"_a = 1.0, "min_share"_a = 0.5, "max_paths"_a = 0,
      "render"_a = py::none(),
      "typed_walk over a LiveGraph (base plus delta; visible: its LiveVisibility or None): the pairs the "
      "delta added or changed listed with all their edges (pair_keys (lo << 32) | hi ascending, pair_ptr, "
      "typedir, weights; edge first_id + i = base num_edges + i), node types as the base's codes plus the "
      "new slots' (delta_node_type), edge_weights the base's; the walk, paths and order of typed_walk "
      "over a fresh build, nodes as slots. render: (ids, tail_ids, type_names, provenance_cache, "
      "provenance_miss, except_nodes).");
}
