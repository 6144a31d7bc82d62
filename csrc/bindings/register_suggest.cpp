// Resource allocation for one node and for many across threads; read-only result classes.
#include "prelude.hpp"

#include "conceptwalk/batch.hpp"
#include "conceptwalk/suggest.hpp"

namespace {

// The fields of the Suggestion class, in its constructor's order.
constexpr int kNumFields = 8;
constexpr const char* kSuggestionFields[kNumFields] = {"id",     "type",          "title", "score",
                                                       "shared", "shared_titles", "hops",  "path"};

// The data descriptors (slots) of a Suggestion class, looked up once per class: an object is
// made by object.__new__ and its six fields stored through them, which is what the dataclass's
// generated __init__ does, without a Python frame per object.
struct SuggestionFields {
  PyObject* cls = nullptr;  // strong references, kept for the process (one class in practice)
  PyObject* desc[kNumFields] = {};
};

const SuggestionFields& suggestion_fields(py::handle cls) {
  static SuggestionFields cache;  // read and written with the GIL held
  if (cache.cls == cls.ptr()) return cache;
  if (!PyType_Check(cls.ptr())) throw py::type_error("cls must be a class");
  py::object desc[kNumFields];
  for (int i = 0; i < kNumFields; ++i) {
    desc[i] = py::reinterpret_steal<py::object>(PyObject_GetAttrString(cls.ptr(), kSuggestionFields[i]));
    if (!desc[i]) throw py::error_already_set();
    if (Py_TYPE(desc[i].ptr())->tp_descr_set == nullptr)
      throw py::type_error(std::string("cls.") + kSuggestionFields[i] + " is not a data descriptor (a slot)");
  }
  for (int i = 0; i < kNumFields && cache.cls; ++i) Py_XDECREF(cache.desc[i]);
  Py_XDECREF(cache.cls);
  for (int i = 0; i < kNumFields; ++i) cache.desc[i] = desc[i].release().ptr();
  cache.cls = py::reinterpret_borrow<py::object>(cls).release().ptr();
  return cache;
}

// Python float / int objects of core values.
inline py::object py_float(double x) { return py::reinterpret_steal<py::object>(PyFloat_FromDouble(x)); }

// Suggestions lo..hi of a core result R (RAResult or RABatch: targets, scores, and the shared
// neighbours of target j at shared[shared_ptr[j]:shared_ptr[j + 1]]) as `cls` objects, with
// ids, titles and type names read from the graph's node columns; a PPR result (path_ptr set)
// also gives each its hops and its chain of ids (None for RA). The one decoder of both
// faces (LinkGraph.resource_allocation, link_suggest) and of their batches.
template <class R>
py::list decode_suggestions(py::handle cls, py::handle ids, py::handle titles, py::handle names, py::handle codes,
                            const R& r, std::int64_t lo, std::int64_t hi) {
  const auto n = static_cast<std::int64_t>(r.targets.size());
  if (lo < 0 || hi < lo || hi > n || r.scores.size() != r.targets.size() ||
      r.shared_ptr.size() != r.targets.size() + 1)
    throw py::value_error("decode_suggestions: lo, hi must satisfy 0 <= lo <= hi <= len(targets)");
  const bool ppr = !r.path_ptr.empty();
  if (ppr && (r.path_ptr.size() != r.targets.size() + 1 || r.hops.size() != r.targets.size()))
    throw py::value_error("decode_suggestions: hops or path_ptr do not match targets");
  const SuggestionFields& f = suggestion_fields(cls);
  auto* type = reinterpret_cast<PyTypeObject*>(f.cls);
  py::tuple no_args(0);
  py::list out(static_cast<std::size_t>(hi - lo));
  for (std::int64_t i = lo; i < hi; ++i) {
    const cw::node_t t = r.targets[static_cast<std::size_t>(i)];
    const std::int64_t a = r.shared_ptr[static_cast<std::size_t>(i)],
                       b = r.shared_ptr[static_cast<std::size_t>(i) + 1];
    if (a < 0 || b < a || b > static_cast<std::int64_t>(r.shared.size()))
      throw py::value_error("decode_suggestions: shared_ptr out of range");
    py::tuple sh(static_cast<std::size_t>(b - a)), sht(static_cast<std::size_t>(b - a));
    for (std::int64_t j = a; j < b; ++j) {
      const cw::node_t z = r.shared[static_cast<std::size_t>(j)];
      PyTuple_SET_ITEM(sh.ptr(), j - a, seq_item(ids, z).release().ptr());
      PyTuple_SET_ITEM(sht.ptr(), j - a, seq_item(titles, z).release().ptr());
    }
    py::object code = seq_item(codes, t);
    const Py_ssize_t c = PyLong_AsSsize_t(code.ptr());
    if (c == -1 && PyErr_Occurred()) throw py::error_already_set();
    if (c < 0) throw py::value_error("decode_suggestions: negative node type code");
    py::object hops = py::none(), path = py::none();
    if (ppr) {
      hops = py::int_(r.hops[static_cast<std::size_t>(i)]);
      const std::int64_t pa = r.path_ptr[static_cast<std::size_t>(i)],
                         pb = r.path_ptr[static_cast<std::size_t>(i) + 1];
      if (pa < 0 || pb < pa || pb > static_cast<std::int64_t>(r.path.size()))
        throw py::value_error("decode_suggestions: path_ptr out of range");
      py::tuple pt(static_cast<std::size_t>(pb - pa));
      for (std::int64_t j = pa; j < pb; ++j)
        PyTuple_SET_ITEM(pt.ptr(), j - pa, seq_item(ids, r.path[static_cast<std::size_t>(j)]).release().ptr());
      path = std::move(pt);
    }
    py::object values[kNumFields] = {
        seq_item(ids, t), seq_item(names, c), seq_item(titles, t), py_float(r.scores[static_cast<std::size_t>(i)]),
        std::move(sh),    std::move(sht),     std::move(hops),     std::move(path)};
    PyObject* o = type->tp_new(type, no_args.ptr(), nullptr);
    if (o == nullptr) throw py::error_already_set();
    py::object obj = py::reinterpret_steal<py::object>(o);
    for (int k = 0; k < kNumFields; ++k) {
      if (!values[k]) throw py::error_already_set();
      if (Py_TYPE(f.desc[k])->tp_descr_set(f.desc[k], o, values[k].ptr()) != 0) throw py::error_already_set();
    }
    PyList_SET_ITEM(out.ptr(), i - lo, obj.release().ptr());
  }
  return out;
}

}  // namespace

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
      .def_property_readonly("hops", vector_property(&cw::RAResult::hops))
      .def_property_readonly("path_ptr", vector_property(&cw::RAResult::path_ptr))
      .def_property_readonly("path", vector_property(&cw::RAResult::path))
      .def_readonly("eps", &cw::RAResult::eps)
      .def_readonly("fill_spent", &cw::RAResult::fill_spent)
      .def_readonly("truncated", &cw::RAResult::truncated)
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
      .def_property_readonly("candidates", vector_property(&cw::RABatch::candidates))
      .def_property_readonly("hops", vector_property(&cw::RABatch::hops))
      .def_property_readonly("path_ptr", vector_property(&cw::RABatch::path_ptr))
      .def_property_readonly("path", vector_property(&cw::RABatch::path))
      .def_property_readonly("eps", vector_property(&cw::RABatch::eps))
      .def_property_readonly("fill_spent", vector_property(&cw::RABatch::fill_spent))
      .def_property_readonly("truncated", vector_property(&cw::RABatch::truncated));

  m.def(
      "resource_allocation",
      [](const cw::CSRGraph& g, std::int64_t node, std::int64_t min_shared, std::int64_t k, py::handle visible) {
        const cw::node_t a = node_scalar(node, g, "node");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        Nogil nogil;
        return cw::resource_allocation(g, vis, a, min_shared, k);
      },
      "graph"_a, "node"_a, "min_shared"_a = 2, "k"_a = 0, "visible"_a = py::none(),
      "Resource allocation for one node (k <= 0: all candidates); returns an RAResult.");

  m.def(
      "resource_allocation",
      [](const LiveGraph& g, std::int64_t node, std::int64_t min_shared, std::int64_t k, py::handle visible) {
        const cw::GraphRef ref = g.ref();
        if (node < 0 || node >= ref.num_nodes())
          throw cw::NodeOutOfRange("node index " + std::to_string(node) + " outside [0, " +
                                   std::to_string(ref.num_nodes()) + ")");
        const cw::Visibility vis = live_visibility(g, visible);
        Nogil nogil;
        return cw::resource_allocation(ref, vis, static_cast<cw::node_t>(node), min_shared, k);
      },
      "graph"_a, "node"_a, "min_shared"_a = 2, "k"_a = 0, "visible"_a = py::none(),
      "resource_allocation over a LiveGraph (base plus delta; visible: its LiveVisibility or None): "
      "equals the same query on a fresh build, ties by id.");

  m.def(
      "resource_allocation_id",
      [](const cw::CSRGraph& g, py::handle index, py::handle node, std::int64_t min_shared, std::int64_t k,
         py::handle visible) -> py::object {
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const cw::node_t a = lookup_visible_id(index, node, g, vis);
        if (a < 0) return py::none();
        cw::RAResult r;
        {
          Nogil nogil;
          r = cw::resource_allocation(g, vis, a, min_shared, k);
        }
        return py::cast(std::move(r));
      },
      "graph"_a, "index"_a, "node"_a, "min_shared"_a = 2, "k"_a = 0, "visible"_a = py::none(),
      "resource_allocation by node id, resolved through `index` (id -> node index) in the same call: "
      "None when the id is not an exact str of a node visible under `visible` (the caller raises), else "
      "an RAResult.");

  m.def(
      "ppr_suggest",
      [](const cw::CSRGraph& g, std::int64_t node, double restart, double eps, std::int64_t k,
         py::handle visible) {
        const cw::node_t a = node_scalar(node, g, "node");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        cw::PPRParams p;
        p.restart = restart;
        p.eps = eps;
        Nogil nogil;
        return cw::ppr_suggest(g, vis, a, p, k);
      },
      "graph"_a, "node"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0, "visible"_a = py::none(),
      "Rooted PageRank suggestions for one node (k <= 0: all candidates); returns an RAResult with "
      "hops, path_ptr, path, eps and fill_spent set.");

  m.def(
      "ppr_suggest_id",
      [](const cw::CSRGraph& g, py::handle index, py::handle node, double restart, double eps, std::int64_t k,
         py::handle visible) -> py::object {
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const cw::node_t a = lookup_visible_id(index, node, g, vis);
        if (a < 0) return py::none();
        cw::PPRParams p;
        p.restart = restart;
        p.eps = eps;
        cw::RAResult r;
        {
          Nogil nogil;
          r = cw::ppr_suggest(g, vis, a, p, k);
        }
        return py::cast(std::move(r));
      },
      "graph"_a, "index"_a, "node"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0, "visible"_a = py::none(),
      "ppr_suggest by node id, resolved through `index` in the same call: None when the id is not an "
      "exact str of a node visible under `visible` (the caller raises), else an RAResult.");

  m.def(
      "ppr_suggest_batch",
      [](const cw::CSRGraph& g, py::handle nodes_in, double restart, double eps, std::int64_t k, int threads,
         py::handle visible) {
        const carray<std::int32_t> nodes = node_array(nodes_in, g, "nodes");
        check_1d(nodes, "nodes");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const std::int32_t* a = nodes.data();
        const std::int64_t q = nodes.shape(0);
        cw::PPRParams p;
        p.restart = restart;
        p.eps = eps;
        Nogil nogil;
        return cw::ppr_suggest_batch(g, vis, q, a, p, k, threads);
      },
      "graph"_a, "nodes"_a, "restart"_a = 0.25, "eps"_a = 1e-4, "k"_a = 0, "threads"_a = 1,
      "visible"_a = py::none(), "Rooted PageRank suggestions for many nodes across threads; returns an RABatch.");

  m.def(
      "decode_suggestions",
      [](py::handle cls, py::handle ids, py::handle titles, py::handle names, py::handle codes, py::handle result,
         std::int64_t lo, std::int64_t hi) -> py::list {
        if (py::isinstance<cw::RAResult>(result))
          return decode_suggestions(cls, ids, titles, names, codes, result.cast<const cw::RAResult&>(), lo, hi);
        if (py::isinstance<cw::RABatch>(result))
          return decode_suggestions(cls, ids, titles, names, codes, result.cast<const cw::RABatch&>(), lo, hi);
        throw py::type_error("result must be an RAResult or an RABatch");
      },
      "cls"_a, "ids"_a, "titles"_a, "names"_a, "codes"_a, "result"_a, "lo"_a, "hi"_a,
      "Suggestions lo..hi of an RAResult or RABatch as `cls` objects (fields id, type, title, score, "
      "shared, shared_titles set through its slots), with ids[t], names[codes[t]], titles[t].");

  m.def(
      "suggest_batch",
      [](const cw::CSRGraph& g, py::handle nodes_in, std::int64_t min_shared, std::int64_t k, int threads,
         py::handle visible) {
        const carray<std::int32_t> nodes = node_array(nodes_in, g, "nodes");
        check_1d(nodes, "nodes");
        const cw::Visibility vis = resolve_visibility(g, mask_arg(visible));
        const std::int32_t* a = nodes.data();
        const std::int64_t q = nodes.shape(0);
        Nogil nogil;
        return cw::resource_allocation_batch(g, vis, q, a, min_shared, k, threads);
      },
      "graph"_a, "nodes"_a, "min_shared"_a = 2, "k"_a = 0, "threads"_a = 1, "visible"_a = py::none(),
      "Resource allocation for many nodes across threads; returns an RABatch.");
}
